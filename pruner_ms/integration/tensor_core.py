"""MetaSchedule's CUDA tensor-core design space: the space itself, the check that a workload can use
tensor cores at all, and sampling concrete candidates from a space (for build and host-time checks).
"""
from __future__ import annotations

import os

from .workarounds import import_all_tensor_intrinsics, normalize_target


# -- tensor-core design space ------------------------------------------------------------------------
TENSOR_CORE_SPACE = "cuda-tensorcore"


def tensor_core_space():
    """MetaSchedule's tensor-core design space: the ``cuda-tensorcore`` rules, postprocs and mutators.

    Imports ``tvm.s_tir.tensor_intrin`` (4-9 s once per process, :func:`import_all_tensor_intrinsics`),
    without which the rules fail with "TensorIntrin 'wmma_fill_16x16x16_f32' is not registered".
    """
    import_all_tensor_intrinsics()
    from tvm.s_tir.meta_schedule.space_generator import PostOrderApply

    return PostOrderApply(sch_rules=TENSOR_CORE_SPACE, postprocs=TENSOR_CORE_SPACE, mutator_probs=TENSOR_CORE_SPACE)


class NotTensorizableError(ValueError):
    """A tensor-core design space was asked for a workload MetaSchedule cannot map onto tensor cores."""


def check_tensorizable(mod, target) -> None:
    """Raise :class:`NotTensorizableError` unless some sketch of ``mod`` uses tensor-core intrinsics.

    Otherwise MetaSchedule silently tunes CUDA-core (SIMT) sketches from the same space, and the user
    believes tensor cores were tuned.
    """
    from tvm.s_tir import meta_schedule as ms

    target = normalize_target(target)
    ctx = ms.TuneContext(mod, target=target, space_generator=tensor_core_space(), num_threads=1)
    spaces = ctx.generate_design_space()
    if not any("meta_schedule.auto_tensorize" in str(s.trace) for s in spaces):
        raise NotTensorizableError(
            "the workload cannot use tensor cores: none of the cuda-tensorcore sketches MetaSchedule builds "
            f"for it ({len(spaces)}) tensorizes (the wmma/mma intrinsics need a matmul-like block with fp16, "
            "bf16 or int8 inputs). Cast the inputs (e.g. float16 with float32 accumulation), or tune it on "
            "the plain CUDA space (space='post-order-apply', the default)."
        )


# -- candidates -----------------------------------------------------------------------------------
def sample_candidates(mod, target, n: int, *, space: str = "cuda-tensorcore", seed: int = 0,
                      population_size: int = 64, genetic_num_iters: int = 1) -> list:
    """Sample ``n`` concrete candidates of a MetaSchedule design space (random cost model).

    Imports ``tvm.s_tir.tensor_intrin`` (30-50 s once per process), which the ``cuda-tensorcore``
    rules need to exist.

    Parameters
    ----------
    mod : tvm.IRModule or tvm.tirx.PrimFunc
        The workload.
    target : tvm.target.Target, dict or str
        A CUDA target with a host, e.g. ``Target("nvidia/nvidia-a100", host={"kind": "llvm", "num-cores": 2})``.
    n : int
        Candidates wanted (fewer only if the design space has too few distinct ones).
    space : str
        Rule/postproc/mutator set of ``PostOrderApply`` (``"cuda-tensorcore"``, ``"cuda"``, ...).
    seed : int
        Random state of the tune context.
    population_size, genetic_num_iters : int
        ``EvolutionarySearch`` settings; small keeps sampling to seconds.

    Returns
    -------
    list of MeasureCandidate
        ``cand.sch.mod`` is the scheduled module to build.
    """
    import tvm

    import_all_tensor_intrinsics()  # registers the intrinsics the cuda-tensorcore rules name
    from tvm.s_tir import meta_schedule as ms

    if isinstance(mod, tvm.tirx.PrimFunc):
        mod = tvm.IRModule({"main": mod})
    target = normalize_target(target)
    cores = int(target.host.attrs.get("num-cores", 0) or 0) if target.host is not None else 0
    ask = n + max(2, n // 8)  # a batch can come back a candidate or two short (duplicates dropped)
    ctx = ms.TuneContext(
        mod, target=target,
        space_generator=ms.space_generator.PostOrderApply(sch_rules=space, postprocs=space, mutator_probs=space),
        search_strategy=ms.search_strategy.EvolutionarySearch(
            population_size=max(population_size, ask), init_min_unmeasured=ask,
            genetic_num_iters=genetic_num_iters),
        num_threads=cores or os.cpu_count() or 1,
        rand_state=seed,
    )
    spaces = ctx.generate_design_space()
    ctx.pre_tuning(ask, ask, spaces, ms.database.MemoryDatabase(), ms.cost_model.RandomModel())
    cands = ctx.generate_measure_candidates() or []
    ctx.post_tuning()
    return list(cands)[:n]
