#!/usr/bin/env python3
"""Carry TVM, its FFI, XGBoost and tornado to the offline GPU host, in parts that each fit one device call.

The GPU host (one H200; python3 3.12 with torch, numpy, scipy, ml_dtypes, psutil, cloudpickle and tqdm;
no network) receives at most 64 MiB per call: the repository's working tree plus the git-ignored paths
the call carries. The apache-tvm wheel alone is ~100 MB, so ``build`` unpacks the cp312 wheels into one
site tree (streamed, never on disk), leaves out what tuning never loads (:data:`STRIP`), writes it as
one xz-compressed tar and splits that by bytes into equal parts, with a manifest (versions, sha256 of
every part). Each part then travels with one call; the last call puts them together (``unpack``).
Standard library only (Python >= 3.10), so the GPU host runs it before anything is installed.

    python3 scripts/gpu_bundle.py build --wheels .gpu_bundle/wheels --out .gpu_bundle [--parts 2]
    python3 scripts/gpu_bundle.py check --bundle .gpu_bundle     # each call's size against the limit
    python3 scripts/gpu_bundle.py stage 1 --bundle .gpu_bundle --stage /tmp/pruner_ms_bundle
    python3 scripts/gpu_bundle.py unpack --bundle .gpu_bundle --stage /tmp/pruner_ms_bundle --site /tmp/pruner_ms_site

``scripts/gpu_bundle.sh`` (here, with PyPI) downloads the wheels and runs ``build``;
``scripts/gpu_run.sh`` (there) runs ``stage`` and ``unpack``.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

MIB = 1 << 20
#: What one device call may carry in all: the working tree plus the carried paths.
CALL_LIMIT_BYTES = 64 * MIB
#: Room left in each call for the repository to grow between ``build`` and the run.
DEFAULT_MARGIN_BYTES = 4 * MIB
MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"
STREAM = "site.tar.xz"
#: The stamp ``unpack`` leaves in the site folder: the bundle id it was unpacked from.
STAMP = ".pruner_ms_bundle"
#: Distributions the GPU host lacks (import names in brackets): apache-tvm (tvm), apache-tvm-ffi (tvm_ffi),
#: xgboost-cpu (xgboost), tornado (TVM's RPC tracker). Everything else they need is on the host.
DISTRIBUTIONS = {"apache_tvm": "tvm", "apache_tvm_ffi": "tvm_ffi", "xgboost_cpu": "xgboost", "tornado": "tornado"}
#: Paths left out of the site: the WebAssembly/JS runtime sources (only for tvmjs/emcc) and CUTLASS's
#: headers (only for ``tvm.contrib.cutlass``, the BYOC path; MetaSchedule's tensor-core rules emit wmma).
#: Byte-code caches are left out too (there are none in the wheels today).
STRIP = ("tvm/web/", "tvm/3rdparty/cutlass/")
#: A fixed modification time for every member, so the same wheels give the same bundle (and bundle id).
MTIME = 315532800  # 1980-01-01, the zip epoch
XZ_FILTERS = [{"id": lzma.FILTER_X86}, {"id": lzma.FILTER_LZMA2, "preset": 6}]
XZ_DESCRIPTION = "xz: x86 BCJ filter + LZMA2 preset 6"


class BundleError(RuntimeError):
    """A bundle that cannot be built, carried or unpacked; the message says what to do."""


# -- sizes ----------------------------------------------------------------------------------------
def repo_travel_bytes(root: str | os.PathLike) -> int:
    """Bytes of the working tree a device call copies: tracked files plus untracked files git does not ignore.

    Parameters
    ----------
    root : path
        The repository's root (a git checkout).

    Returns
    -------
    int
        Sum of the sizes of those files that exist (a symbolic link counts as the link itself), plus
        every file of a ``shared/`` folder in the checkout, which travels too.
    """
    root = Path(root)
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise BundleError(f"cannot list the files of {root} with git ({err}); run this from a git checkout "
                          "of pruner_ms, or pass --repo-bytes N") from None
    names = {n for n in out.decode("utf-8", "surrogateescape").split("\0") if n}
    shared = root / "shared"
    if shared.is_dir():
        names |= {str(p.relative_to(root)) for p in shared.rglob("*") if p.is_file() or p.is_symlink()}
    total = 0
    for name in names:
        try:
            total += (root / name).lstat().st_size
        except FileNotFoundError:  # tracked but deleted in the working tree: it does not travel
            continue
    return total


def part_sizes(total: int, parts: int) -> list[int]:
    """Split ``total`` bytes into ``parts`` near-equal sizes (the first ones one byte larger when uneven)."""
    if parts < 1:
        raise BundleError(f"--parts must be at least 1, not {parts}")
    if total < parts:
        raise BundleError(f"a stream of {total} bytes cannot be split into {parts} parts; use fewer parts")
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def call_rows(part_bytes: dict[str, int], repo_bytes: int, *, manifest_bytes: int = 0,
              limit: int = CALL_LIMIT_BYTES, margin: int = DEFAULT_MARGIN_BYTES) -> list[dict]:
    """What each device call carries, one row per part: the part, the repository and the manifest.

    Parameters
    ----------
    part_bytes : dict of str to int
        Part file name -> size in bytes, in carrying order.
    repo_bytes : int
        :func:`repo_travel_bytes` of the checkout the calls are made from.
    manifest_bytes : int
        Size of the manifest, which every call carries too.
    limit, margin : int
        The per-call limit, and the room each call must leave under it.

    Returns
    -------
    list of dict
        ``part``, ``part_bytes``, ``call_bytes`` (part + repository + manifest), ``limit``, ``fits``.
    """
    rows = []
    for name, size in part_bytes.items():
        call = size + repo_bytes + manifest_bytes
        rows.append({"part": name, "part_bytes": size, "call_bytes": call, "limit": limit,
                     "fits": call <= limit - margin})
    return rows


def format_rows(rows: list[dict], repo_bytes: int, margin: int = DEFAULT_MARGIN_BYTES) -> str:
    """The size table ``build`` and ``check`` print."""
    lines = [f"repository working tree (tracked + untracked, not ignored): {repo_bytes / MIB:.2f} MiB",
             f"{'part':<22} {'part MiB':>9} {'call MiB':>9} {'limit MiB':>10}  "
             f"fits (with {margin / MIB:.0f} MiB to spare)"]
    for r in rows:
        lines.append(f"{r['part']:<22} {r['part_bytes'] / MIB:>9.2f} {r['call_bytes'] / MIB:>9.2f} "
                     f"{r['limit'] / MIB:>10.0f}  {'yes' if r['fits'] else 'NO'}")
    return "\n".join(lines)


def check_fit(rows: list[dict]) -> None:
    """Raise :class:`BundleError` naming every part whose call would not fit."""
    bad = [r for r in rows if not r["fits"]]
    if bad:
        names = ", ".join(f"{r['part']} ({r['call_bytes'] / MIB:.1f} MiB with the repository)" for r in bad)
        raise BundleError(f"these calls would exceed the {bad[0]['limit'] / MIB:.0f} MiB per-call limit (less the "
                          f"margin): {names}; rebuild with more parts (--parts {len(rows) + 1}) or make the "
                          "repository's working tree smaller")


# -- building ---------------------------------------------------------------------------------------
def sha256_file(path: str | os.PathLike) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _wheel_dist(path: Path) -> tuple[str, str]:
    """(normalised distribution name, version) from a wheel's file name."""
    parts = path.name[:-len(".whl")].split("-")
    if len(parts) < 5:
        raise BundleError(f"{path} is not a wheel file name (name-version-python-abi-platform.whl)")
    return parts[0].lower().replace(".", "_"), parts[1]


