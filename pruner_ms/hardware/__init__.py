"""Hardware descriptions the symbolic analyzer reasons about (figures live in ``configs/``)."""
from .calibration import MemoryCurve, calibrated_spec
from .cpu import (
    CPUSpec,
    HostFeatures,
    IsaFacts,
    detect_host_features,
    host_cpu_spec,
    isa_from_flags,
    load_cpu_spec,
    select_cpu_family,
)
from .gpu import GPUSpec, UnknownGPUError, gpu_spec_for_target, load_gpu_spec
from .paths import config_files, configs_dir

__all__ = [
    "CPUSpec",
    "GPUSpec",
    "MemoryCurve",
    "HostFeatures",
    "IsaFacts",
    "UnknownGPUError",
    "calibrated_spec",
    "config_files",
    "configs_dir",
    "detect_host_features",
    "gpu_spec_for_target",
    "host_cpu_spec",
    "isa_from_flags",
    "load_cpu_spec",
    "load_gpu_spec",
    "select_cpu_family",
]
