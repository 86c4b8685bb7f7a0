"""Seconds to import all of TVM's tensor intrinsics (``tvm.s_tir.tensor_intrin``) in a fresh process,
with TVM's own import and under ``quick_stack_inspection``, in turns; torch imported first in both
(what ``import tvm`` does by itself).

    PYTHONPATH=. .venv/bin/python docs/results/startup_s33/intrinsics.py [ROUNDS]
"""
import subprocess
import sys

CHILD = """
import sys, time
import tvm
from tvm.s_tir import meta_schedule
from pruner_ms.integration.workarounds import quick_stack_inspection
import contextlib
block = quick_stack_inspection() if sys.argv[1] == "quick" else contextlib.nullcontext()
t = time.perf_counter()
with block:
    import tvm.s_tir.tensor_intrin
print(f"{time.perf_counter() - t:.2f} {len(sys.modules)}")
"""


def main(rounds: int = 3) -> None:
    times = {"tvm": [], "quick": []}
    for i in range(rounds):
        for mode in (("tvm", "quick") if i % 2 == 0 else ("quick", "tvm")):
            out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True)
            seconds, modules = out.stdout.split()
            times[mode].append(float(seconds))
            print(f"round {i} {mode:5s} {seconds} s ({modules} modules loaded)", flush=True)
    for mode, ts in times.items():
        print(f"{mode}: {min(ts):.2f}-{max(ts):.2f} s")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
