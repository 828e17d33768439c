"""meta.json's facts about where each tensor argument came from (irscan/capturing/meta.py): ``origin``,
``use_32bit_stride`` and the ``sym`` a fake tensor's dynamic extent shares, from a real compile (no GPU).
"""

import json
from pathlib import Path

import pytest

from irscan.capturing import store

FIXTURES = Path(__file__).parent / "fixtures"
SCRIPT = FIXTURES / "compile_origins.py"


def _args(out: Path) -> dict[str, list[dict]]:
    """Each kernel's args by the kernel's Python name; the second module's copy kernel as "view"."""
    found = {}
    for i, folder in enumerate(sorted(p for p in out.iterdir() if p.is_dir())):
        meta = json.loads((folder / "meta.json").read_text())
        store.check_meta(meta)
        for k in meta["kernels"]:
            found["view" if i else k["name"].split("_kernel_")[0].removeprefix("kernel_cutlass_")] = k["args"]
    return found


@pytest.fixture(scope="module", params=["irscan capture", "irscan.capture() after import cutlass"])
def args(request, run_python, tmp_path_factory):
    out = tmp_path_factory.mktemp("origins") / "cap"
    if request.param == "irscan capture":
        proc = run_python("-m", "irscan", "capture", "--out", out, "--", "python", SCRIPT, cwd=FIXTURES)
    else:
        proc = run_python(SCRIPT, "--api", out, cwd=FIXTURES)
    assert proc.returncode == 0, proc.stderr
    return _args(out)


def test_fake_tensors_sharing_a_sym_int_share_a_sym(args):
    src, dst = args["copy"]
    assert (src["origin"], src["use_32bit_stride"]) == ("fake", False)
    assert (dst["origin"], dst["use_32bit_stride"]) == ("fake", True)
    assert src["modes"][0]["shape"]["sym"] == dst["modes"][0]["shape"]["sym"] is not None


def test_from_dlpack_with_32bit_strides_is_recorded(args):
    x, alpha = args["scale"]
    assert (x["origin"], x["use_32bit_stride"], x["layout"]) == ("dlpack", True, "(?,?):(?,1)")
    assert all("sym" not in m["shape"] for m in x["modes"])  # a DLPack extent is no shared symbol
    assert "origin" not in alpha  # a scalar


def test_a_view_of_a_host_tensor_names_it_and_the_host_tensors_sharing_its_extent(args):
    src, flat = args["view"]
    assert "origin" not in flat and flat["layout"] == "?:1"  # the host made it: not checked by the DSL
    base = flat["view_of"]
    assert (base["dtype"], base["layout"], base["host_arg"], base["origin"]) == ("f32", "(?,4):(4,1)", 1, "fake")
    sym = base["modes"][0]["shape"]["sym"]
    assert src["modes"][0]["shape"]["sym"] == sym
    peers = {(p["host_arg"], p["layout"]) for p in flat["sym_peers"]}
    assert peers == {(0, "(?):(1)"), (2, "(?,8,16):(128,16,1)")}  # src, and big, which no kernel sees


@pytest.mark.parametrize(
    ("arg", "what"),
    [
        ({"use_32bit_stride": 1}, "kernels[0].args[0].use_32bit_stride: expected true or false, got 1"),
        ({"origin": 3}, "kernels[0].args[0].origin: expected a string, got 3"),
        ({"modes": [{"shape": {"kind": "dynamic", "width": 32, "sym": 0}}]}, "modes[0].shape.sym: expected a string"),
        ({"view_of": {"host_arg": -1}}, "kernels[0].args[0].view_of.host_arg: expected an integer >= 0, got -1"),
        ({"sym_peers": [{"dtype": 16}]}, "kernels[0].args[0].sym_peers[0].dtype: expected a string, got 16"),
        ({"sym_peers": {}}, "kernels[0].args[0].sym_peers: expected a list"),
    ],
)
def test_bad_origin_fields_name_the_field(arg, what):
    with pytest.raises(Exception, match="expected") as exc:
        store.check_meta({"schema": store.SCHEMA, "kernels": [{"name": "k", "args": [arg]}]})
    assert what in str(exc.value)


def test_old_meta_without_the_fields_is_still_read():
    store.check_meta({"schema": store.SCHEMA, "kernels": [{"name": "k", "args": [{"layout": "(?):(1)",
                      "modes": [{"shape": {"kind": "dynamic", "width": 32}}]}]}]})  # fmt: skip
