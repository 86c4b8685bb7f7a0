"""Symbolic analysis of scheduled TensorIR (the "draft" model of Draft-then-Verify)."""
from .analyzer import Estimate, SymbolicAnalyzer
from .loop_nest import LeafNest, extract_nests

__all__ = ["Estimate", "LeafNest", "SymbolicAnalyzer", "extract_nests"]