def find_wheels(wheel_dir: str | os.PathLike) -> list[Path]:
    """One wheel per entry of :data:`DISTRIBUTIONS` in ``wheel_dir``; a clear error when one is missing or doubled."""
    wheel_dir = Path(wheel_dir)
    found: dict[str, list[Path]] = {}
    for p in sorted(wheel_dir.glob("*.whl")):
        found.setdefault(_wheel_dist(p)[0], []).append(p)
    missing = [d for d in DISTRIBUTIONS if d not in found]
    doubled = {d: [p.name for p in ps] for d, ps in found.items() if len(ps) > 1}
    if missing or doubled:
        raise BundleError(f"wheel folder {wheel_dir}: missing {missing or 'none'}, more than one version of "
                          f"{doubled or 'none'}; fetch exactly one of each with "
                          f"scripts/fetch_gpu_wheels.sh {wheel_dir} (remove the others)")
    extra = sorted(set(found) - set(DISTRIBUTIONS))
    if extra:
        raise BundleError(f"wheel folder {wheel_dir} holds wheels the bundle does not expect: {extra}; remove them "
                          f"(the bundle carries {sorted(DISTRIBUTIONS)})")
    return [found[d][0] for d in DISTRIBUTIONS]


def stripped(name: str) -> bool:
    """Whether a site path is left out of the bundle (:data:`STRIP`, byte-code caches)."""
    return name.startswith(STRIP) or "/__pycache__/" in f"/{name}" or name.endswith((".pyc", ".pyo"))


