"""A wheel installs like any wheel: built here, installed into a fresh virtual environment, run from
a folder outside the repository, it finds its hardware figures and suites (package data) and tunes."""
from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_the_wheel_installs_and_tunes_outside_the_repository(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(REPO),
                    "-w", str(wheels)], check=True, cwd=tmp_path, timeout=300)
    (wheel,) = wheels.glob("pruner_ms-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "pruner_ms/configs/cpu/znver4.json" in names and "pruner_ms/configs/suites/cpu.json" in names
    assert not any(n.startswith(("tests/", "configs/")) for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # the dependencies (tvm, torch, xgboost, ...) come from this environment's site-packages; a .pth
    # there is not processed from a path added this way, so this environment's editable pruner_ms is not seen
    Path(site, "deps_from_test_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=300)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PRUNER_MS_CONFIGS")}
    where = subprocess.run([str(py), "-c", "import pruner_ms; from pruner_ms.hardware.paths import configs_dir; "
                            "print(pruner_ms.__file__); print(configs_dir())"],
                           check=True, capture_output=True, text=True, cwd=outside, env=env, timeout=300).stdout.split()
    assert all(str(venv) in line for line in where[-2:]), where
    run = subprocess.run([str(venv / "bin" / "pruner-ms"), "tune", "--workload", "gemm-64", "--trials", "8",
                          "--trials-per-iter", "8", "--work-dir", str(outside / "wd"), "--no-progress"],
                         capture_output=True, text=True, cwd=outside, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "numpy check: ok" in run.stdout
