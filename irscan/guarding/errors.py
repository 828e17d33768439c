"""The exception a guarded launch raises instead of running a kernel whose addresses wrap."""

from __future__ import annotations


class WrapError(Exception):
    """This launch makes a 32-bit index of the kernel leave its range; nothing was sent to the GPU.

    ``kernel``, ``file``/``line`` (the access), ``expression`` (in the kernel's parameter names),
    ``value`` (what it reaches at this launch), ``limit``, ``values`` (the launch's inputs it names),
    ``finding`` (the static finding's id) and ``contract`` (True when the verdict rests on a loaded
    coordinate staying inside the mode it indexes) let a caller act on it without reading the text.
    """

    def __init__(
        self,
        message: str,
        *,
        kernel: str,
        file: str | None,
        line: int | None,
        expression: str,
        value: int,
        limit: int,
        values: dict[str, int],
        finding: str,
        contract: bool = False,
    ):
        super().__init__(message)
        self.kernel, self.file, self.line = kernel, file, line
        self.expression, self.value, self.limit = expression, value, limit
        self.values, self.finding, self.contract = values, finding, contract