def write_site_tar(wheels: list[Path], fileobj) -> dict:
    """Stream the wheels' contents, less :func:`stripped` paths, into one tar written to ``fileobj``.

    Members are in a fixed order with fixed owner and time, so the same wheels give the same bytes.

    Returns
    -------
    dict
        ``files``, ``bytes`` (unpacked), ``stripped_files``, ``stripped_bytes``.
    """
    stats = {"files": 0, "bytes": 0, "stripped_files": 0, "stripped_bytes": 0}
    seen: dict[str, str] = {}
    with tarfile.open(fileobj=fileobj, mode="w|", format=tarfile.PAX_FORMAT) as tar:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as zf:
                for info in sorted(zf.infolist(), key=lambda i: i.filename):
                    name = info.filename
                    if info.is_dir():
                        continue
                    if ".data/" in name.split("/", 1)[0] + "/":
                        raise BundleError(f"{wheel.name} has a .data folder ({name}): unpacking it is not an "
                                          "install; this script supports wheels without one")
                    if stripped(name):
                        stats["stripped_files"] += 1
                        stats["stripped_bytes"] += info.file_size
                        continue
                    if name in seen:
                        raise BundleError(f"{name} is in both {seen[name]} and {wheel.name}")
                    seen[name] = wheel.name
                    ti = tarfile.TarInfo(name)
                    ti.size = info.file_size
                    mode = (info.external_attr >> 16) & 0o777
                    ti.mode = (mode | 0o644) if mode else 0o644
                    ti.mtime = MTIME
                    with zf.open(info) as src:
                        tar.addfile(ti, src)
                    stats["files"] += 1
                    stats["bytes"] += info.file_size
    return stats


class _HashingWriter(io.RawIOBase):
    """A write-only file that hashes and counts what goes through it."""

    def __init__(self, f) -> None:
        self.f, self.h, self.n = f, hashlib.sha256(), 0

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.f.write(b)
        self.h.update(b)
        self.n += len(b)
        return len(b)


