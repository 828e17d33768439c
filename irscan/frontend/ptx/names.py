"""The registers and labels of one PTX function, with the scoping of nested ``{ }`` blocks.

Names declared in a nested scope (inline asm: ``.reg .pred P1; LAB_WAIT: ... DONE:``) are local to
it in PTX, and the same names recur in every copy of the asm.  The lowering renames them ``name@N``
(N = the scope's serial number in the function; ``abcd@3.x`` for a component of a ``.v4`` register)
so that registers and labels are unique per function.

Lookups cost the same at any nesting depth: the innermost binding of each name is kept in a table,
and closing a scope undoes what it bound (a log per open scope), rather than searching the open
scopes from the inside out.
"""

from __future__ import annotations

from collections.abc import Iterable

_DIGITS = "0123456789"

#: (nesting depth, scope serial) of a binding
_Binding = tuple[int, int]


def split_number(name: str) -> tuple[str, str]:
    """``"%r12"`` -> ``("%r", "12")``: the name without its trailing digits, and those digits."""
    base = name.rstrip(_DIGITS)
    return base, name[len(base) :]


def _below(digits: str, n: int) -> bool:
    """``int(digits) < n``, without converting a digit run longer than any ``n`` (a 2**64 bound)."""
    sig = digits.lstrip("0")
    return len(sig) <= 20 and int(sig or "0") < n


class FunctionNames:
    """Declared registers (``.reg``, with ``%r<N>`` ranges and ``.v4`` vectors) and scope renaming."""

    def __init__(self) -> None:
        self.regs: set[str] = set()
        self.ranges: dict[str, int] = {}  # "%r" -> 8 for %r<8>  ("tmp_@3" -> 4 in scope 3)
        self.vecs: dict[str, tuple[str, ...]] = {}  # .v4 register -> its components ("abcd.x", ...)
        self.serial = 0  # scopes opened so far in the function
        self._open: list[int] = []  # serials of the open nested scopes, innermost last
        self._plain: dict[str, _Binding] = {}  # name -> its innermost binding
        self._prefix: dict[str, _Binding] = {}  # range prefix ("%r" of %r<8>) -> its innermost binding
        self._undo: list[list[tuple[dict[str, _Binding], str, _Binding | None]]] = []
        self._is_reg: dict[str, bool] = {}

    @property
    def scoped(self) -> bool:
        """Inside a nested scope: names must go through :meth:`rename`."""
        return bool(self._open)

    def open_scope(self, labels: Iterable[str]) -> None:
        """Enter a nested scope; its labels are bound at once (branches may jump forward to them)."""
        self.serial += 1
        self._open.append(self.serial)
        self._undo.append([])
        for name in labels:
            self._bind(self._plain, name)

    def close_scope(self) -> None:
        for table, name, old in reversed(self._undo.pop()):
            if old is None:
                del table[name]
            else:
                table[name] = old
        self._open.pop()

    def _bind(self, table: dict[str, _Binding], name: str) -> None:
        self._undo[-1].append((table, name, table.get(name)))
        table[name] = (len(self._open), self._open[-1])

    def declare(self, name: str, rng: int | None, vec: int = 1) -> None:
        if self._open:
            self._bind(self._plain if rng is None else self._prefix, name)
            name = f"{name}@{self._open[-1]}"
        if rng is None:
            self.regs.add(name)
            if vec > 1:
                self.vecs[name] = tuple(f"{name}.{c}" for c in "xyzw"[:vec])
        else:
            self.ranges[name] = rng
        self._is_reg.clear()

    def rename(self, name: str) -> str:
        """The function-unique name of ``name`` as seen from the innermost open scope."""
        comp = ""
        if len(name) > 2 and name[-2] == "." and name[-1] in "xyzw":
            name, comp = name[:-2], name[-2:]
        b = self._plain.get(name)
        if self._prefix:
            base, num = split_number(name)
            p = self._prefix.get(base) if num else None
            if p is not None and (b is None or p[0] > b[0]):  # the inner scope wins; in one scope, the name
                b = p
        return f"{name}@{b[1]}{comp}" if b is not None else name + comp

    def is_reg(self, name: str) -> bool:
        """Whether ``name`` (as renamed) is a declared register, rather than a symbol or a label."""
        try:
            return self._is_reg[name]
        except KeyError:
            pass
        key = name
        if len(name) > 2 and name[-2] == "." and name[-1] in "xyzw":
            name = name[:-2]
        v = name in self.regs
        if not v:
            base, at, tag = name.partition("@")
            prefix, num = split_number(base)
            if num:
                n = self.ranges.get(prefix + at + tag)
                v = n is not None and _below(num, n)
        self._is_reg[key] = v
        return v
