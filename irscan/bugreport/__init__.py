"""Upstream bug reports (issue 12): the findings of a capture grouped by root cause (collect.py), a
reduced IR module that still reproduces (reduce.py), a compile-only repro script (repro.py), a version
matrix (matrix.py), and the files of one report written and re-checked (write.py).  Rendering lives in
irscan/report/markdown.py and irscan/report/dot.py; this floor decides what is true, they say it."""