def build(wheel_dir: str | os.PathLike, out_dir: str | os.PathLike, *, parts: int = 2,
          repo_root: str | os.PathLike | None = None, repo_bytes: int | None = None,
          limit: int = CALL_LIMIT_BYTES, margin: int = DEFAULT_MARGIN_BYTES) -> dict:
    """Write ``site.tar.xz.part1..N``, ``manifest.json`` and ``SHA256SUMS`` into ``out_dir``; return the manifest.

    Raises :class:`BundleError` (and leaves the parts there, for inspection) when a call would not fit.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    wheels = find_wheels(wheel_dir)
    for old in list(out_dir.glob(f"{STREAM}.part*")) + [out_dir / MANIFEST, out_dir / SUMS]:
        old.unlink(missing_ok=True)
    stream = out_dir / f"{STREAM}.tmp"
    with open(stream, "wb") as raw:
        hw = _HashingWriter(raw)
        with lzma.LZMAFile(hw, "wb", format=lzma.FORMAT_XZ, filters=XZ_FILTERS) as xz:
            stats = write_site_tar(wheels, xz)
    total, bundle_id = hw.n, hw.h.hexdigest()
    part_list = []
    with open(stream, "rb") as src:
        for i, size in enumerate(part_sizes(total, parts), 1):
            name = f"{STREAM}.part{i}"
            data = src.read(size)
            (out_dir / name).write_bytes(data)
            part_list.append({"index": i, "name": name, "bytes": size, "sha256": hashlib.sha256(data).hexdigest()})
    stream.unlink()
    if repo_bytes is None:
        repo_bytes = repo_travel_bytes(repo_root if repo_root is not None else Path(__file__).resolve().parents[1])
    manifest = {
        "format": 1,
        "bundle_id": bundle_id,
        "created_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "for": "CPython 3.12, Linux x86-64 (manylinux_2_28); the host supplies numpy, scipy, ml_dtypes, "
               "typing_extensions, psutil, cloudpickle, tqdm and torch",
        "wheels": [{"file": w.name, "distribution": _wheel_dist(w)[0], "version": _wheel_dist(w)[1],
                    "import": DISTRIBUTIONS[_wheel_dist(w)[0]], "sha256": sha256_file(w),
                    "bytes": w.stat().st_size} for w in wheels],
        "stripped": list(STRIP) + ["__pycache__/", "*.pyc"],
        "site": stats,
        "compression": XZ_DESCRIPTION,
        "stream_bytes": total,
        "parts": part_list,
        "call_limit_bytes": limit,
        "margin_bytes": margin,
        "repo_bytes_at_build": repo_bytes,
    }
    (out_dir / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    (out_dir / SUMS).write_text("".join(f"{p['sha256']}  {p['name']}\n" for p in part_list))
    rows = call_rows({p["name"]: p["bytes"] for p in part_list}, repo_bytes,
                     manifest_bytes=(out_dir / MANIFEST).stat().st_size, limit=limit, margin=margin)
    print(format_rows(rows, repo_bytes, margin))
    check_fit(rows)
    return manifest


# -- the GPU host's side ------------------------------------------------------------------------------
def load_manifest(bundle_dir: str | os.PathLike) -> dict:
    path = Path(bundle_dir) / MANIFEST
    if not path.exists():
        raise BundleError(f"{path} is missing: every call must carry it (carry .gpu_bundle/{MANIFEST} beside the "
                          "part); build the bundle with scripts/gpu_bundle.sh where PyPI is reachable")
    try:
        manifest = json.loads(path.read_text())
    except ValueError as err:
        raise BundleError(f"{path} is not valid JSON ({err}); rebuild the bundle with scripts/gpu_bundle.sh") from None
    if manifest.get("format") != 1 or not manifest.get("parts"):
        raise BundleError(f"{path} is not a pruner_ms GPU bundle manifest (format 1); rebuild it with "
                          "scripts/gpu_bundle.sh")
    return manifest


def _part(manifest: dict, index: int) -> dict:
    n = len(manifest["parts"])
    if not 1 <= index <= n:
        raise BundleError(f"the bundle has parts 1..{n}, not {index}")
    return manifest["parts"][index - 1]


def _missing_part_message(manifest: dict, index: int, where: list[Path]) -> str:
    part, n = _part(manifest, index), len(manifest["parts"])
    looked = ", ".join(str(w) for w in where)
    carry = f".gpu_bundle/{MANIFEST} and .gpu_bundle/{part['name']}"
    if index == n:
        return (f"part {n} of {n} of the bundle ({part['name']}) is not here (looked in {looked}): the "
                f"`scripts/gpu_run.sh run ...` call carries it itself; name {carry} in that call's carry list.")
    return (f"part {index} of {n} of the bundle ({part['name']}) is not on this machine (looked in {looked}): the "
            "machine that the `stage` call ran on has gone cold since (it keeps files only ~30 s after a call). "
            f"Run `scripts/gpu_run.sh stage {index}` again, carrying {carry}, then the `scripts/gpu_run.sh run ...` "
            "call at once.")


def find_part(manifest: dict, index: int, places: list[Path]) -> Path:
    """The verified file of part ``index``: the first of ``places`` holding it with the manifest's sha256."""
    part = _part(manifest, index)
    wrong = []
    for place in places:
        path = place / part["name"]
        if not path.exists():
            continue
        if path.stat().st_size == part["bytes"] and sha256_file(path) == part["sha256"]:
            return path
        wrong.append(path)
    if wrong:
        raise BundleError(f"{', '.join(map(str, wrong))}: not the part {index} this manifest expects (size or "
                          f"sha256 differ; bundle {manifest['bundle_id'][:12]}): the parts and the manifest come "
                          "from different builds; carry the manifest and parts of one scripts/gpu_bundle.sh run")
    raise BundleError(_missing_part_message(manifest, index, places))


