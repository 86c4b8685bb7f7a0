"""The records of one tuning run, read the way the package reads a work dir: a work dir
(:func:`pruner_ms.integration.resume.open_database`) or an exported one (``best_records/NAME``:
``NAME_workload.json`` and ``NAME_tuning_record.json``, see ``export_best_records.py``)."""
import os

from tvm.s_tir import Schedule
from tvm.s_tir import meta_schedule as ms

from pruner_ms.integration.database import compiled_schedule
from pruner_ms.integration.measured_latency import record_seconds
from pruner_ms.integration.resume import RECORD_FILE, open_database


def best_records(run: str) -> list:
    """The run's records, fastest first (failed ones last)."""
    if os.path.exists(os.path.join(run, RECORD_FILE)):
        database = open_database(run, repair_tail=False)
    elif os.path.exists(f"{run}_workload.json"):
        database = ms.database.JSONDatabase(f"{run}_workload.json", f"{run}_tuning_record.json")
    else:
        raise FileNotFoundError(f"{run}: neither a tuning work dir ({RECORD_FILE}) nor an exported NAME "
                                f"({run}_workload.json)")
    return sorted(database.get_all_tuning_records(), key=record_seconds)


def replayed(rec) -> Schedule:
    """The record's program as MetaSchedule compiled it (its trace with the postprocessors)."""
    return compiled_schedule(rec.workload.mod, rec.trace)


def decisions(rec) -> list:
    """The record's sampling decisions as plain lists and ints (tile sizes, unroll, compute location)."""
    return [[int(x) for x in v] if hasattr(v, "__len__") else int(v) for v in rec.trace.decisions.values()]
