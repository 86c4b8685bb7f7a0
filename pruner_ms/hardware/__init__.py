"""Hardware descriptions the symbolic analyzer reasons about (figures live in ``configs/``)."""
from .cpu import CPUSpec, host_cpu_spec, load_cpu_spec
from .gpu import GPUSpec, UnknownGPUError, gpu_spec_for_target, load_gpu_spec
from .paths import configs_dir

__all__ = [
    "CPUSpec",
    "GPUSpec",
    "UnknownGPUError",
    "configs_dir",
    "gpu_spec_for_target",
    "host_cpu_spec",
    "load_cpu_spec",
    "load_gpu_spec",
]
