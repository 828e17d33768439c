"""Patch mode: rewrite the wrapping index chains irscan finds to 64 bits, verified, inside
``cute.compile`` (:mod:`irscan.patching.inhook`) or after the fact (:mod:`irscan.patching.offline`).

The package is ``patching``, not ``patch``: ``irscan.patch()`` is the public context manager, and a
subpackage of that name would shadow it on import.  Rules are data, in the repository's ``patches/``.
"""
