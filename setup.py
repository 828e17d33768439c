"""Ships what pyproject.toml cannot express: ``irscan-capture.pth`` into site-packages, and the
top-level ``grammars/`` and ``patches/`` (data, kept beside the package by the design card) into
``irscan/grammars/`` and ``irscan/patches/`` (patch mode's rules and the examples they name).

The .pth line makes ``IRSCAN_CAPTURE=DIR`` work for any Python process; it imports nothing unless
that variable is set.  It is copied to the root of the build tree, so a wheel carries it at its root
and the installer puts it straight into site-packages, whatever the Python version or platform.
setuptools' editable installs (PEP 660) skip such files; ``irscan capture``/``irscan audit`` do not
need the .pth (they use irscan/capturing/_boot), and the README says so.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "irscan-capture.pth"


class BuildWithPth(build_py):
    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):  # an editable install reads ../grammars directly
            for src, dst in self._extra():
                Path(dst).parent.mkdir(parents=True, exist_ok=True)
                self.copy_file(src, dst, preserve_mode=False)

    def _extra(self) -> list[tuple[str, str]]:
        root = Path(self.build_lib)
        pairs = [(PTH, str(root / PTH))]
        pairs += [(str(g), str(root / "irscan" / "grammars" / g.name)) for g in sorted(Path("grammars").glob("*.lark"))]
        data = [p for p in sorted(Path("patches").rglob("*")) if p.is_file() and p.suffix in (".json", ".mlir", ".ptx")]
        pairs += [(str(p), str(root / "irscan" / p)) for p in data]
        return pairs

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            outs += [dst for _src, dst in self._extra()]
        return outs


setup(cmdclass={"build_py": BuildWithPth})
