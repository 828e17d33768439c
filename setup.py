"""Only here to ship ``irscan-capture.pth`` into site-packages, which pyproject.toml cannot express.

The .pth line makes ``IRSCAN_CAPTURE=DIR`` work for any Python process; it imports nothing unless
that variable is set.  It is copied to the root of the build tree, so a wheel carries it at its root
and the installer puts it straight into site-packages, whatever the Python version or platform.
setuptools' editable installs (PEP 660) skip such files; ``irscan capture``/``irscan audit`` do not
need the .pth (they use irscan/_boot), and the README says so.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PTH = "irscan-capture.pth"


class BuildWithPth(build_py):
    def run(self) -> None:
        super().run()
        if not getattr(self, "editable_mode", False):
            self.copy_file(PTH, str(Path(self.build_lib) / PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        outs = list(super().get_outputs(include_bytecode))
        if not getattr(self, "editable_mode", False):
            outs.append(str(Path(self.build_lib) / PTH))
        return outs


setup(cmdclass={"build_py": BuildWithPth})
