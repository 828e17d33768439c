"""The launch guard: each finding's wrap condition, bound to a launch's real arguments and grid and
decided before the launch reaches the GPU (``with irscan.guard(mode="raise"):``, ``IRSCAN_GUARD``,
``irscan audit --guard``).  The package is not called ``guard``: ``irscan.guard`` is the public
context manager, and a subpackage of that name would shadow it on import."""

from irscan.guarding.errors import WrapError

__all__ = ["WrapError"]
