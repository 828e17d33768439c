"""Every check irscan runs, in the order it offers them a candidate: the first that claims it reports it."""

from __future__ import annotations

from irscan.checks import narrow_widened_late, trunc_then_extend
from irscan.checks.base import Check

CHECKS: tuple[Check, ...] = (narrow_widened_late.CHECK, trunc_then_extend.CHECK)
BY_ID: dict[str, Check] = {c.id: c for c in CHECKS}


def get(check_id: str) -> Check:
    """The check with this id; a KeyError names the ones there are."""
    try:
        return BY_ID[check_id]
    except KeyError:
        raise KeyError(f"no check {check_id!r} (checks: {', '.join(BY_ID)})") from None
