"""Symbolic analysis of scheduled TensorIR (the "draft" model of Draft-then-Verify)."""
from .analyzer import Estimate, SymbolicAnalyzer, analyzer_for_target
from .loop_nest import LeafNest, extract_nests

__all__ = ["Estimate", "LeafNest", "SymbolicAnalyzer", "analyzer_for_target", "extract_nests"]
