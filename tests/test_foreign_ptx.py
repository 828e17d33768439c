"""PTX from outside CuTe DSL: nvcc's output for a CUDA C++ kernel with the classic int index bug.

``int idx = blockIdx.x * n_cols + threadIdx.x`` is formed in 32 bits and sign-extended by
``mul.wide.s32`` into the address; irscan finds it with no MLIR and no capture metadata.  The same
kernel with ``size_t`` arithmetic is clean.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from irscan.pipeline import scan_paths

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")

KERNEL = """
extern "C" __global__ void scale_rows(float* out, const float* in, int n_cols) {
    %s idx = %sblockIdx.x * n_cols + threadIdx.x;
    out[idx] = in[idx] * 2.0f;
}
"""


def _ptx(tmp_path: Path, index_type: str, cast: str) -> Path:
    src = tmp_path / f"k_{index_type.replace(' ', '_')}.cu"
    src.write_text(KERNEL % (index_type, cast))
    out = src.with_suffix(".ptx")
    subprocess.run(["nvcc", "-arch=sm_80", "-ptx", "-lineinfo", str(src), "-o", str(out)], check=True,
                   capture_output=True)  # fmt: skip
    return out


def test_int_index_in_nvcc_ptx_is_found(tmp_path: Path) -> None:
    res = scan_paths([_ptx(tmp_path, "int", "")])
    assert len(res.findings) == 1, [f.message for f in res.findings]
    f = res.findings[0]
    assert f.ir == "ptx" and f.severity == "may" and f.check == "narrow-widened-late"
    # the access is line 4; the int arithmetic that wraps is line 3 (from .loc/.file)
    assert f.line == 4 and f.file and f.file.endswith(".cu")
    assert f.origin is not None and f.origin["line"] == 3 and "int idx" in f.origin["source"]
    assert f.wraps_when is not None and f.wraps_when["signedness"] == "signed"
    assert "ctaid.x" in f.expression and "arg2" in f.expression


def test_size_t_index_in_nvcc_ptx_is_clean(tmp_path: Path) -> None:
    res = scan_paths([_ptx(tmp_path, "size_t", "(size_t)")])
    assert res.kernels and res.findings == []
