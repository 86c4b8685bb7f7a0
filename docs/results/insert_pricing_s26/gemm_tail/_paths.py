"""Puts the repository, its tests and ../../redraft_share_s25 (records.py) on the import path."""
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
_root = os.path.join(_here, "..", "..", "..", "..")
for path in (_root, os.path.join(_root, "tests"), os.path.join(_root, "docs", "results", "redraft_share_s25")):
    sys.path.insert(0, os.path.abspath(path))
