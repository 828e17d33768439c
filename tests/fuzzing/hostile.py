"""Hostile inputs that are not mutations of IR text: a meta.json of the wrong shape or with impossible
launch facts, corrupt .xz streams, and files that are not IR at all.

meta.json is read by the scan to bound ``ctaid``/``tid`` and the layouts; a value that is not a
positive integer where a grid dim belongs must be an error naming the field, never a traceback and
never a verdict (a 10^40 grid is not a launch)."""

from __future__ import annotations

import json
import lzma
import random
from typing import Any

#: values a JSON field can hold that no capture writes; json.dumps renders inf/nan as Infinity/NaN
_HOSTILE_VALUES: tuple[Any, ...] = (
    None, "x", "", -1, 0, 10**40, -(10**40), float("inf"), float("-inf"), float("nan"), 1.5, True,
    [], {}, [1, 2], "12", [None, None, None], {"x": 1}, [-1, -1, -1], [0, 1, 1], [10**40, 1, 1],
)  # fmt: skip
#: keys whose values the scan reads: mutations aim there half the time
_INTERESTING = ("launch", "grid", "block", "reqntid", "modes", "kernels", "args", "shape", "stride", "value",
                "width", "name", "kind", "space", "cluster", "files", "lineinfo")  # fmt: skip
_WHOLE_META: tuple[bytes, ...] = (
    b"[]", b'"a string"', b"null", b"42", b"", b"{", b'{"kernels": "x"}', b'{"kernels": [1, null, "s"]}',
    b'{"kernels": null}', b'{"kernels": [{}]}', b'{"kernels": [{"name": 5}]}', b"\xff\xfe{}", b"Infinity",
    b'{"schema": 99}', b"[" * 100000 + b"]" * 100000, b'{"a":' * 50000 + b"1" + b"}" * 50000,
)  # fmt: skip
NON_IR: tuple[bytes, ...] = (
    b"", b" \n\t\n", b"\n" * 1000, b"hello world\n", b"def f(x):\n    return x + 1\n", b'{"json": true}\n',
    b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4, b"module {\n}\n", b"// only a comment\n",
    b".version 8.0\n.target sm_90a\n", b"\x00" * 4096, b"\xfd7zXZ\x00\x00", b"module {", b"}}}}",
)  # fmt: skip


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value in a JSON tree, iteratively (the tree is a real meta.json, but the habit holds)."""
    out: list[tuple[Any, ...]] = []
    stack = [(prefix, node)]
    while stack:
        path, value = stack.pop()
        out.append(path)
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack.extend((path + (k,), v) for k, v in items)
    return out


def _set(tree: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    parent = tree
    for k in path[:-1]:
        parent = parent[k]
    if delete and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return tree


def mutate_meta(rng: random.Random, meta: str | None) -> tuple[bytes, str]:
    """A hostile meta.json: of the wrong shape altogether, or a real one with one field replaced or
    deleted.  Returns the bytes and what was done."""
    if meta is None or rng.random() < 0.2:
        whole = rng.choice(_WHOLE_META)
        return whole, f"meta.json = {whole[:40]!r}"
    tree = json.loads(meta)
    paths = [p for p in _paths(tree) if p]
    hot = [p for p in paths if any(isinstance(k, str) and any(w in k for w in _INTERESTING) for k in p)]
    path = rng.choice(hot if hot and rng.random() < 0.7 else paths)
    value = rng.choice(_HOSTILE_VALUES)
    delete = rng.random() < 0.15
    tree = _set(tree, path, value, delete)
    what = "deleted" if delete else f"= {json.dumps(value)[:40]}"
    return json.dumps(tree).encode(), f"meta.json {'/'.join(map(str, path))} {what}"


def corrupt_xz(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    """An .xz of the IR that is broken: truncated, bit-flipped, not xz at all, or xz of bytes that are
    not UTF-8."""
    kind = rng.choice(("truncate", "flip", "garbage", "binary", "empty"))
    packed = lzma.compress(data)
    if kind == "truncate":
        return packed[: rng.randrange(len(packed))], "xz truncated"
    if kind == "flip":
        buf = bytearray(packed)
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
        return bytes(buf), "xz bit-flipped"
    if kind == "garbage":
        return data[:4096], "plain text named .xz"
    if kind == "binary":
        return lzma.compress(b"\xff\xfe" + data[:2000]), "xz of invalid UTF-8"
    return b"", "empty .xz"
