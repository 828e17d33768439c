"""Only here to ship ``irscan-capture.pth`` into site-packages, which pyproject.toml cannot express.

The .pth line makes ``IRSCAN_CAPTURE=DIR`` work for any Python process; it imports nothing unless
that variable is set.  It goes in as a data file at purelib's path relative to the prefix, which is
the one route setuptools honours for both ordinary and editable (PEP 660) installs.
"""

import os
import sys
import sysconfig

from setuptools import setup

PURELIB = os.path.relpath(sysconfig.get_path("purelib"), sys.prefix)

setup(data_files=[(PURELIB, ["irscan-capture.pth"])])
