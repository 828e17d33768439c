"""Reading a saved ``irscan scan --format json`` report for ``irscan diff`` and ``--baseline``, under
the error contract: a file that is not such a report is a located error (exit 2), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from irscan.ir import IRSyntaxError
from irscan.resources import read_text

_EXPECTED = ['{"schema_version": 1, "findings": [...], ...} (irscan scan --format json)']


def is_report(path: Path) -> bool:
    """A saved report rather than IR or a capture folder: a ``.json`` file."""
    return path.is_file() and path.name.endswith(".json")


def load_report(path: Path) -> dict[str, Any]:
    """The report's document; its ``findings`` (and ``accesses``, when present) lists of objects."""
    text = read_text(path)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IRSyntaxError(str(path), exc.lineno, exc.colno, f"not JSON: {exc.msg}", _EXPECTED) from None
    except RecursionError:  # nesting deeper than the json module walks: not a report either
        raise IRSyntaxError(str(path), 1, 1, "not an irscan report: nested too deeply", _EXPECTED) from None
    except MemoryError:  # objects past memory (read_text caps the bytes, not what they decode to)
        raise IRSyntaxError(str(path), 1, 1, "not an irscan report: too large to hold in memory", _EXPECTED) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("findings"), list):
        raise IRSyntaxError(str(path), 1, 1, "not an irscan report: no 'findings' list at the top", _EXPECTED)
    for name, fields in _FIELDS.items():
        items = doc.get(name, [])
        if not isinstance(items, list):
            raise IRSyntaxError(str(path), 1, 1, f"not an irscan report: '{name}' is not a list", _EXPECTED)
        for i, item in enumerate(items):
            bad = _bad_field(item, fields)
            if bad:
                raise IRSyntaxError(str(path), 1, 1, f"not an irscan report: {name}[{i}]{bad}", _EXPECTED)
    return doc


_STR, _OPT_STR, _OPT_INT = (str,), (str, type(None)), (int, type(None))
#: the fields the diff and the baseline read, with the types they may have
_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "findings": {"kernel": _STR, "ir": _STR, "check": _STR, "severity": _STR, "expression": _STR,
                 "file": _OPT_STR, "line": _OPT_INT, "col": _OPT_INT, "source": _OPT_STR, "id": _STR},
    "accesses": {"kernel": _STR, "ir": _STR, "kind": _STR, "expression": _STR, "index_width": (int,),
                 "file": _OPT_STR, "line": _OPT_INT, "col": _OPT_INT, "source": _OPT_STR},
}  # fmt: skip


def _bad_field(item: object, fields: dict[str, tuple[type, ...]]) -> str | None:
    """What is wrong with one entry, as ``.field: expected ...``; None when it reads as irscan wrote it."""
    if not isinstance(item, dict):
        return ": expected an object"
    for name, types in fields.items():
        v = item.get(name)
        if not isinstance(v, types) or isinstance(v, bool):
            want = " or ".join("null" if t is type(None) else {str: "a string", int: "an integer"}[t] for t in types)
            return f".{name}: expected {want}, got {json.dumps(v)[:40]}"
    for name in ("sink", "wraps_when"):
        if item.get(name) is not None and not isinstance(item.get(name), dict):
            return f".{name}: expected an object or null"
    if "narrow" in item and not isinstance(item["narrow"], list):
        return ".narrow: expected a list"
    return None
