"""The shared vocabulary: both front ends' spellings of an address space or a special register meet."""

from __future__ import annotations

import json

import pytest

from irscan.ir import AddressSpace, sreg_name
from irscan.ir.spaces import from_nvvm, from_ptx


@pytest.mark.parametrize(
    ("nvvm", "ptx", "space"),
    [
        ("0", "generic", AddressSpace.GENERIC),
        ("1", "global", AddressSpace.GLOBAL),
        ("3", "shared::cta", AddressSpace.SHARED),
        ("3", "shared", AddressSpace.SHARED),
        ("4", "const", AddressSpace.CONST),
        ("5", "local", AddressSpace.LOCAL),
        ("6", "tmem", AddressSpace.TENSOR),
        ("7", "shared::cluster", AddressSpace.SHARED_CLUSTER),
        ("101", "param", AddressSpace.PARAM),
        ("42", "surf", AddressSpace.OTHER),
    ],
)
def test_both_spellings_of_an_address_space_meet(nvvm: str, ptx: str, space: AddressSpace) -> None:
    assert from_nvvm(nvvm) is space and from_ptx(ptx) is space


def test_an_address_space_reads_as_its_name_in_reports() -> None:
    g = AddressSpace.GLOBAL
    assert (f"a {g} load", str(g), json.dumps({"space": g})) == ("a global load", "global", '{"space": "global"}')


@pytest.mark.parametrize(
    ("nvvm", "ptx"),
    [("tid.x", "tid.x"), ("cluster.ctaid.y", "cluster_ctaid.y"), ("cluster.ctarank", "cluster_ctarank"),
     ("lanemask.lt", "lanemask_lt"), ("nclusterid.z", "nclusterid.z"), ("globaltimer_lo", "globaltimer_lo")],
)  # fmt: skip
def test_special_registers_are_named_as_ptx_names_them(nvvm: str, ptx: str) -> None:
    assert sreg_name(nvvm) == ptx and sreg_name(ptx) == ptx
