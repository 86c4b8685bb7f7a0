"""Open the records of one tuning run: a work dir (``<run>/database_workload.json`` and
``database_tuning_record.json``) or an exported one (``best_records/NAME``: ``NAME_workload.json`` and
``NAME_tuning_record.json``); the best first."""
import os

from tvm.s_tir import meta_schedule as ms

from pruner_ms.integration.measured_latency import record_seconds


def best_records(run: str) -> list:
    """The run's records, fastest first (failed ones last)."""
    if os.path.exists(f"{run}/database_workload.json"):
        paths = (f"{run}/database_workload.json", f"{run}/database_tuning_record.json")
    else:
        paths = (f"{run}_workload.json", f"{run}_tuning_record.json")
    if not os.path.exists(paths[0]):
        raise FileNotFoundError(f"{run}: neither a tuning work dir nor an exported NAME (looked for {paths[0]})")
    return sorted(ms.database.JSONDatabase(*paths).get_all_tuning_records(), key=record_seconds)
