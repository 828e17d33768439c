"""The checks: ``base.py`` (the ``Check`` type, widening points, candidates, sinks), one file per check
holding its rule, message and fix, ``registry.py`` (all of them, in order), ``runner.py`` (run them on a
function) and ``explain.py`` (a candidate as a Finding, the same for every check)."""

from __future__ import annotations

from irscan.checks.base import Check
from irscan.checks.registry import CHECKS, get
from irscan.checks.runner import Context, points, run

__all__ = ["CHECKS", "Check", "Context", "get", "points", "run"]
