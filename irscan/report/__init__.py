"""Renderers: every output format takes the same plain Findings (irscan/findings.py)."""
