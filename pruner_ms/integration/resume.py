"""True resume: a work_dir's database counts against the trial budget, and it is checked before use.

MetaSchedule 0.27 reloads a work_dir's records only as warm-start seeds: a re-run spends its whole
budget again and may re-measure what it already measured. Here a re-run with the same work_dir
measures only ``max_trials - already_measured`` more programs (:class:`~pruner_ms.PrunerSearch` never
re-measures a program in the database). ``JSONDatabase`` appends one line per measured program,
so a run killed mid-batch loses at most that batch and, at worst, leaves one half-written last line:
:func:`open_database` sets that line aside (copy kept next to the file) instead of failing. Any other
damage raises :class:`DatabaseError` naming the file and line, and the file is left untouched
(MetaSchedule's own loader fails with ``parallel_for_dynamic error with Cannot tokenize``).
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import time

from tvm.s_tir import meta_schedule as ms

logger = logging.getLogger("pruner_ms")

WORKLOAD_FILE = "database_workload.json"
RECORD_FILE = "database_tuning_record.json"
#: a zero-measurement compile's drafts (estimated, never measured), kept apart from the measured records
DRAFT_WORKLOAD_FILE = "drafts_workload.json"
DRAFT_RECORD_FILE = "drafts_tuning_record.json"


class DatabaseError(ValueError):
    """A tuning database in a work_dir is damaged (not valid JSON lines, or inconsistent)."""


def _check_lines(path: str, *, repair_tail: bool) -> int:
    """Number of valid JSON lines in ``path``; a half-written last line is set aside if ``repair_tail``."""
    if not os.path.exists(path):
        return 0
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    tail_partial = not data.endswith(b"\n") and bool(lines[-1])
    count = 0
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            json.loads(line)
            count += 1
        except ValueError as err:
            if i == len(lines) - 1 and tail_partial and repair_tail:
                backup = f"{path}.partial-{int(time.time())}"
                shutil.copyfile(path, backup)
                with open(path, "wb") as f:
                    f.write(b"\n".join(lines[:-1]) + b"\n")
                logger.warning("%s ended in a half-written line (a run killed while writing); set it aside, "
                               "original kept as %s", path, backup)
                return count
            raise DatabaseError(
                f"{path}, line {i + 1}: not a valid MetaSchedule record ({err}). The file was left as it is. "
                "Move it away (or tune into a new work_dir) to start afresh; the other lines are intact records "
                "if you want to keep them."
            ) from None
    return count


def open_database(work_dir: str, *, repair_tail: bool = True) -> ms.database.JSONDatabase:
    """The work_dir's ``JSONDatabase``, after checking both files line by line (see module doc)."""
    return _open_checked(work_dir, WORKLOAD_FILE, RECORD_FILE, repair_tail=repair_tail)


def open_drafts(work_dir: str, *, create: bool = False) -> ms.database.JSONDatabase | None:
    """The drafts a zero-measurement compile saved in ``work_dir`` (their ``run_secs`` are the
    analyzer's estimates), checked like :func:`open_database`; ``None`` if there are none and not
    ``create``. A measured run in the same work_dir hands them out first
    (``PrunerSearch(seed_database=...)``)."""
    if not create and not os.path.exists(os.path.join(work_dir, DRAFT_RECORD_FILE)):
        return None
    return _open_checked(work_dir, DRAFT_WORKLOAD_FILE, DRAFT_RECORD_FILE, repair_tail=True)


def _open_checked(work_dir: str, workload_file: str, record_file: str, *, repair_tail: bool) -> ms.database.JSONDatabase:
    os.makedirs(work_dir, exist_ok=True)
    paths = [os.path.join(work_dir, workload_file), os.path.join(work_dir, record_file)]
    n_workloads = _check_lines(paths[0], repair_tail=repair_tail)
    _check_lines(paths[1], repair_tail=repair_tail)
    if os.path.exists(paths[1]):
        with open(paths[1], encoding="utf-8") as f:
            for i, line in enumerate(f):
                if line.strip():
                    rec = json.loads(line)
                    if not (isinstance(rec, list) and len(rec) == 2 and isinstance(rec[0], int)
                            and 0 <= rec[0] < n_workloads):
                        raise DatabaseError(
                            f"{paths[1]}, line {i + 1}: the record does not point to one of the {n_workloads} "
                            f"workloads of {paths[0]}. The files do not belong together; the file was left as "
                            "it is. Move the work_dir away to start afresh."
                        )
    try:
        return ms.database.JSONDatabase(path_workload=paths[0], path_tuning_record=paths[1])
    except Exception as err:  # noqa: BLE001  (anything the line check missed: say which files)
        raise DatabaseError(f"MetaSchedule could not load the database in {work_dir}: {err}") from None


def workload_records(database, mod) -> list:
    """Every tuning record of workload ``mod``, failed builds and runs included (``get_top_k`` of
    MetaSchedule's JSON and memory databases skips those)."""
    if not database.has_workload(mod):
        return []
    workload = database.commit_workload(mod)
    key = workload_key(workload.mod)
    return [rec for rec in database.get_all_tuning_records() if workload_key(rec.workload.mod) == key]


def measured_count(database, mod) -> int:
    """How many programs of workload ``mod`` the database holds (failed builds and runs included:
    they spent trials too)."""
    return len(workload_records(database, mod))


def workload_key(mod) -> int:
    """MetaSchedule's identity of a workload: the structural hash of its IRModule."""
    import tvm_ffi

    return int(tvm_ffi.structural_hash(mod))


def remaining_trials(database, mod, max_trials: int) -> tuple[int, int]:
    """``(already measured, still to measure)`` for a budget of ``max_trials`` on ``mod``."""
    done = measured_count(database, mod)
    return done, max(0, max_trials - done)
