"""Everything that touches a running CuTe DSL: the ``cute.compile`` hook, the capture folders, the
environment set-up and running a user's program.

The package is ``capturing``, not ``capture``: ``irscan.capture(...)`` is the public context manager,
and a subpackage of that name would replace it as an attribute of ``irscan`` on first import.
"""
