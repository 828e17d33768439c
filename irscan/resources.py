"""Files irscan reads: its grammars (``grammars/`` at the top of a source checkout, where the design
card keeps them as data, or ``irscan/grammars/`` inside an installed wheel, where setup.py copies
them), and the user's files (IR text, plain or xz-compressed as the third-party corpus stores them;
meta.json), read under the error contract: a file irscan cannot read (a special file, a symlink loop,
a read error, over MAX_TEXT_BYTES) is an :class:`~irscan.ir.IRSyntaxError` at 1:1, bad bytes one at
their line and column; :class:`UsageError` is for arguments irscan cannot use."""

from __future__ import annotations

import lzma
import os
import stat
from pathlib import Path

from irscan.ir import IRSyntaxError

_HERE = Path(__file__).resolve().parent


class UsageError(Exception):
    """A path or argument irscan cannot use (missing, not a regular file, no program to run): the CLI
    prints ``irscan: error: <message>`` and exits 2.  Not for bugs: those are exit 3."""


def grammar_path(name: str) -> Path:
    for folder in (_HERE / "grammars", _HERE.parent / "grammars"):
        if (folder / name).exists():
            return folder / name
    raise FileNotFoundError(f"irscan grammar {name} is missing from {_HERE / 'grammars'} (a broken install?)")


_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
            stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}  # fmt: skip


#: the most bytes of text irscan reads from one file, after decompression: real captures are a few MB
#: (the largest third-party one 2 MB); an .xz that expands past this is refused before it fills memory
MAX_TEXT_BYTES = 256 << 20


def _too_big(path: str | Path, what: str) -> IRSyntaxError:
    return IRSyntaxError(
        str(path),
        1,
        1,
        f"{what} more than {MAX_TEXT_BYTES >> 20} MiB",
        [f"an IR file of at most {MAX_TEXT_BYTES >> 20} MiB"],
    )


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a regular file.  ``stat`` comes first: opening a FIFO or a terminal named
    ``x.mlir`` would block forever, and a device could stream without end; such a file is refused
    at 1:1, as any other input that is not IR."""
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            what = _SPECIAL.get(stat.S_IFMT(mode), "a special file")
            raise IRSyntaxError(str(path), 1, 1, f"{what}, not a regular file", ["a regular file"])
        with open(path, "rb") as fh:
            data = fh.read(MAX_TEXT_BYTES + 1)  # not stat's size: a file can grow while it is read
    except OSError as exc:  # a symlink loop, a /proc file that fails to read (EIO), a permission
        why = exc.strerror or str(exc)
        raise IRSyntaxError(str(path), 1, 1, f"cannot be read: {why}", ["a readable regular file"]) from None
    if len(data) > MAX_TEXT_BYTES:
        raise _too_big(path, "a file of")
    return data


def decode(data: bytes, path: str | Path) -> str:
    """UTF-8 text; the first bad byte is reported at its line and column (columns count characters,
    as the front ends' do: the part of the line before the bad byte is valid UTF-8)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:  # lines end at \n, \r\n or a lone \r, as read_text reads them
        start = max(data.rfind(b"\n", 0, exc.start), data.rfind(b"\r", 0, exc.start)) + 1
        ends = data.count(b"\n", 0, exc.start) + data.count(b"\r", 0, exc.start) - data.count(b"\r\n", 0, exc.start)
        line = ends + 1
        col = len(data[start : exc.start].decode("utf-8")) + 1
        raise IRSyntaxError(
            str(path), line, col, f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", ["UTF-8 text"]
        ) from None


def _decompress(data: bytes, path: str | Path) -> bytes:
    """``lzma.decompress`` (concatenated streams; what follows the last stream is ignored) that stops
    at MAX_TEXT_BYTES: an xz bomb of GBs is refused in the time it takes to unpack the limit."""
    out: list[bytes] = []
    total = 0
    while data:
        dec = lzma.LZMADecompressor()
        try:
            chunk = dec.decompress(data, max_length=MAX_TEXT_BYTES - total + 1)
        except lzma.LZMAError:
            if out:  # trailing bytes that are not a stream, as lzma.decompress ignores them
                break
            raise
        total += len(chunk)
        out.append(chunk)
        if total > MAX_TEXT_BYTES:
            raise _too_big(path, "decompresses to")
        if not dec.eof:
            raise lzma.LZMAError("the stream ends early")
        data = dec.unused_data
    if not out:
        raise lzma.LZMAError("no stream")
    return b"".join(out)


def read_text(path: str | Path) -> str:
    """A user's text file (IR or meta.json); ``.xz`` files are decompressed."""
    data = read_bytes(path)
    if Path(path).suffix == ".xz":
        try:
            data = _decompress(data, path)
        except lzma.LZMAError:
            raise IRSyntaxError(str(path), 1, 1, "not a valid xz stream", ["an xz-compressed IR file"]) from None
    text = decode(data, path).removeprefix("\ufeff")  # a UTF-8 BOM (Windows tools): no editor shows it
    if "\r" in text:  # CRLF and lone CR (classic Mac, a bad pipe) end lines as \n does, in editors too;
        # read as one line, a CR-only module had no kernel in it ("clean") or was all one comment
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text
