"""Shapes and strides of whatever a user passes to a compiled kernel, read without touching the GPU.

The guard needs, per tensor argument, its shape, its strides in elements and its element size: the
same numbers the DSL packs into the kernel's argument struct.  Each kind of argument has a cheap
accessor (numpy, torch, the DSL's own runtime tensor); anything else that speaks DLPack is read
from its capsule (the struct is the DLPack ABI, read through ctypes, the capsule left unconsumed so
its owner frees it).  A non-tensor gives empty tuples.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

Dims = tuple[tuple[int, ...], tuple[int, ...], int]
_NONE: Dims = ((), (), 0)


def _numpy(x: Any) -> Dims:
    it = x.itemsize
    st = x.strides
    if len(st) == 2:  # the common case, without a generator's cost
        return x.shape, (st[0] // it, st[1] // it), it
    return x.shape, tuple([s // it for s in st]), it


def _torch(x: Any) -> Dims:
    return tuple(x.shape), x.stride(), x.element_size()


def _cute(x: Any) -> Dims:
    return tuple(x.shape), tuple(x.stride), max(int(x.element_type.width) // 8, 1)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """The DLPack ABI's DLTensor (v0.x, the layout every exporter still produces for ``__dlpack__()``)."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def _dlpack(x: Any) -> Dims:
    cap = x.__dlpack__()
    t = DLTensor.from_address(_get_pointer(cap, b"dltensor"))  # DLManagedTensor starts with its DLTensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:  # compact row-major
        acc, out = 1, []
        for n in reversed(shape):
            out.append(acc)
            acc *= n
        strides = tuple(reversed(out))
    return shape, strides, max(t.dtype.bits * t.dtype.lanes // 8, 1)


def _none(x: Any) -> Dims:
    return _NONE


_BY_TYPE: dict[type, Callable[[Any], Dims]] = {}


def _accessor(tp: type) -> Callable[[Any], Dims]:
    names = {f"{c.__module__}.{c.__name__}" for c in tp.__mro__}
    if "numpy.ndarray" in names:
        return _numpy
    if "torch.Tensor" in names:
        return _torch
    if "cutlass.cute.typing.Tensor" in names:
        return _cute
    if hasattr(tp, "__dlpack__"):
        return _dlpack
    return _none


def dims(x: Any) -> Dims:
    """(shape, strides in elements, bytes per element) of a tensor argument; empty for anything else."""
    tp = type(x)
    fn = _BY_TYPE.get(tp)
    if fn is None:
        fn = _BY_TYPE[tp] = _accessor(tp)
    return fn(x)
