"""The memory calibration: figures derived from a measured curve, the probe on this machine, its cache."""
from __future__ import annotations

import json

import pytest

from pruner_ms.hardware import calibration
from pruner_ms.hardware.calibration import MemoryCurve, apply_memory_curve, calibrated_spec

from .conftest import pruner_ms_log

MIB = 1 << 20


def test_figures_of_a_curve_with_an_l3_plateau():
    # as measured on a 2-vCPU VM: ~29 GB/s up to 64 MiB on one core and on two, ~15 GB/s beyond
    curve = MemoryCurve((16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB, 256 * MIB), (29.3, 29.4, 29.3, 18.1, 15.5),
                        (28.7, 29.0, 27.1, 15.1, 14.7), cores=2)
    fig = curve.figures()
    assert fig["l3_bytes"] == 64 * MIB
    assert fig["l3_gb_per_s"] == 29.0 and fig["l3_gb_per_s_one_core"] == 29.4
    assert fig["dram_gb_per_s"] == 14.7 and fig["dram_gb_per_s_one_core"] == 15.5


def test_a_curve_without_plateau_keeps_the_detected_l3(host_spec):
    flat = MemoryCurve((16 * MIB, 32 * MIB, 64 * MIB), (12.0, 11.8, 11.9), (20.0, 19.5, 19.8), cores=2)
    assert flat.figures()["l3_bytes"] is None
    spec = apply_memory_curve(host_spec, flat)
    assert spec.l3_bytes == host_spec.l3_bytes and spec.dram_gb_per_s == 19.8
    assert "memory curve" in spec.sources["dram_gb_per_s"]


def test_bandwidth_of_the_calibrated_spec_saturates(host_spec):
    curve = MemoryCurve((16 * MIB, 256 * MIB), (29.0, 15.0), (29.0, 15.0), cores=2)
    spec = apply_memory_curve(host_spec, curve)
    # one core reaches the whole L3 and DRAM share: a second adds nothing (as measured)
    assert spec.l3_bandwidth(1) == pytest.approx(29e9) and spec.l3_bandwidth(2) == pytest.approx(29e9)
    assert spec.dram_bandwidth(1) == pytest.approx(15e9) and spec.dram_bandwidth(2) == pytest.approx(15e9)


def test_probe_on_this_machine_is_measured_once_and_cached(host_spec, tmp_path, monkeypatch):
    spec = calibrated_spec(host_spec, cache_dir=tmp_path)
    files = list(tmp_path.glob("memory-*.json"))
    assert len(files) == 1
    curve = json.loads(files[0].read_text())
    assert all(0.5 < g < 5000 for g in curve["one_core_gb_per_s"] + curve["all_cores_gb_per_s"]), curve
    assert spec.l3_bytes >= spec.l2_bytes and spec.dram_gb_per_s > 0
    assert "warm-read probe" in spec.sources["dram_gb_per_s"]

    def no_second_probe(*args, **kwargs):
        raise AssertionError("the cached curve should have been used")

    monkeypatch.setattr(calibration, "measure_memory_curve", no_second_probe)
    assert calibrated_spec(host_spec, cache_dir=tmp_path) == spec


def test_unreadable_cache_is_measured_again(host_spec, tmp_path):
    first = calibrated_spec(host_spec, cache_dir=tmp_path)
    (path,) = tmp_path.glob("memory-*.json")
    path.write_text("{not json")
    with pruner_ms_log() as seen:
        again = calibrated_spec(host_spec, cache_dir=tmp_path)
    assert any("unreadable memory calibration" in m for m in seen)
    assert again.l3_bytes > 0 and json.loads(path.read_text())["cores"] == first.cores


def test_calibration_can_be_turned_off(host_spec, tmp_path, monkeypatch):
    monkeypatch.setenv("PRUNER_MS_CALIBRATE", "0")
    assert calibrated_spec(host_spec, cache_dir=tmp_path) is host_spec
    assert not list(tmp_path.iterdir())
