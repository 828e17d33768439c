"""A bigger program for bench/bench_cached_audit.py: quack's persistent sm_90a GEMM (bf16, 128x256
tile, 2x1 cluster) compiled through quack's own compile path with no GPU, as
corpus/thirdparty/regen.py's ``quack_gemm_sm90a`` capture does.  Needs quack-kernels (the venv of
corpus/thirdparty/requirements.txt)."""

import os
import sys
from pathlib import Path

os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "corpus" / "thirdparty"))

from regen import _quack_gemm  # noqa: E402

_quack_gemm("sm_90a")()
