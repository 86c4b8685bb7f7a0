"""Compile the best recorded program of each run given for llvm -mcpu=znver4 and count the instructions
of its assembly (loads, broadcasts, lane inserts, FMAs); writes each listing to /tmp/s25/.

Usage: PYTHONPATH=. python inner_loop_asm.py RUN (WORK_DIR/<workload>/<strategy>/<seed> or best_records/NAME) ...
"""
import sys, re, collections
import tvm
from tvm.s_tir import Schedule
from pruner_ms.integration.measured_latency import record_seconds
from records import best_records
target = tvm.target.Target({"kind": "llvm", "mcpu": "znver4", "num-cores": 2})
for run in sys.argv[1:]:
    rec = best_records(run)[0]
    sch = Schedule(rec.workload.mod)
    rec.trace.apply_to_schedule(sch, remove_postproc=False)
    lib = tvm.compile(sch.mod, target=target)
    asm = lib.mod.inspect_source("asm") if hasattr(lib, "mod") else lib.inspect_source("asm")
    ops = collections.Counter()
    for line in asm.splitlines():
        t = line.strip().split()
        if t and not t[0].startswith((".", "#")) and not t[0].endswith(":"):
            ops[t[0]] += 1
    print("==", run[-40:], round(record_seconds(rec)*1e3, 3))
    print({k: v for k, v in ops.most_common(25)})
    print("zmm", asm.count("zmm"), "ymm", asm.count("ymm"), "rsp spill-ish", len(re.findall(r"\(%rsp\)", asm)), "broadcast", asm.count("{1to16}"), asm.count("vbroadcastss"))
    open(f"/tmp/s25/{run.split('/')[-2].replace('+','_')}_{run.split('/')[-1]}.s", "w").write(asm)
