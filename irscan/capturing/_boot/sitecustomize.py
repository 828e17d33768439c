"""Put on PYTHONPATH by `irscan capture`/`irscan audit`: arm the capture, then chain to any other
sitecustomize the environment has (ours would otherwise shadow it)."""

import importlib.util
import os
import sys

try:
    from irscan.capturing.env import activate

    activate()
except Exception as exc:  # never stop the user's interpreter from starting
    print(f"irscan: start-up hook failed: {exc}", file=sys.stderr)

_here = os.path.dirname(os.path.abspath(__file__))
_rest = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _rest)
if _spec is not None and _spec.origin and os.path.dirname(_spec.origin) != _here and _spec.loader:
    _mod = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_mod)
