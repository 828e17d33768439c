"""Finding: plain data that every output format renders.  Its JSON form is a public contract:
fields are only ever added, never renamed or given a new meaning (README, "JSON output")."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Step:
    """One op of a chain, from the inputs to the address."""

    op: str
    ir_line: int
    text: str
    role: str  # "input", "arithmetic", "narrowing", "widening", "address", "access"
    width: int = 0
    range: list[int] | None = None  # ideal (unwrapped) [lo, hi]
    wraps: bool = False
    note: str = ""


@dataclass
class Finding:
    kernel: str
    ir: str  # "mlir" | "ptx"
    check: str  # check id, e.g. "narrow-widened-late"
    severity: str  # "must" | "may"
    file: str | None
    line: int | None
    col: int | None
    source: str | None  # the Python statement, when known
    source_precision: str  # "statement" (from IR locations) | "kernel" (the kernel's def line) | "none"
    message: str
    sink: dict[str, Any]
    sinks: list[dict[str, Any]]
    chain: list[Step]
    wraps_when: dict[str, Any] | None
    witness: dict[str, Any] | None
    undefined_behaviour: bool
    fix: str
    ir_file: str
    ir_line: int
    expression: str  # the ideal value at the widening point, e.g. "100000*ctaid.x + tid.x"
    twin: str | None = None  # id of the same access's finding in the other IR
    origin: dict[str, Any] | None = None  # where the wrapping op itself came from, when another statement
    notes: list[str] = field(default_factory=list)
    id: str = ""

    def __post_init__(self) -> None:
        if not self.id:
            key = f"{self.ir}|{self.kernel}|{self.check}|{self.ir_line}|{self.expression}"
            self.id = hashlib.sha1(key.encode()).hexdigest()[:12]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)
