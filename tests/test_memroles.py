"""Operand roles of memory instructions, both IRs (frontend/ptx/memroles.py, frontend/mlir/memroles.py).

``Op.addr`` is the element address in global memory where an op has several pointers (cp.async: the
global source, not the shared destination); a tensor map is a handle, not an address
(``attrs["tensor_map"]``); ``attrs["addrs"]`` lists every element address when there are several.
Hand-written PTX per form, then the real captures where the forms occur.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from irbuild import ptx_kernel

from irscan.frontend import mlir, ptx
from irscan.ir import AddressSpace, Kind, Op

ROOT = Path(__file__).resolve().parents[1]


def ptx_op(line: str) -> Op:
    fn = ptx_kernel(line)
    (op,) = [o for o in fn.ops() if o.text == line]
    return op


@pytest.mark.parametrize(
    ("text", "addr", "space", "tmap"),
    [
        ("ld.global.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1+16];", 0, AddressSpace.GLOBAL, None),
        ("st.global.v2.u32 [%rd1], {%r1, %r2};", 0, AddressSpace.GLOBAL, None),
        ("atom.global.add.u32 %r1, [%rd1], %r2;", 0, AddressSpace.GLOBAL, None),
        ("red.global.add.u32 [%rd1], %r2;", 0, AddressSpace.GLOBAL, None),
        ("prefetch.global.L2 [%rd1];", 0, AddressSpace.GLOBAL, None),
        ("cp.async.ca.shared.global [%r1], [%rd1], 16;", 1, AddressSpace.GLOBAL, None),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], %r2, [%r3];", 1,
         AddressSpace.GLOBAL, None),
        ("cp.async.bulk.global.shared::cta.bulk_group [%rd1], [%r1], %r2;", 0, AddressSpace.GLOBAL, None),
        # TMA: the tensor map carries the coordinates; the shared side is a small window
        ("cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], "
         "[%r4];", 0, AddressSpace.SHARED, 1),
        ("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd1, {%r2, %r3}], [%r1];", 3,
         AddressSpace.SHARED, 0),
        ("prefetch.tensormap [%rd1];", None, None, 0),
    ],
)  # fmt: skip
def test_ptx_roles(text: str, addr: int | None, space: AddressSpace | None, tmap: int | None) -> None:
    op = ptx_op(text)
    assert op.kind in (Kind.LOAD, Kind.STORE, Kind.ATOMIC, Kind.MEMOP)
    assert (op.addr, op.space, op.attrs.get("tensor_map")) == (addr, space, tmap)
    if addr is not None and tmap is None and "shared" in text:
        assert {a[0] for a in op.attrs["addrs"]} >= {0, 1}  # both element addresses listed


def _first(path: Path, name: str) -> Op:
    mod = mlir.parse_file(str(path)) if path.name.startswith("module.mlir") else ptx.parse_file(path)
    return next(o for fn in mod.functions for o in fn.ops() if o.name.startswith(name))


GDN = ROOT / "corpus/thirdparty/fi_gdn_decode_sm90a/001_kernel_cutlass_gdn_decode_kernel_small_batch_nontranspose_Ti"


@pytest.mark.skipif(not GDN.exists(), reason="corpus/thirdparty not checked out")
def test_cp_async_global_source_in_both_irs() -> None:
    """flashinfer's GDN decode state load (issue 8: the MLIR side took the shared destination)."""
    m = _first(GDN / "module.mlir.xz", "nvvm.cp.async.shared.global")
    assert (m.addr, m.space) == (1, AddressSpace.GLOBAL)
    assert [(a[0], a[1]) for a in m.attrs["addrs"]] == [(0, "shared"), (1, "global")]
    p = _first(GDN / "module.ptx.xz", "cp.async.cg.shared.global")
    assert (p.addr, p.space) == (1, AddressSpace.GLOBAL)


TMA = sorted(ROOT.glob("corpus/thirdparty/quack_gemm_sm90a/*/module.mlir.xz"))


@pytest.mark.skipif(not TMA, reason="corpus/thirdparty not checked out")
def test_tma_tensor_map_is_not_an_address_in_both_irs() -> None:
    folder = TMA[0].parent
    for name in ("nvvm.cp.async.bulk.tensor.global.shared.cta", "nvvm.cp.async.bulk.tensor.shared.cluster.global"):
        m = _first(folder / "module.mlir.xz", name)
        assert m.space in (AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER), m.text
        assert m.attrs["tensor_map"] == (0 if "global.shared" in name else 1)
    p = _first(folder / "module.ptx.xz", "cp.async.bulk.tensor")
    assert p.space in (AddressSpace.SHARED, AddressSpace.SHARED_CLUSTER) and "tensor_map" in p.attrs


GATED = sorted(ROOT.glob("corpus/thirdparty/fi_gated_residual_rmsnorm_sm100a/*/module.mlir.xz"))


@pytest.mark.skipif(not GATED, reason="corpus/thirdparty not checked out")
def test_nvvm_load_and_store_ext_are_loads_and_stores() -> None:
    """flashinfer's evict_first copies (newer DSL releases): ``nvvm.load.ext %p`` / ``nvvm.store.ext %v, %p``."""
    ld = _first(GATED[0], "nvvm.load.ext")
    st = _first(GATED[0], "nvvm.store.ext")
    assert (ld.kind, ld.addr, ld.space) == (Kind.LOAD, 0, AddressSpace.GLOBAL)
    assert (st.kind, st.addr, st.space) == (Kind.STORE, 1, AddressSpace.GLOBAL)
