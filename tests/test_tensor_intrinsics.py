"""A CPU run registers the CPU tensor intrinsics only (not CUDA's, whose import is 30-50 s) and leaves
``tvm.s_tir.tensor_intrin`` importable in full afterwards. Runs in a fresh interpreter: this one may
have imported the whole package already."""
from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import sys
    import tvm
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir import TensorIntrin
    from pruner_ms import normalize_target
    from pruner_ms.bench.workloads import gemm
    from pruner_ms.integration.workarounds import tensor_intrinsics_for

    # AVX-512 VNNI: MetaSchedule's "vnni" rule kind, which names the x86 dot-product intrinsic
    target = normalize_target({"kind": "llvm", "mcpu": "sapphirerapids", "num-cores": 2})
    with tensor_intrinsics_for(target):
        ctx = ms.TuneContext(tvm.IRModule({"main": gemm(64, 64, 64).func}), target=target,
                             space_generator="post-order-apply", search_strategy="replay-trace", num_threads=1)
        spaces = ctx.space_generator.generate_design_space(ctx.mod)
        assert spaces, "no design space"
        assert TensorIntrin.get("dot_16x4_vnni") is not None
        assert "tvm.s_tir.tensor_intrin.cuda" not in sys.modules, "CUDA's intrinsics were imported"
        with tensor_intrinsics_for(target):  # nested: nothing more
            assert "tvm.s_tir.tensor_intrin.cuda" not in sys.modules
    # the stand-in package is gone: the next import runs the real __init__ (reusing the CPU modules)
    assert "tvm.s_tir.tensor_intrin" not in sys.modules
    assert not hasattr(tvm.s_tir, "tensor_intrin")
    assert "tvm.s_tir.tensor_intrin.x86" in sys.modules
    print("ok")
""")


def test_a_cpu_target_registers_only_the_cpu_intrinsics_and_restores_the_package():
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout[-2000:] + run.stderr[-3000:]


def test_quick_stack_inspection_answers_as_the_scan_does_and_leaves_the_cache_as_it_was(tmp_path, monkeypatch):
    """Frames of the import machinery have no source file: inside the block ``inspect.getmodule`` answers
    them from its cache (no module), as its scan of ``sys.modules`` does outside it."""
    import importlib
    import inspect

    from pruner_ms.integration.workarounds import quick_stack_inspection

    # a module that, like a tensor-intrinsic module, inspects the stack while it is imported
    (tmp_path / "stack_at_import.py").write_text(
        "import inspect\nSTACK = [(f.filename, getattr(inspect.getmodule(f.frame, f.filename), '__name__', None))\n"
        "         for f in inspect.stack()]\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def stack_at_import():
        sys.modules.pop("stack_at_import", None)
        return importlib.import_module("stack_at_import").STACK

    before = dict(inspect.modulesbyfile)
    with quick_stack_inspection():
        assert "<frozen importlib._bootstrap>" in inspect.modulesbyfile
        quick = stack_at_import()
    assert not any(name.startswith("<") and name not in before for name in inspect.modulesbyfile), \
        "the block's entries outlived it"
    scanned = stack_at_import()
    assert [f for f, _ in quick] == [f for f, _ in scanned]
    assert any(f.startswith("<frozen importlib") for f, _ in quick), "no import-machinery frame on the stack"
    assert [m for _, m in quick] == [m for _, m in scanned]
    sys.modules.pop("stack_at_import", None)
