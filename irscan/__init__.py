"""irscan: find the 32-bit address arithmetic that makes GPU kernels fail past 2^31 elements or 4 GB."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["capture", "audit", "guard", "patch", "WrapError", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from irscan.capturing.hook import capture
    from irscan.guarding.errors import WrapError
    from irscan.guarding.session import guard
    from irscan.patching.inhook import patch


def __getattr__(name: str) -> Any:
    # Lazy, so that `import irscan` never imports the DSL (capture must be able to set its
    # environment variables before the first `import cutlass`).
    if name == "capture":
        from irscan.capturing.hook import capture

        return capture
    if name == "audit":
        from irscan.pipeline import audit

        return audit
    if name == "guard":
        from irscan.guarding.session import guard

        return guard
    if name == "patch":  # irscan/patching, not irscan/patch: a subpackage would shadow this name
        from irscan.patching.inhook import patch

        return patch
    if name == "WrapError":
        from irscan.guarding.errors import WrapError

        return WrapError
    raise AttributeError(name)
