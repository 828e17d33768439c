"""Shrink a failing case to a small reproducer that fails the same way (same class key).

Delta debugging over lines, then over characters, within a time budget: good enough to turn a
2 MB mutated FA4 module into the few lines a front-end author can read."""

from __future__ import annotations

import lzma
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .case import Case
from .harness import judge


def _ddmin(items: list[str], fails: Callable[[list[str]], bool], deadline: float) -> list[str]:
    """Classic ddmin: remove chunks of halving size while the failure persists."""
    n = 2
    while len(items) >= 2 and time.monotonic() < deadline:
        chunk = max(1, len(items) // n)
        removed = False
        for start in range(0, len(items), chunk):
            if time.monotonic() >= deadline:
                break
            candidate = items[:start] + items[start + chunk :]
            if candidate and fails(candidate):
                items, n, removed = candidate, max(n - 1, 2), True
                break
        if not removed:
            if chunk == 1:
                break
            n = min(len(items), n * 2)
    return items


def minimize(case: Case, key: str, work: Path, budget_s: float = 60.0, timeout: float = 10.0) -> Case:
    """The smallest variant of ``case`` found within ``budget_s`` whose outcome has class ``key``."""
    if case.mutated is None or case.files.get(case.mutated) is None or case.twin is not None:
        return case  # a metamorphic case's twin would have to shrink in step: kept whole
    name = case.mutated
    raw = case.files[name]
    assert raw is not None
    packed = name.endswith(".xz")
    if packed:
        try:
            raw = lzma.decompress(raw)
        except lzma.LZMAError:
            packed = False  # the corruption is the bug: shrink the bytes themselves
    try:
        text = raw.decode("utf-8", "surrogateescape")
    except UnicodeDecodeError:  # pragma: no cover (surrogateescape decodes anything)
        return case

    def build(t: str) -> Case:
        data = t.encode("utf-8", "surrogateescape")
        return replace(case, files={**case.files, name: lzma.compress(data, preset=0) if packed else data})

    def fails(t: str) -> bool:
        c = build(t)
        return judge(c, c.materialize(work), timeout).failure == key

    deadline = time.monotonic() + budget_s
    lines = _ddmin(text.split("\n"), lambda ls: fails("\n".join(ls)), deadline)
    text = "\n".join(lines)
    if len(text) < 20000:
        text = "".join(_ddmin(list(text), lambda cs: fails("".join(cs)), deadline))
    return build(text)


def shrink_and_save(case: Case, key: str, work: Path, dest: Path, budget_s: float, timeout: float) -> Case:
    """Shrink ``case`` and save it under ``dest``; the original is kept when the shrunk one no longer
    fails as ``key`` (a timeout near the limit can be flaky)."""
    small = minimize(case, key, work, budget_s, timeout)
    if judge(small, small.materialize(work), timeout).failure != key:
        small = case
    small.save(dest)
    return small
