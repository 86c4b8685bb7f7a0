"""Glue between pruner_ms and MetaSchedule's tuning entry points."""
