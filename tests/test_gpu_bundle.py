"""The GPU-host bundle (scripts/gpu_bundle.py, scripts/gpu_run.sh): sizes, build, stage, unpack, messages.

Fast and offline: the bundle tests pack small stand-in wheels, not TVM's. The real bundle's checks
(sizes, a clean Python 3.12, an sm_90 build) are recorded in README.md, "GPU host run (issue 13)".
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load_bundle_module():
    spec = importlib.util.spec_from_file_location("gpu_bundle", ROOT / "scripts" / "gpu_bundle.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gpu_bundle"] = mod
    spec.loader.exec_module(mod)
    return mod


gb = _load_bundle_module()

# stand-ins for the four wheels: import name -> (distribution, version); each package has a __version__
FAKE = {"tvm": ("apache_tvm", "0.27.0.post1"), "tvm_ffi": ("apache_tvm_ffi", "0.1.14.post1"),
        "xgboost": ("xgboost_cpu", "3.2.0"), "tornado": ("tornado", "6.6.1")}


def fake_wheels(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for imp, (dist, ver) in FAKE.items():
        with zipfile.ZipFile(folder / f"{dist}-{ver}-py3-none-manylinux_2_28_x86_64.whl", "w") as zf:
            zf.writestr(f"{imp}/__init__.py", f"__version__ = {ver!r}\n")
            zf.writestr(f"{imp}/lib/payload.bin", os.urandom(3000))  # incompressible, so both parts hold data
            zf.writestr(f"{dist}-{ver}.dist-info/METADATA", f"Name: {dist}\nVersion: {ver}\n")
            if imp == "tvm":
                zf.writestr("tvm/web/package.json", "{}")
                zf.writestr("tvm/3rdparty/cutlass/include/cutlass.h", "// header")
                zf.writestr("tvm/__pycache__/base.cpython-312.pyc", b"\0")
    return folder


@pytest.fixture()
def bundle(tmp_path):
    out = tmp_path / "bundle"
    manifest = gb.build(fake_wheels(tmp_path / "wheels"), out, parts=2, repo_bytes=1000)
    return out, manifest


# -- sizes ----------------------------------------------------------------------------------------
def test_part_sizes_and_the_per_call_check():
    assert gb.part_sizes(10, 3) == [4, 3, 3] and sum(gb.part_sizes(69_000_001, 2)) == 69_000_001
    with pytest.raises(gb.BundleError, match="at least 1"):
        gb.part_sizes(10, 0)
    mib = gb.MIB
    rows = gb.call_rows({"p1": 34 * mib, "p2": 34 * mib}, repo_bytes=8 * mib, manifest_bytes=2000)
    assert [r["fits"] for r in rows] == [True, True] and rows[0]["call_bytes"] == 42 * mib + 2000
    gb.check_fit(rows)
    rows = gb.call_rows({"p1": 55 * mib, "p2": 14 * mib}, repo_bytes=8 * mib)  # 63 MiB: inside 64, not the margin
    assert [r["fits"] for r in rows] == [False, True]
    with pytest.raises(gb.BundleError, match=r"p1 \(63.0 MiB with the repository\).*--parts 3"):
        gb.check_fit(rows)
    assert "NO" in gb.format_rows(rows, 8 * mib)


def test_repo_travel_bytes_counts_tracked_and_untracked_not_ignored(tmp_path):
    run = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    (tmp_path / ".gitignore").write_text("/big/\n")
    (tmp_path / "tracked.txt").write_bytes(b"x" * 100)
    run("add", ".gitignore", "tracked.txt")
    (tmp_path / "untracked.txt").write_bytes(b"y" * 10)
    (tmp_path / "big").mkdir()
    (tmp_path / "big" / "part").write_bytes(b"z" * 5000)
    assert gb.repo_travel_bytes(tmp_path) == 100 + 10 + len("/big/\n")


def test_wheel_folder_must_hold_one_of_each(tmp_path):
    wheels = fake_wheels(tmp_path / "w")
    next(wheels.glob("tornado-*.whl")).unlink()
    with pytest.raises(gb.BundleError, match=r"missing \['tornado'\].*fetch_gpu_wheels.sh"):
        gb.find_wheels(wheels)


# -- build, stage, unpack -------------------------------------------------------------------------
def test_build_is_deterministic_and_strips(bundle, tmp_path):
    out, manifest = bundle
    assert [p["name"] for p in manifest["parts"]] == ["site.tar.xz.part1", "site.tar.xz.part2"]
    for p in manifest["parts"]:
        assert (out / p["name"]).stat().st_size == p["bytes"] and gb.sha256_file(out / p["name"]) == p["sha256"]
    assert (out / "SHA256SUMS").read_text().splitlines()[0] == f"{manifest['parts'][0]['sha256']}  site.tar.xz.part1"
    assert {w["import"]: w["version"] for w in manifest["wheels"]} == {k: v[1] for k, v in FAKE.items()}
    assert manifest["site"]["stripped_files"] == 3 and manifest["repo_bytes_at_build"] == 1000
    again = gb.build(tmp_path / "wheels", tmp_path / "again", parts=2, repo_bytes=1000)
    assert again["bundle_id"] == manifest["bundle_id"]  # same wheels, same bytes


def test_stage_then_unpack_with_part1_only_in_the_stage(bundle, tmp_path):
    out, manifest = bundle
    stage, site = tmp_path / "stage", tmp_path / "site"
    gb.stage(out, 1, stage)
    (out / "site.tar.xz.part1").unlink()  # the first call's copy in the tree is gone; the staged one is left
    gb.unpack(out, site, stage_dir=stage)
    assert (site / gb.STAMP).read_text().strip() == manifest["bundle_id"]
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".dist-info")) == \
        sorted([gb.STAMP, "tvm", "tvm_ffi", "xgboost", "tornado"])
    assert not (site / "tvm" / "web").exists() and not (site / "tvm" / "3rdparty").exists()
    assert not (site / "tvm" / "__pycache__").exists()
    before = (site / "tvm" / "__init__.py").stat().st_mtime_ns
    gb.unpack(out, site, stage_dir=stage)  # already there: not unpacked again
    assert (site / "tvm" / "__init__.py").stat().st_mtime_ns == before


def test_missing_or_foreign_parts_say_what_to_do(bundle, tmp_path):
    out, manifest = bundle
    (out / "site.tar.xz.part1").unlink()
    with pytest.raises(gb.BundleError, match=r"part 1 of 2 .* gone cold .*`scripts/gpu_run.sh stage 1` again"):
        gb.unpack(out, tmp_path / "site", stage_dir=tmp_path / "empty")
    (out / "site.tar.xz.part1").write_bytes(b"not the part")
    with pytest.raises(gb.BundleError, match="different builds"):
        gb.unpack(out, tmp_path / "site")
    (out / "site.tar.xz.part2").unlink()
    with pytest.raises(gb.BundleError, match=r"part 2 of 2 .* carries it itself"):
        gb.find_part(manifest, 2, [out])
    (out / "manifest.json").unlink()
    with pytest.raises(gb.BundleError, match="every call must carry it"):
        gb.stage(out, 1, tmp_path / "stage")


def _gpu_run(args, bundle_dir, tmp_path):
    env = {**os.environ, "PYTHON": sys.executable, "PRUNER_MS_BUNDLE": str(bundle_dir),
           "PRUNER_MS_STAGE": str(tmp_path / "stage"), "PRUNER_MS_SITE": str(tmp_path / "site")}
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu_run.sh"), *args], env=env, capture_output=True,
                          text=True, timeout=120)


def test_gpu_run_without_part1_says_run_stage_1_again(bundle, tmp_path):
    out, _ = bundle
    (out / "site.tar.xz.part1").unlink()  # a cold machine: the second call finds only what it carried
    res = _gpu_run(["run", "--out", str(tmp_path / "out")], out, tmp_path)
    assert res.returncode == 1
    assert "part 1 of 2" in res.stderr and "Run `scripts/gpu_run.sh stage 1` again" in res.stderr
    assert "carrying .gpu_bundle/manifest.json and .gpu_bundle/site.tar.xz.part1" in res.stderr


def test_gpu_run_stage_then_unpack(bundle, tmp_path):
    out, _ = bundle
    res = _gpu_run(["stage", "1"], out, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "part 1 of 2 verified" in res.stdout and (tmp_path / "stage" / "site.tar.xz.part1").exists()
    (out / "site.tar.xz.part1").unlink()
    res = _gpu_run(["unpack"], out, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "tvm 0.27.0.post1 | tvm_ffi 0.1.14.post1 | xgboost 3.2.0" in res.stdout
    res = _gpu_run(["run"], out, tmp_path)
    assert res.returncode == 1 and "run needs --out DIR" in res.stderr
