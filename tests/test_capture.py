"""The ``cute.compile`` capture hook against the real DSL, on a machine with no GPU.

Every compile runs in a child process (the DSL reads its environment once per process).  One
``irscan capture`` run is shared through the ``captured`` fixture (conftest.py); its compiles, in
order: copy (one static kernel), two (two kernels in one module, one with dynamic i32/i64 layout
modes), smem (a shared-memory kernel), copy again, and a direct ``@cute.jit`` call of copy.
"""

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import venv
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from irscan.capturing.env import DEFAULT_ARCH, NO_CACHE_ENV, has_gpu
from irscan.capturing.runner import BOOT_DIR

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
KERNELS = FIXTURES / "kernels.py"
COMPILE = FIXTURES / "compile_kernels.py"
API = FIXTURES / "api_capture.py"
FILES = {"meta.json", "module.mlir", "module.ptx", "module.cubin"}
BYTE_IDENTITY = ("copy", "two", "smem")  # the first three compiles of the session capture
no_gpu_only = pytest.mark.skipif(has_gpu(), reason="the sm_90a default applies when no GPU is detected")


def meta(folder: Path) -> dict:
    return json.loads((folder / "meta.json").read_text())


def kernel(m: dict, fn: str) -> dict:
    """The kernel of a meta.json made from the Python function ``fn`` (mangled: kernel_cutlass_<fn>_...)."""
    (k,) = [k for k in m["kernels"] if k["name"].startswith(f"kernel_cutlass_{fn}_")]
    return k


def decorated_lines() -> dict[str, int]:
    """First line of each ``@cute.kernel`` definition in fixtures/kernels.py: its decorator line, which is
    the function's ``co_firstlineno`` and the location the DSL gives the kernel."""
    tree = ast.parse(KERNELS.read_text())
    return {
        f.name: min(d.lineno for d in f.decorator_list)
        for f in tree.body
        if isinstance(f, ast.FunctionDef) and any(ast.unparse(d) == "cute.kernel" for d in f.decorator_list)
    }


def only(folder: Path, pattern: str) -> Path:
    (path,) = folder.glob(pattern)
    return path


# ---------------------------------------------------------------------------------- one process, many compiles


def test_each_compile_gets_its_own_complete_folder(captured):
    """Five compiles in one process (the same kernel three times) give five distinct, complete folders."""
    names = [f.name for f in captured.folders]
    assert [n[:4] for n in names] == ["000_", "001_", "002_", "003_", "004_"]
    assert len(set(names)) == 5
    for folder in captured.folders:
        assert {p.name for p in folder.iterdir()} == FILES, folder
        assert meta(folder)["module"] == folder.name
    assert "compiled copy\ncompiled two\ncompiled smem\ncompiled copy\n" in captured.proc.stdout


def test_every_folder_holds_both_irs_for_every_kernel(captured):
    """module.mlir is the LLVM-dialect module and module.ptx/.cubin its final outputs, for each kernel."""
    for folder in captured.folders:
        mlir = (folder / "module.mlir").read_text()
        ptx = (folder / "module.ptx").read_text()
        assert "gpu.module @kernels" in mlir
        assert (folder / "module.cubin").read_bytes()[:4] == b"\x7fELF"
        for k in meta(folder)["kernels"]:
            assert re.search(rf"llvm\.func @{k['name']}\(", mlir), (folder, k["name"])
            assert f".entry {k['name']}(" in ptx, (folder, k["name"])


def test_two_kernels_in_one_module(captured):
    m = meta(captured.folders[1])
    assert [k["name"].split("_")[2] for k in m["kernels"]] == ["copy", "scale"]
    assert (captured.folders[1] / "module.ptx").read_text().count(".entry ") == 2


