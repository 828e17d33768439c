"""Located errors: bad input text, with where and what was expected."""

from __future__ import annotations


class IRSyntaxError(Exception):
    """Bad input text: where, and what was expected.  The CLI prints it and exits 2."""

    def __init__(self, path: str, line: int, col: int, message: str, expected: list[str] | None = None):
        self.path, self.line, self.col, self.message = path, line, col, message
        self.expected = sorted(expected or [])
        exp = f" (expected one of: {', '.join(self.expected[:12])})" if self.expected else ""
        super().__init__(f"{path}:{line}:{col}: {message}{exp}")
