"""Dry runs of the guard: check launches of any size on a machine without a GPU (or without the
memory), as the tests and bench/bench_guard.py do.

* :func:`virtual` is a numpy view of any shape and strides over a few KB (``as_strided``): what the
  plain JIT path accepts.  Every element aliases the same bytes; nothing may read it.
* :class:`VirtualTensor` is a DLPack tensor that claims device memory it does not have: what the
  TVM-FFI path accepts (it refuses host memory).  A launch it reaches faults or is refused by the
  driver, so it is for launches the guard is expected to stop, or for a machine with no GPU.
* :func:`compiled_by` runs a program unchanged and keeps what its ``cute.compile`` calls return.
"""

from __future__ import annotations

import ctypes
import runpy
from pathlib import Path
from typing import Any

from irscan.guarding.values import DLTensor

#: DLPack dtype codes (``DLDataTypeCode``) by the DSL's element type names
DL_CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4}
KDL_CUDA = 2


def virtual(shape: tuple[int, ...], strides: tuple[int, ...], dtype: Any = "float32") -> Any:
    """A numpy tensor of ``shape`` and ``strides`` (in elements) over a 4 KB buffer."""
    import numpy as np

    buf = np.zeros(4096 // np.dtype(dtype).itemsize, dtype=dtype)
    return np.lib.stride_tricks.as_strided(buf, shape=shape, strides=[s * buf.itemsize for s in strides])


class _Managed(ctypes.Structure):
    """DLPack's DLManagedTensor: the tensor, its owner's context, the deleter the consumer calls."""


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]
_NOOP = _DELETER(lambda p: None)  # the memory is nobody's: nothing to free
_capsule = ctypes.pythonapi.PyCapsule_New
_capsule.restype = ctypes.py_object
_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class VirtualTensor:
    """A DLPack tensor on CUDA device 0 at a fake address, of any shape and strides (elements)."""

    def __init__(self, shape: tuple[int, ...], strides: tuple[int, ...], dtype: str = "bfloat16"):
        kind = dtype.rstrip("0123456789")
        self.code, self.bits = DL_CODES[kind], int(dtype[len(kind) :])
        self._shape = (ctypes.c_int64 * len(shape))(*shape)
        self._strides = (ctypes.c_int64 * len(strides))(*strides)
        self._exported: list[_Managed] = []  # alive as long as the tensor: consumers may keep them

    def __dlpack_device__(self) -> tuple[int, int]:
        return (KDL_CUDA, 0)

    def __dlpack__(self, stream: Any = None, **kwargs: Any) -> Any:
        m = _Managed()
        t = m.dl_tensor
        t.data, t.device.device_type, t.device.device_id = 1 << 40, KDL_CUDA, 0
        t.ndim = len(self._shape)
        t.dtype.code, t.dtype.bits, t.dtype.lanes = self.code, self.bits, 1
        t.shape = ctypes.cast(self._shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(self._strides, ctypes.POINTER(ctypes.c_int64))
        m.deleter = _NOOP
        self._exported.append(m)
        return _capsule(ctypes.addressof(m), b"dltensor", None)


def compiled_by(program: str | Path, options: str = "") -> list[Any]:
    """Run ``program`` as it stands and return what each of its ``cute.compile`` calls returned
    (``options`` added to calls that give none, e.g. ``--enable-tvm-ffi``)."""
    import cutlass.cute as cute

    kept: list[Any] = []
    original = cute.compile

    def keep(*args: Any, **kwargs: Any) -> Any:
        if options:
            kwargs.setdefault("options", options)
        kept.append(original(*args, **kwargs))
        return kept[-1]

    cute.compile = keep  # type: ignore[assignment]
    try:
        runpy.run_path(str(program), run_name="__irscan_dry_run__")
    finally:
        cute.compile = original
    return kept
