"""Dataflow, reaching definitions, intervals, loops and value ranges over :mod:`irscan.ir`: no op
names, no IR text."""
