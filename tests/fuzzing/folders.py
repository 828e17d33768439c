"""Hostile capture folders: a meta.json that lies about the module beside it (a kernel it does not
hold, another arch, another module name), files that are not what their names say (a folder, a
symlink loop, a dangling link, a link to a device, gzip/zip/bzip2 named ``.xz``, an xz bomb, a
0-byte xz, an xz with trailing garbage), both ``module.mlir`` and ``module.mlir.xz``, captures
nested in captures, and a folder of 5,000 tiny files.

Each returns a :class:`~fuzzing.case.Case`; ``scale`` grows the bomb and the file counts."""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import random
import zipfile
from functools import lru_cache

from .case import Case
from .seeds import Seed


@lru_cache(maxsize=1)
def _bomb_stream() -> bytes:
    """One xz stream of 64 MiB of zeros (~10 KB packed); streams concatenate, so N of them is N x 64 MiB."""
    return lzma.compress(bytes(64 << 20), preset=0)


def xz_bomb(mib: int) -> bytes:
    return _bomb_stream() * max(1, mib // 64)


def _lying_meta(rng: random.Random, seed: Seed) -> tuple[bytes, str]:
    tree = json.loads(seed.meta or "{}")
    kernels = tree.get("kernels") or [{}]
    kind = rng.choice(("kernel_name", "arch", "module", "extra_kernel", "no_kernels", "kernel_twice", "schema"))
    if kind == "kernel_name":
        kernels[0]["name"] = rng.choice(("no_such_kernel", "", "k" * 10000, "名前", kernels[0].get("name", "k") + "x"))
    elif kind == "arch":
        tree["arch"] = rng.choice(("sm_10", "sm_9999a", "", "x86_64", "sm_90a\n", None, 90))
    elif kind == "module":
        tree["module"] = rng.choice(("../../etc/passwd", "", "a/b", "\x00", "other"))
    elif kind == "extra_kernel":
        kernels.append({**kernels[0], "name": "ghost_kernel"})
    elif kind == "no_kernels":
        tree["kernels"] = []
    elif kind == "kernel_twice":
        kernels.append(dict(kernels[0]))
    else:
        tree["schema"] = rng.choice((0, 2, -1, "1", 1.0))
    if kind not in ("no_kernels",):
        tree["kernels"] = kernels
    return json.dumps(tree).encode(), f"meta.json lies: {kind}"


def _packed_other(rng: random.Random, data: bytes) -> tuple[bytes, str]:
    kind = rng.choice(("gzip", "zip", "bz2", "lzma_alone", "trailing", "two_streams", "raw_xz_header"))
    if kind == "gzip":
        return gzip.compress(data), "gzip named .xz"
    if kind == "zip":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("module.mlir", data)
        return buf.getvalue(), "zip named .xz"
    if kind == "bz2":
        return bz2.compress(data), "bzip2 named .xz"
    if kind == "lzma_alone":
        return lzma.compress(data, format=lzma.FORMAT_ALONE), "legacy .lzma named .xz"
    if kind == "trailing":
        return lzma.compress(data) + b"garbage after the stream", "xz with trailing garbage"
    if kind == "two_streams":
        half = len(data) // 2
        return lzma.compress(data[:half]) + lzma.compress(data[half:]), "xz of two streams (a cut mid-line)"
    return lzma.compress(data, format=lzma.FORMAT_RAW, filters=[{"id": lzma.FILTER_LZMA2}]), "raw lzma2 named .xz"


def folder_case(rng: random.Random, seed: Seed, scale: int) -> Case:
    """One hostile capture folder built around ``seed``."""
    meta = (seed.meta or "{}").encode()
    ir, text = seed.filename, seed.text.encode()
    kind = rng.choice(("lying_meta", "lying_meta", "packed_other", "bomb", "zero_xz", "both_plain_and_xz",
                       "self_link", "link_loop", "dangling_link", "link_to_dev", "dir_link_loop", "meta_is_dir",
                       "meta_link_loop", "nested_capture", "many_files", "many_captures", "other_ir_only"))  # fmt: skip
    what = [f"seed {seed.name}/{seed.filename}", kind]
    files: dict[str, bytes | None]
    if kind == "lying_meta":
        data, how = _lying_meta(rng, seed)
        return Case({ir: text, "meta.json": data}, rng.choice(("", ir)), [*what, how], "meta.json", "meta.json")
    if kind == "packed_other":
        data, how = _packed_other(rng, text)
        return Case({ir + ".xz": data, "meta.json": meta}, rng.choice(("", ir + ".xz")), [*what, how], None, "xz")
    if kind == "bomb":
        mib = rng.choice((256, 1024)) * scale
        files = {ir + ".xz": xz_bomb(mib), "meta.json": meta}
        return Case(files, rng.choice(("", ir + ".xz")), [*what, f"xz bomb of {mib} MiB"], None, "xz")
    if kind == "zero_xz":
        return Case({ir + ".xz": b"", "meta.json": meta}, "", what, None, "xz")
    if kind == "both_plain_and_xz":
        packed = lzma.compress(b"// a different module\n" + text[: len(text) // 2])
        return Case({ir: text, ir + ".xz": packed, "meta.json": meta}, "", what, None, "capturing")
    if kind == "self_link":
        return Case({"meta.json": meta}, rng.choice(("", ir)), what, None, "capturing", links=((ir, ir),))
    if kind == "link_loop":
        links = ((ir, "b.lnk"), ("b.lnk", ir))
        return Case({"meta.json": meta}, rng.choice(("", ir)), what, None, "capturing", links=links)
    if kind == "dangling_link":
        return Case({"meta.json": meta}, rng.choice(("", ir)), what, None, "capturing", links=((ir, "nowhere/x"),))
    if kind == "link_to_dev":
        dev = rng.choice(("/dev/zero", "/dev/urandom", "/dev/null", "/proc/self/mem", "/proc/self/fd/0"))
        return Case({"meta.json": meta}, rng.choice(("", ir)), [*what, dev], None, "capturing", links=((ir, dev),))
    if kind == "dir_link_loop":
        return Case({ir: text, "meta.json": meta}, "", what, None, "capturing", links=(("loop", "."), ("up", "..")))
    if kind == "meta_is_dir":
        return Case({ir: text, "meta.json": None}, rng.choice(("", ir)), what, None, "capturing")
    if kind == "meta_link_loop":
        return Case({ir: text}, rng.choice(("", ir)), what, None, "capturing", links=(("meta.json", "meta.json"),))
    if kind == "nested_capture":
        files = {ir: text, "meta.json": meta, f"inner/{ir}": text, "inner/meta.json": meta}
        return Case(files, "", what, None, "capturing")
    if kind == "many_files":
        n = rng.choice((500, 5000)) * min(scale, 2)
        body = rng.choice((b"", b"// x\n", b".version 8.0\n", b"module {\n}\n"))
        ext = rng.choice(("ptx", "mlir", "txt"))
        files = {f"f{i}.{ext}": body for i in range(n)}
        return Case(files, "", [*what, f"{n} files of {body!r}"], None, "capturing")
    if kind == "many_captures":
        n = rng.choice((200, 1000))
        tiny = b".version 8.0\n.target sm_90a\n.address_size 64\n"
        files = {}
        for i in range(n):
            files[f"c{i}/module.ptx"] = tiny
            files[f"c{i}/meta.json"] = b'{"schema": 1, "kernels": []}'
        return Case(files, "", [*what, f"{n} captures"], None, "capturing")
    other = "module.ptx" if seed.ir == "mlir" else "module.mlir"
    return Case({other: text, "meta.json": meta}, "", [*what, f"{seed.ir} text as {other}"], other, "ir")
