"""Where each tensor argument of a kernel came from, for meta.json (README, "On-disk layout").

The MLIR type of a tensor does not say how the user made it, and facts the reporting rule uses depend
on that: ``from_dlpack(t, use_32bit_stride=True)`` makes the DSL's runtime refuse, at each call, a
tensor spanning more than INT32_MAX elements (a fake tensor with i32 strides is never checked), and
fake tensors built with one ``cute.sym_int()`` share that extent.  So the Python objects are watched
where the DSL binds them to the host function's block arguments (``__new_from_mlir_values__``), and:

- a kernel argument the host passes on unchanged (a launch operand that is that block argument) gets
  ``origin``, ``use_32bit_stride`` and, per dynamic shape mode, the ``sym`` it shares;
- a kernel argument the host makes as a view of one's memory (``cute.make_tensor(x.iterator,
  layout)``: ``cute.make_view`` of ``cute.get_iter`` of the block argument, no offset) gets
  ``view_of``: that host tensor's layout and facts (an access into the view is inside its memory);
- either gets ``sym_peers``: the other host tensors with a mode of one of its syms.

A view the host moves (``x.iterator + offset``) or slices gets none of this.  Every function here
fails open (capturing/meta.py calls it under a catch-all): these facts are extras, never the capture.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

from irscan.capturing.meta import KernelInfo, _attr_text, describe_tensor_type, signature_args

_ORIGINS = {"_Tensor": "dlpack", "_FakeTensor": "fake"}
#: .pending: {value handle: facts} of the host function being traced; .syms: {id(SymInt): "sK"}
_bound = threading.local()


def watch_host_tensors() -> None:
    """Wrap the DSL's runtime tensor classes so that each host block argument's Python tensor is known,
    once ``cutlass.cute.runtime`` is imported (the hook goes in while ``import cutlass`` is still under
    way, before it is).  Idempotent; recording never fails the user's compile."""
    from irscan.capturing.env import after_import

    after_import("cutlass.cute.runtime", _watch)


def _watch() -> None:
    try:
        _wrap_dsl()
    except Exception as exc:  # noqa: BLE001 (a DSL that changed shape loses these facts, nothing else)
        print(f"irscan: tensor origins not recorded ({type(exc).__name__}: {exc})", file=sys.stderr)


def _wrap_dsl() -> None:
    from cutlass.base_dsl.dsl import BaseDSL
    from cutlass.cute import runtime

    # the reset first: without it a handle recorded for one module could name a value of the next
    types = BaseDSL.generate_mlir_function_types
    if not getattr(types, "_irscan", False):

        def start(self: Any, *args: Any, **kwargs: Any) -> Any:
            _bound.pending, _bound.syms = {}, {}  # a new host function: the last one's are another module's
            return types(self, *args, **kwargs)

        start._irscan = True  # type: ignore[attr-defined]
        BaseDSL.generate_mlir_function_types = start  # type: ignore[method-assign]
    for cls in (getattr(runtime, n, None) for n in _ORIGINS):
        new = getattr(cls, "__new_from_mlir_values__", None)
        if new is None or getattr(new, "_irscan", False):
            continue

        def bind(self: Any, values: list[Any], _new: Any = new) -> Any:
            try:  # the value's handle and facts, never the objects: the module may go before the list
                _record(self, values[0])
            except Exception:  # noqa: BLE001
                pass
            return _new(self, values)

        bind._irscan = True  # type: ignore[attr-defined]
        cls.__new_from_mlir_values__ = bind  # type: ignore[union-attr]


def _record(obj: Any, value: Any) -> None:
    v = _value(value)
    if v is None:
        return
    facts = tensor_facts(obj, _bound.__dict__.setdefault("syms", {}))
    # never str(v.type) here: printing a type while the host function is traced reorders the
    # constants the DSL creates after it (the host IR changed; the type is read once it is built)
    facts["host_arg"] = _arg_number(v)
    _bound.__dict__.setdefault("pending", {})[hash(v)] = facts


def _value(v: Any) -> Any:
    """The ``ir.Value`` under the DSL's wrappers (``CoreTensor``, ``cute.tensor._Tensor``: ``.value``)."""
    from cutlass._mlir import ir

    for _ in range(4):
        if isinstance(v, ir.Value):  # type: ignore[attr-defined]
            return ir.Value(v)  # type: ignore[attr-defined]
        v = getattr(v, "value", None)
    return None


def _arg_number(v: Any) -> int | None:
    from cutlass._mlir import ir

    try:
        return int(ir.BlockArgument(v).arg_number)  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 (not a block argument)
        return None


def _handle(v: Any) -> int | None:
    """A value's MLIR handle: the DSL's value classes overload ``==``, the handle does not."""
    v = _value(v)
    return hash(v) if v is not None else None


