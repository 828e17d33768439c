import sys

from irscan.cli import main

sys.exit(main())