def test_same_kernel_compiled_twice_gives_same_output_in_two_folders(captured):
    first, again = captured.folders[0], captured.folders[3]
    for name in ("module.ptx", "module.cubin", "module.mlir"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name


# ---------------------------------------------------------------------------------- meta.json


def test_meta_kernel_file_and_line_are_the_kernel_definition(captured):
    lines = decorated_lines()
    source = KERNELS.read_text().splitlines()
    expect = [
        ["copy_kernel"],
        ["copy_kernel", "scale_kernel"],
        ["smem_reverse_kernel"],
        ["copy_kernel"],
        ["copy_kernel"],
    ]
    for folder, fns in zip(captured.folders, expect, strict=True):
        for fn in fns:
            k = kernel(meta(folder), fn)
            assert Path(k["file"]).resolve() == KERNELS.resolve()
            assert k["line"] == lines[fn], (folder.name, fn)
            assert source[k["line"] - 1] == "@cute.kernel" and source[k["line"]].startswith(f"def {fn}(")


def test_meta_environment(captured):
    """The DSL version and wheel flavour (cu12/cu13 compiler libraries) the capture was made with."""
    env = meta(captured.folders[0])["environment"]
    assert env["dsl_version"] == env["nvidia-cutlass-dsl"] == metadata.version("nvidia-cutlass-dsl")
    libs = {}
    for flavour in ("cu12", "cu13"):
        try:
            libs[flavour] = metadata.version(f"nvidia-cutlass-dsl-libs-{flavour}")
        except metadata.PackageNotFoundError:
            pass
    for flavour, version in libs.items():
        assert env[f"nvidia-cutlass-dsl-libs-{flavour}"] == version
    assert env["wheel_flavour"] in (libs or ("cu12", "cu13"))
    assert env["python"] == sys.version.split()[0]


def test_meta_static_layout_and_static_launch(captured):
    k = kernel(meta(captured.folders[0]), "copy_kernel")
    assert [a["layout"] for a in k["args"]] == ["(1048576):(1)", "(1048576):(1)"]
    (mode,) = k["args"][0]["modes"]
    assert mode["shape"]["kind"] == "static" and mode["shape"]["value"] == 1 << 20
    assert mode["stride"]["kind"] == "static" and mode["stride"]["value"] == 1
    assert k["args"][0]["dtype"] == "f32" and k["args"][0]["space"] == "gmem"
    assert k["launch"]["reqntid"] == [128, 1, 1]
    assert k["launch"]["exact_block_dim"] == [128, 1, 1]
    assert k["launch"]["exact_grid_dim"] == [(1 << 20) // 128, 1, 1]


def test_meta_dynamic_layout_i32_i64_modes_and_dynamic_grid(captured):
    """(?, ?):(?{i64}, 1): dynamic i32 shapes, a dynamic i64 stride, a static unit stride; a scalar argument."""
    k = kernel(meta(captured.folders[1]), "scale_kernel")
    x, alpha = k["args"]
    assert x["layout"] == "(?,?):(?{i64},1)"
    facts = [
        (m["shape"]["kind"], m["shape"].get("width"), m["stride"]["kind"], m["stride"].get("width")) for m in x["modes"]
    ]
    assert facts == [("dynamic", 32, "dynamic", 64), ("dynamic", 32, "static", None)]
    assert alpha["type"] == "f32" and "modes" not in alpha
    # the grid depends on the tensor's dynamic shape, so there is no exact grid; the block is static
    assert k["launch"]["reqntid"] == [128, 1, 1] and k["launch"]["exact_block_dim"] == [128, 1, 1]
    assert "exact_grid_dim" not in k["launch"]


def test_shared_memory_kernel(captured):
    folder = captured.folders[2]
    k = kernel(meta(folder), "smem_reverse_kernel")
    assert k["launch"]["exact_grid_dim"] == [1024, 1, 1]
    ptx = (folder / "module.ptx").read_text()
    assert "st.shared" in ptx and "ld.shared" in ptx
    assert [k["name"] for k in meta(folder)["kernels"]] == [k["name"]]  # the smem global is not a kernel


@no_gpu_only
def test_arch_defaults_to_sm_90a_without_gpu(captured):
    for folder in captured.folders:
        assert meta(folder)["arch"] == DEFAULT_ARCH == "sm_90a"
        assert re.search(r"^\.target sm_90a$", (folder / "module.ptx").read_text(), re.M)
        assert 'chip = "sm_90a"' in (folder / "module.mlir").read_text()


def test_arch_override(run_python, tmp_path):
    out = tmp_path / "cap"
    proc = run_python("-m", "irscan", "capture", "--arch", "sm_100a", "--out", out, "--", "python", COMPILE, "copy")
    assert proc.returncode == 0, proc.stderr
    (folder,) = out.iterdir()
    assert meta(folder)["arch"] == "sm_100a"
    assert re.search(r"^\.target sm_100a$", (folder / "module.ptx").read_text(), re.M)
    assert (folder / "module.cubin").stat().st_size > 0


def test_direct_jit_call_is_captured_before_the_launch(captured):
    """Calling a @cute.jit function (no cute.compile) compiles it first; with no driver the launch then fails,
    and the capture is already on disk."""
    out = captured.proc.stdout
    assert "direct call failed at launch" in out or ("direct call ran" in out and has_gpu())
    folder = captured.folders[4]
    k = kernel(meta(folder), "copy_kernel")
    assert k["args"][0]["space"] == "generic"  # numpy through from_dlpack, unlike the fake tensors
    assert {p.name for p in folder.iterdir()} == FILES


# ---------------------------------------------------------------------------------- byte identity


@pytest.fixture(scope="module")
def plain_dumps(run_python, tmp_path_factory):
    """The DSL's own --keep-ptx/--keep-cubin dumps of a plain compile (no irscan), with the environment
    `irscan capture` gives its child (caches off, sm_90a, line info)."""
    keep = tmp_path_factory.mktemp("plain")
    env = {**NO_CACHE_ENV, "CUTE_DSL_ARCH": DEFAULT_ARCH, "CUTE_DSL_LINEINFO": "1"}
    proc = run_python(COMPILE, "--keep", keep, *BYTE_IDENTITY, env=env)
    assert proc.returncode == 0, proc.stderr
    return {name: keep / f"{i}_{name}" for i, name in enumerate(BYTE_IDENTITY)}


@pytest.mark.skipif(has_gpu(), reason="compares against a plain sm_90a compile")
@pytest.mark.parametrize("i", range(len(BYTE_IDENTITY)), ids=BYTE_IDENTITY)
def test_captured_ptx_and_cubin_are_byte_identical_to_a_plain_compile(captured, plain_dumps, i):
    plain = plain_dumps[BYTE_IDENTITY[i]]
    folder = captured.folders[i]
    assert (folder / "module.ptx").read_bytes() == only(plain, "*.sm_90a.ptx").read_bytes()
    assert (folder / "module.cubin").read_bytes() == only(plain, "*.sm_90a.cubin").read_bytes()


@pytest.mark.skipif(has_gpu(), reason="compares against a plain sm_90a compile")
def test_users_own_dumps_are_kept_and_identical_under_the_hook(run_python, plain_dumps, tmp_path):
    """With --keep-ptx/--keep-cubin of its own, a hooked compile writes the user's dumps where they asked, byte
    for byte the plain compile's, and the capture holds the same bytes."""
    keep, out = tmp_path / "keep", tmp_path / "cap"
    proc = run_python("-m", "irscan", "capture", "--out", out, "--", "python", COMPILE, "--keep", keep, "smem")
    assert proc.returncode == 0, proc.stderr
    (folder,) = out.iterdir()
    plain = plain_dumps["smem"]
    for suffix in ("ptx", "cubin"):
        expected = only(plain, f"*.sm_90a.{suffix}").read_bytes()
        assert only(keep / "0_smem", f"*.sm_90a.{suffix}").read_bytes() == expected
        assert (folder / f"module.{suffix}").read_bytes() == expected
    assert {p.name for p in folder.iterdir()} == FILES


# ---------------------------------------------------------------------------------- the Python API, fail open

SCENARIOS = [
    "ok",
    "break:kernel_signatures",
    "strict-break:kernel_signatures",
    "break:split_pipeline",
    "strict-break:split_pipeline",
    "break:dsl_environment",
    "strict-break:dsl_environment",
    "vanish",
    "strict-vanish",
    "unwritable",
    "strict-unwritable",
    "ok",
]


@pytest.fixture(scope="module")
def api(run_python, tmp_path_factory):
    """Every scenario of fixtures/api_capture.py, in one child: {scenario: result}, plus the child's stderr."""
    out = tmp_path_factory.mktemp("api")
    proc = run_python(API, out, *SCENARIOS)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert [r["scenario"] for r in results] == SCENARIOS
    by_name = {r["scenario"]: r for r in results[:-1]}
    by_name["ok-after-failures"] = results[-1]
    return by_name, proc.stderr


@pytest.mark.parametrize("scenario", ["ok", "ok-after-failures"])
def test_api_session_lists_its_captures(api, scenario):
    """``with irscan.capture(out=DIR) as cap:``: cap.kernels and cap.captures[i].mlir_path; the second session
    runs after ten failed ones and after ``import irscan.capture``, and still works."""
    r = api[0][scenario]
    assert r["compiled"] and r["raised"] is None and r["errors"] == []
    (c,) = r["captures"]
    assert c["mlir_exists"]
    assert [k.split("_")[2] for k in r["kernels"]] == ["copy"]
    if not has_gpu():
        assert c["arch"] == "sm_90a"


@pytest.mark.parametrize(
    ("scenario", "why"),
    [
        ("break:kernel_signatures", "set-up failed (RuntimeError: kernel_signatures broken on purpose)"),
        ("break:split_pipeline", "set-up failed (RuntimeError: split_pipeline broken on purpose)"),
        ("break:dsl_environment", "write-out failed (RuntimeError: dsl_environment broken on purpose)"),
        ("vanish", "write-out failed (NotADirectoryError: "),
        ("unwritable", "set-up failed (NotADirectoryError: "),
    ],
)
def test_fail_open(api, scenario, why):
    """irscan's own failure: the user's compile still returns, nothing is recorded as captured, stderr says why."""
    results, stderr = api
    r = results[scenario]
    assert r["compiled"] and r["raised"] is None
    assert r["captures"] == [] and r["kernels"] == []
    (msg,) = r["errors"]
    assert msg.startswith(f"irscan: capture {why}") and "the compile goes on without it" in msg
    assert msg in stderr


@pytest.mark.parametrize(
    ("scenario", "why"),
    [
        ("strict-break:kernel_signatures", "kernel_signatures broken on purpose"),
        ("strict-break:split_pipeline", "split_pipeline broken on purpose"),
        ("strict-break:dsl_environment", "dsl_environment broken on purpose"),
        ("strict-vanish", "Not a directory"),
        ("strict-unwritable", "Not a directory"),
    ],
)
def test_strict_raises(api, scenario, why):
    r = api[0][scenario]
    assert not r["compiled"]
    assert why in r["raised"]
    assert r["captures"] == [] and r["errors"] == []


# ---------------------------------------------------------------------------------- IRSCAN_CAPTURE=DIR


def test_env_var_with_boot_dir_captures_an_unmodified_program(run_python, tmp_path):
    """What `irscan capture` does, by hand: IRSCAN_CAPTURE=DIR and irscan/capturing/_boot on PYTHONPATH."""
    out = tmp_path / "cap"
    proc = run_python(COMPILE, "copy", env={"IRSCAN_CAPTURE": str(out), "PYTHONPATH": BOOT_DIR})
    assert proc.returncode == 0, proc.stderr
    (folder,) = out.iterdir()
    assert {p.name for p in folder.iterdir()} == FILES
    if not has_gpu():
        assert meta(folder)["arch"] == "sm_90a"  # set by the start-up hook itself, not by the runner


@pytest.mark.parametrize("strict", [False, True], ids=["fail-open", "IRSCAN_STRICT=1"])
def test_env_var_unwritable_folder(run_python, tmp_path, strict):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    env = {"IRSCAN_CAPTURE": str(blocker / "cap"), "PYTHONPATH": BOOT_DIR}
    if strict:
        env["IRSCAN_STRICT"] = "1"
    proc = run_python(COMPILE, "copy", env=env)
    if strict:
        assert proc.returncode != 0 and "Not a directory" in proc.stderr
        assert "compiled copy" not in proc.stdout
    else:
        assert proc.returncode == 0, proc.stderr
        assert "compiled copy" in proc.stdout
        assert "irscan: capture set-up failed (NotADirectoryError" in proc.stderr


def test_boot_dir_is_inert_until_the_dsl_is_imported_and_chains_sitecustomize(run_python, tmp_path):
    """A process that never imports the DSL does not import it because of irscan; a sitecustomize of the
    user's own, later on PYTHONPATH, still runs."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "sitecustomize.py").write_text("print('their sitecustomize ran')\n")
    code = "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] == 'cutlass'))"
    env = {"IRSCAN_CAPTURE": str(tmp_path / "cap"), "PYTHONPATH": os.pathsep.join([BOOT_DIR, str(theirs)])}
    proc = run_python("-c", code, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["their sitecustomize ran", "[]"]
    assert proc.stderr == "" and not (tmp_path / "cap").exists()


# ---------------------------------------------------------------------------------- the .pth of a real install


def _setuptools_ok() -> bool:
    try:
        return int(metadata.version("setuptools").split(".")[0]) >= 68
    except metadata.PackageNotFoundError:
        return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """``pip wheel --no-deps`` of a copy of the package sources (so the build leaves nothing in the repo)."""
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "setup.py", "irscan-capture.pth", "README.md", "MANIFEST.in", "LICENSE"):
        if (REPO / name).exists():
            shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "irscan", src / "irscan", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copytree(REPO / "grammars", src / "grammars")
    shutil.copytree(REPO / "patches", src / "patches")
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(src), "-w", str(out)]
    if _setuptools_ok():  # no download needed; otherwise pip fetches the build backend
        cmd.insert(4, "--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return only(out, "irscan-*.whl")


def test_wheel_ships_the_pth_line_into_site_packages(wheel):
    """At the wheel's root, so the installer puts it straight into site-packages on any Python."""
    names = zipfile.ZipFile(wheel).namelist()
    assert "irscan-capture.pth" in names, names
    assert zipfile.ZipFile(wheel).read("irscan-capture.pth") == (REPO / "irscan-capture.pth").read_bytes()
    # and the grammars, which live at the top of the checkout, travel inside the package
    for g in ("mlir.lark", "ptx.lark"):
        assert zipfile.ZipFile(wheel).read(f"irscan/grammars/{g}") == (REPO / "grammars" / g).read_bytes()
    # and patch mode's rules with the examples they name (without them `irscan patch` has no rules)
    rules = sorted(
        p.relative_to(REPO).as_posix() for p in (REPO / "patches").rglob("*") if p.is_file() and p.suffix != ".md"
    )
    assert rules and all(zipfile.ZipFile(wheel).read(f"irscan/{r}") == (REPO / r).read_bytes() for r in rules)


@pytest.mark.slow
def test_installed_wheel_captures_with_only_the_env_var(wheel, run_python, tmp_path):
    """Install the wheel (not editable) into a fresh venv: IRSCAN_CAPTURE=DIR alone, no PYTHONPATH, captures.

    The venv sees the DSL through a .pth that adds this environment's site folder after its own (so the
    venv's irscan, not the development one, is what the .pth line imports)."""
    pip = tuple(int(x) for x in re.findall(r"\d+", metadata.version("pip"))[:2])
    if pip < (22, 3):
        pytest.skip("pip --python needs pip 22.3")
    home = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(home)
    py = home / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    site = Path(
        subprocess.check_output([py, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], text=True).strip()
    )
    assert (site / "irscan-capture.pth").exists()
    dsl_site = metadata.distribution("nvidia-cutlass-dsl").locate_file("")
    (site / "zz_outer_site.pth").write_text(f"import site; site.addsitedir({str(dsl_site)!r})\n")

    out = tmp_path / "cap"
    env = {"IRSCAN_CAPTURE": str(out)}
    probe = run_python(
        "-c", "import irscan; print(irscan.__file__)", python=py, env=env, keep_pythonpath=False, cwd=home
    )
    assert Path(probe.stdout.strip()).is_relative_to(site), probe.stdout + probe.stderr
    proc = run_python(COMPILE, "copy", python=py, env=env, keep_pythonpath=False, cwd=home)
    assert proc.returncode == 0, proc.stderr
    (folder,) = out.iterdir()
    assert {p.name for p in folder.iterdir()} == FILES