def tensor_facts(obj: Any, syms: dict[int, str]) -> dict[str, Any]:
    """What a Python tensor says that its MLIR type does not: where it came from, whether its strides
    were asked for in 32 bits, and per shape mode the id of the ``SymInt`` it shares (None if static
    or not a symbol); ``syms`` numbers the symbols of one compile (``s0``, ``s1``, ...)."""
    origin = _ORIGINS.get(type(obj).__name__, "other")
    shape = getattr(getattr(obj, "_typed_tensor", None), "shape", None) if origin == "fake" else None
    modes: list[str | None] = []
    for e in shape if isinstance(shape, tuple) else ():
        modes.append(syms.setdefault(id(e), f"s{len(syms)}") if type(e).__name__ == "SymInt" else None)
    return {"origin": origin, "use_32bit_stride": bool(getattr(obj, "_use_32bit_stride", False)), "syms": modes}


def _with_syms(tensor: dict[str, Any], syms: list[str | None]) -> dict[str, Any]:
    """``tensor`` (describe_tensor_type's) with each dynamic shape mode's ``sym``."""
    if len(syms) == len(tensor.get("modes", ())):
        for md, sym in zip(tensor["modes"], syms, strict=True):
            if sym is not None and md["shape"].get("kind") == "dynamic":
                md["shape"]["sym"] = sym
    return tensor


def _syms(tensor: dict[str, Any]) -> set[str]:
    return {md["shape"]["sym"] for md in tensor.get("modes", ()) if "sym" in md["shape"]}


def host_tensor_facts(module: Any, infos: dict[str, KernelInfo]) -> None:
    """Give each kernel argument that is (a view of) a host block argument bound to a Python tensor
    that tensor's facts, read off the host functions' ``cuda.launch_ex`` operands."""
    pending: dict[int, dict[str, Any]] = getattr(_bound, "pending", {})
    _bound.pending = {}
    types = _host_argument_types(module) if pending else {}
    hosts = {}
    for key, facts in pending.items():
        tensor = describe_tensor_type(types[key]) if key in types else None
        if tensor is not None:
            hosts[key] = {"host_arg": facts["host_arg"], "origin": facts["origin"], **_with_syms(tensor, facts["syms"])}
    for op in _launches(module) if hosts else ():
        info = infos.get((_attr_text(op, "callee") or "").rsplit("::", 1)[-1].strip('@" '))
        operands = list(op.operands)[1:]  # the launch config first, then the kernel's arguments
        if info is None or len(operands) != len(info.args):
            continue
        for arg, operand in zip(info.args, operands, strict=True):
            if "modes" not in arg:
                continue  # not a tensor
            h = _handle(operand)
            if h is not None and h in hosts:
                facts = pending[h]
                arg["origin"], arg["use_32bit_stride"] = facts["origin"], facts["use_32bit_stride"]
                _with_syms(arg, facts["syms"])
            else:
                h = _view_base(operand)
                if h is None or h not in hosts:
                    continue  # a tensor the host made, moved or sliced
                arg["view_of"] = hosts[h]
            own = _syms(arg) | _syms(arg.get("view_of", {}))
            peers = [t for k, t in hosts.items() if k != h and own & _syms(t)]
            if peers:
                arg["sym_peers"] = peers


def _view_base(operand: Any) -> int | None:
    """The handle of host block argument X when ``operand`` is ``cute.make_view(cute.get_iter(X), layout)``."""
    v = _value(operand)
    for name in ("cute.make_view", "cute.get_iter"):
        owner = getattr(v, "owner", None)
        if getattr(getattr(owner, "operation", owner), "name", None) != name:
            return None
        v = _value(owner.operands[0])  # type: ignore[union-attr]
    return hash(v) if v is not None else None


def _host_argument_types(module: Any) -> dict[int, str]:
    """{handle: type text} of the entry-block arguments of the module's host functions, the text read
    off the function's signature attribute as meta.py reads the kernels' (never by printing a type)."""
    out = {}
    for top in module.body.operations:
        if top.operation.name == "gpu.module" or not top.regions or not top.regions[0].blocks:
            continue
        types = [a["type"] for a in signature_args(top)]
        for i, a in enumerate(top.regions[0].blocks[0].arguments):
            h = _handle(a)
            if h is not None and i < len(types):
                out[h] = types[i]
    return out


def _launches(module: Any) -> Iterator[Any]:
    """The ``cuda.launch_ex`` ops of the module's host functions (outside ``gpu.module``)."""
    for top in module.body.operations:
        if top.operation.name != "gpu.module":
            for region in top.regions:
                for block in region.blocks:
                    yield from (op for op in block.operations if op.operation.name == "cuda.launch_ex")
