#!/bin/bash
# N processes with ASLR on, N with ASLR off (setarch -R), alternating
cd "$(dirname "$0")/../../.." && mkdir -p docs/results/remeasure_layout_s30/out
for i in $(seq 1 ${1:-6}); do
  for mode in on off; do
    pre=""; [ $mode = off ] && pre="setarch -R"
    $pre python -m pruner_ms.bench.remeasure docs/results/remeasure_layout_s30/out/spec.json docs/results/remeasure_layout_s30/out/out.json
    python3 -c "import json;d=json.load(open('docs/results/remeasure_layout_s30/out/out.json'));print('$mode', ' '.join('%s: %s' % (k, ' '.join('%.3f' % (x*1e3) for x in v)) for k, v in d.items()))"
  done
done
