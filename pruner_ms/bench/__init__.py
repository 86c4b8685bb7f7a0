"""Benchmark workloads and side-by-side tuning comparisons."""