def stage(bundle_dir: str | os.PathLike, index: int, stage_dir: str | os.PathLike) -> Path:
    """Verify part ``index`` where the call carried it and keep a copy in ``stage_dir``; return the copy."""
    bundle_dir, stage_dir = Path(bundle_dir), Path(stage_dir)
    manifest = load_manifest(bundle_dir)
    src = find_part(manifest, index, [bundle_dir])
    stage_dir.mkdir(parents=True, exist_ok=True)
    dst = stage_dir / src.name
    want = manifest["parts"][index - 1]["sha256"]
    if not (dst.exists() and dst.stat().st_size == src.stat().st_size and sha256_file(dst) == want):
        tmp = stage_dir / f".{src.name}.tmp"
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
    shutil.copyfile(bundle_dir / MANIFEST, stage_dir / MANIFEST)
    n = len(manifest["parts"])
    print(f"gpu_bundle: part {index} of {n} verified ({src.stat().st_size / MIB:.1f} MiB, sha256 "
          f"{manifest['parts'][index - 1]['sha256'][:12]}) and kept in {stage_dir}")
    return dst


class _ChainReader(io.RawIOBase):
    """The concatenation of several files, read in order."""

    def __init__(self, paths: list[Path]) -> None:
        self._paths, self._f = list(paths), None

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while True:
            if self._f is None:
                if not self._paths:
                    return 0
                self._f = open(self._paths.pop(0), "rb")
            n = self._f.readinto(b)
            if n:
                return n
            self._f.close()
            self._f = None

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
        super().close()


