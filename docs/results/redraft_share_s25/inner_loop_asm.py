"""Compile the best recorded program of each run given for its record's target (``llvm -mcpu=znver4``
for this session's runs) and count the instructions of its assembly (loads, broadcasts, lane inserts,
FMAs); with ``--asm-dir DIR`` each listing is written there as ``<strategy>_<seed>.s``.

Usage: PYTHONPATH=. python inner_loop_asm.py RUN (WORK_DIR/<workload>/<strategy>/<seed> or best_records/NAME) ... [--asm-dir DIR]
"""
import argparse
import collections
import os
import re

import tvm

from pruner_ms.integration.measured_latency import record_seconds
from records import best_records, replayed

parser = argparse.ArgumentParser()
parser.add_argument("runs", nargs="+")
parser.add_argument("--asm-dir")
args = parser.parse_args()
for run in args.runs:
    rec = best_records(run)[0]
    asm = tvm.compile(replayed(rec).mod, target=rec.target).mod.inspect_source("asm")
    ops = collections.Counter()
    for line in asm.splitlines():
        t = line.strip().split()
        if t and not t[0].startswith((".", "#")) and not t[0].endswith(":"):
            ops[t[0]] += 1
    print("==", run[-40:], round(record_seconds(rec) * 1e3, 3))
    print(dict(ops.most_common(25)))
    print("zmm", asm.count("zmm"), "ymm", asm.count("ymm"), "rsp spill-ish", len(re.findall(r"\(%rsp\)", asm)),
          "broadcast", asm.count("{1to16}"), asm.count("vbroadcastss"))
    if args.asm_dir:
        name = "_".join(os.path.normpath(run).split(os.sep)[-2:]).replace("+", "_")
        with open(os.path.join(args.asm_dir, f"{name}.s"), "w") as f:
            f.write(asm)
