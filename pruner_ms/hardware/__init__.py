"""Hardware descriptions the symbolic analyzer reasons about (figures live in ``configs/``)."""
from .cpu import CPUSpec, host_cpu_spec, load_cpu_spec
from .paths import configs_dir

__all__ = ["CPUSpec", "configs_dir", "host_cpu_spec", "load_cpu_spec"]