def unpack(bundle_dir: str | os.PathLike, site_dir: str | os.PathLike, *,
           stage_dir: str | os.PathLike | None = None) -> Path:
    """Put the parts together and unpack them into ``site_dir`` (replaced); skipped when it already holds this bundle.

    Each part is looked for in ``bundle_dir`` (where the calls carry them) and then in ``stage_dir``
    (where ``stage`` copied them), and checked against the manifest's sha256.
    """
    bundle_dir, site_dir = Path(bundle_dir), Path(site_dir)
    places = [bundle_dir] + ([Path(stage_dir)] if stage_dir is not None else [])
    if not (bundle_dir / MANIFEST).exists() and stage_dir is not None and (Path(stage_dir) / MANIFEST).exists():
        manifest = load_manifest(stage_dir)
    else:
        manifest = load_manifest(bundle_dir)
    stamp = site_dir / STAMP
    if stamp.exists() and stamp.read_text().strip() == manifest["bundle_id"]:
        print(f"gpu_bundle: {site_dir} already holds bundle {manifest['bundle_id'][:12]}")
        return site_dir
    paths = [find_part(manifest, i, places) for i in range(1, len(manifest["parts"]) + 1)]
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}.", dir=site_dir.parent))
    try:
        with _ChainReader(paths) as raw, lzma.LZMAFile(io.BufferedReader(raw, 1 << 20)) as xz, \
                tarfile.open(fileobj=xz, mode="r|") as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(tmp, filter="data")
            else:  # Python < 3.10.12 / 3.11.4: our own archive, members checked by build()
                tar.extractall(tmp)
        missing = [imp for imp in DISTRIBUTIONS.values() if not (tmp / imp / "__init__.py").exists()]
        if missing:
            raise BundleError(f"the unpacked bundle lacks the packages {missing}; rebuild it with "
                              "scripts/gpu_bundle.sh")
        (tmp / STAMP).write_text(manifest["bundle_id"] + "\n")
        if site_dir.exists():
            shutil.rmtree(site_dir)
        os.replace(tmp, site_dir)
    except (lzma.LZMAError, tarfile.TarError, EOFError) as err:
        raise BundleError(f"the parts do not make a valid archive ({type(err).__name__}: {err}) although their "
                          "sha256 match: rebuild the bundle with scripts/gpu_bundle.sh") from None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    s = manifest["site"]
    print(f"gpu_bundle: unpacked bundle {manifest['bundle_id'][:12]} ({len(paths)} parts, {s['files']} files, "
          f"{s['bytes'] / MIB:.0f} MiB) into {site_dir}")
    return site_dir


# -- command line -------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="pack the wheels into parts (here, after the download)")
    b.add_argument("--wheels", required=True, help="folder with one wheel of each of " + ", ".join(DISTRIBUTIONS))
    b.add_argument("--out", required=True, help="bundle folder (git-ignored), e.g. .gpu_bundle")
    b.add_argument("--parts", type=int, default=2)
    b.add_argument("--repo", default=None,
                   help="checkout whose working tree travels with each call (default: this one)")
    b.add_argument("--margin-mib", type=float, default=DEFAULT_MARGIN_BYTES / MIB)
    c = sub.add_parser("check", help="print each call's size against the limit; fail if one does not fit")
    c.add_argument("--bundle", required=True)
    c.add_argument("--repo", default=None)
    c.add_argument("--margin-mib", type=float, default=DEFAULT_MARGIN_BYTES / MIB)
    s = sub.add_parser("stage", help="verify a carried part and keep it for the last call (GPU host)")
    s.add_argument("index", type=int)
    s.add_argument("--bundle", required=True)
    s.add_argument("--stage", required=True)
    u = sub.add_parser("unpack", help="put the parts together into a site folder (GPU host)")
    u.add_argument("--bundle", required=True)
    u.add_argument("--site", required=True)
    u.add_argument("--stage", default=None)
    a = p.parse_args(argv)
    try:
        if a.cmd == "build":
            build(a.wheels, a.out, parts=a.parts, repo_root=a.repo, margin=int(a.margin_mib * MIB))
        elif a.cmd == "check":
            manifest = load_manifest(a.bundle)
            repo_bytes = repo_travel_bytes(a.repo or Path(__file__).resolve().parents[1])
            sizes = {}
            for part in manifest["parts"]:
                path = Path(a.bundle) / part["name"]
                if not path.exists():
                    raise BundleError(f"{path} is missing; rebuild the bundle with scripts/gpu_bundle.sh")
                sizes[part["name"]] = path.stat().st_size
            margin = int(a.margin_mib * MIB)
            rows = call_rows(sizes, repo_bytes, manifest_bytes=(Path(a.bundle) / MANIFEST).stat().st_size,
                             margin=margin)
            print(format_rows(rows, repo_bytes, margin))
            check_fit(rows)
        elif a.cmd == "stage":
            stage(a.bundle, a.index, a.stage)
        else:
            unpack(a.bundle, a.site, stage_dir=a.stage)
    except BundleError as err:
        print(f"gpu_bundle {a.cmd}: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
