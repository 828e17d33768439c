"""``python -m tests.fuzzing --cases N --seed S``: the long fuzz run."""

import sys

from .run import main

sys.exit(main())
