#!/usr/bin/env python
"""Re-measure the best record of a tuning work_dir several times: the measurement noise floor.

    python scripts/remeasure.py WORK_DIR --workload gemm-512 --times 10
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main(argv=None) -> int:
    import numpy as np
    import tvm
    from tvm.s_tir import meta_schedule as ms

    from pruner_ms.bench.workloads import WORKLOADS, get_workload
    from pruner_ms.hardware import host_cpu_spec
    from pruner_ms.integration.resume import RECORD_FILE

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("work_dir")
    p.add_argument("--workload", default="gemm-512", help=", ".join(WORKLOADS))
    p.add_argument("--times", type=int, default=10)
    a = p.parse_args(argv)
    if not os.path.isfile(os.path.join(a.work_dir, RECORD_FILE)):
        p.error(f"{a.work_dir} holds no MetaSchedule database ({RECORD_FILE})")
    wl = get_workload(a.workload)
    target = tvm.target.Target(host_cpu_spec().target())
    sch = ms.tir_integration.compile_tir(ms.database.JSONDatabase(work_dir=a.work_dir), wl.func, target)
    if sch is None:
        p.error(f"no valid record for {wl.name} in {a.work_dir}")
    ex = tvm.compile(sch.mod, target=target)
    args = [tvm.runtime.tensor(x) for x in wl.make_inputs(np.random.default_rng(0))]
    args.append(tvm.runtime.empty(wl.output_shape, wl.output_dtype))
    # the LocalRunner's default evaluator settings, so the spread matches what tuning sees
    ev = ex.mod.time_evaluator("main", tvm.cpu(), number=3, repeat=1, min_repeat_ms=100)
    xs = np.array([ev(*args).mean for _ in range(a.times)]) * 1e3
    print(f"{a.times} re-measurements (ms): {np.round(xs, 3).tolist()}")
    print(f"spread (max-min)/min = {(xs.max() - xs.min()) / xs.min() * 100:.2f} %, std/mean = {xs.std() / xs.mean() * 100:.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
