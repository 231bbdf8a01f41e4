"""The command line and the plugin-author helpers with a real TileLang, in fresh processes.

TileLang 0.1.11 (which lacks the integration points): ``list``, ``check``, ``explain``
and ``lock`` work with its bundled TVM, never a traceback. TileLang 0.1.15: ``check_plugin()``
and the ``hostcg_registry`` fixture import TVM as the library does, so a plugin's tests
need not import ``tilelang`` first; a stray ``tilelang`` in the working directory changes
nothing; every first-party plugin installed together compiles TileLang kernels.
The environments are shared with other tests: what a test installs beyond the
project (and pytest, which other tests need there too), it uninstalls.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import need_tool
from .tilelang_env import KERNELS, TileLangEnv, TileLangEnvs, params

pytestmark = [pytest.mark.slow, pytest.mark.tilelang]


@pytest.fixture(scope="module", params=params("0.1.11"))
def old(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> TileLangEnv:
    """TileLang 0.1.11 (its base pins the apache-tvm-ffi it was built against) and the
    project."""
    return tilelang_envs[request.param].env


def test_every_command_works_with_an_unsupported_tilelang(old: TileLangEnv) -> None:
    described = "TVM 0.25.dev0 bundled with tilelang 0.1.11"
    commands = ((("list",), 0), (("list", "--load"), 0), (("check",), 0),
                (("explain", "c"), 0), (("explain", "cuda", "--host", "c"), 0),
                (("explain", "llvm"), 1))  # no LLVM in TileLang's TVM
    runs = iter(old.cli_each(*((*argv,) for argv, _ in commands),
                             *(("--json", *argv) for argv, _ in commands), ("lock",)))
    plain = [next(runs) for _ in commands]
    json_runs = [next(runs) for _ in commands]
    for (argv, status), proc, json_proc in zip(commands, plain, json_runs, strict=True):
        assert proc.returncode == status, (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert "bundled with tilelang 0.1.11" in proc.stdout, (argv, proc.stdout)
        assert json_proc.returncode == status, (argv, json_proc.stdout, json_proc.stderr)
        doc = json.loads(json_proc.stdout)
        assert doc["tvm"]["provider"] == "tilelang" and doc["tvm"]["provider_version"] == "0.1.11"
        if argv != ("list",):
            assert doc["tvm"]["describe"] == described and "3rdparty" in doc["tvm"]["path"]
        if argv == ("explain", "c"):
            assert doc["codegen"]["name"] == "c" and doc["codegen"]["distribution"] == (
                "tilelang-hostcg")
    lock = next(runs)
    assert lock.returncode == 0, lock.stderr
    doc = json.loads(lock.stdout)
    assert ["tilelang-hostcg", "0.1.0"] in [[d["name"], d["version"]] for d in doc["distributions"]]
    assert {c["name"] for c in doc["codegens"]} == {"c", "llvm"}  # no TileLang defaults


@pytest.fixture(scope="module", params=params("0.1.15"))
def new(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> Iterator[TileLangEnv]:
    """TileLang 0.1.15, the project, the stamp plugin (removed afterwards) and pytest."""
    env = tilelang_envs[request.param].env
    env.pip("install", "-q", str(tilelang_envs.wheels["tilelang-hostcg-stamp"]), "pytest")
    yield env
    env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")


def test_check_plugin_imports_tilelangs_tvm(new: TileLangEnv) -> None:
    out = new.run_json("""
        import json, sys
        from tilelang_hostcg.testing import check_plugin
        assert "tilelang" not in sys.modules and "tvm" not in sys.modules
        kinds = check_plugin("tilelang-hostcg-stamp")
        import tvm
        print(json.dumps({"kinds": kinds, "tvm": tvm.__file__}))
    """)
    assert out["kinds"] == ["c", "cuda", "llvm"]
    assert "3rdparty" in out["tvm"]


def test_the_fixture_imports_tilelangs_tvm(new: TileLangEnv, tmp_path: Path) -> None:
    """A plugin author's test that imports TVM inside the test, run by pytest."""
    (tmp_path / "test_author.py").write_text(textwrap.dedent("""
        def test_isolated(hostcg_registry):
            import tvm
            from tvm.target import Target

            assert "3rdparty" in tvm.__file__
            hostcg_registry.register_lazy_host_codegen("c", "tilelang_hostcg_stamp.codegen")
            assert hostcg_registry.resolve_host_codegen(Target("c")).name == "stamp_c"
    """))
    proc = subprocess.run([new.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tmp_path)], capture_output=True, text=True, cwd=tmp_path,
                          env=new.environ(), timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout


def test_list_shows_what_builds_and_tvms_cuda_probe_stays_off(new: TileLangEnv) -> None:
    """``list --load`` shows TileLang's own codegens and hooks (the defaults) and that the
    core's ``llvm`` cannot build with TileLang's TVM; ``explain cuda`` and ``check`` keep
    TVM's "Unable to detect CUDA version" off stderr."""
    listed, text, explained, checked, plain = new.cli_each(
        ("--json", "list", "--load"), ("list", "--load"), ("explain", "cuda"), ("check",),
        ("list",))
    assert ("Client: TileLang integration (tilelang_hostcg.tilelang), expected: `import tilelang` turns it on, "
            "as a third-party plugin is installed; `list --load` says for sure\n") in plain.stdout  # nothing imported
    (note,) = [line for line in plain.stderr.splitlines() if line.startswith("note: ")]  # and what it leaves out
    assert "TileLang's own host codegens and hooks (such as 'tilelang-c'" in note and "list --load" in note
    assert listed.returncode == 0, listed.stderr
    doc = json.loads(listed.stdout)
    codegens = {(r["distribution"], r["name"]): r for k in doc["codegens"]
                for r in k["registrations"]}
    defaults = [r for (dist, _), r in codegens.items() if dist == "tilelang"]
    assert defaults and all(r["default"] for r in defaults)
    assert ("tilelang", "tilelang-c") in codegens and doc["note"] is None  # as the note says, and none here
    assert any(r["distribution"] == "tilelang" for k in doc["hooks"] for r in k["registrations"])
    llvm = codegens["tilelang-hostcg", "llvm"]
    assert llvm["buildable"] is False
    assert llvm["cannot_build"].startswith("cannot build with TVM 0.25.dev0 bundled with tilelang")
    (line,) = [line for line in text.stdout.splitlines() if "codegen 'llvm'" in line]
    assert llvm["cannot_build"] in line
    assert "from tilelang 0.1.15  [default]" in text.stdout
    for proc in (explained, checked):
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Unable to detect CUDA version" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("stray", ["folder", "module"])
def test_a_stray_tilelang_in_the_working_directory_changes_nothing(new: TileLangEnv, stray: str,
                                                                    tmp_path: Path) -> None:
    if stray == "folder":
        (tmp_path / "tilelang").mkdir()
    else:
        (tmp_path / "tilelang.py").write_text("raise RuntimeError('not TileLang')\n")
    proc = subprocess.run([new.python, "-m", "tilelang_hostcg", "--json", "explain", "c"],
                          capture_output=True, text=True, env=new.environ(), cwd=tmp_path,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    tvm = json.loads(proc.stdout)["tvm"]
    assert tvm["provider"] == "tilelang" and tvm["provider_version"] == "0.1.15"
    assert str(new.path) in tvm["path"] and "3rdparty" in tvm["path"]


FIRST_PARTY = ("tilelang-hostcg-cuda", "tilelang-hostcg-rocm", "tilelang-hostcg-template")


@pytest.fixture
def all_plugins(new: TileLangEnv, tilelang_envs: TileLangEnvs) -> Iterator[TileLangEnv]:
    new.pip("install", "-q", "--no-deps", *(str(tilelang_envs.wheels[name]) for name in FIRST_PARTY))
    yield new
    new.pip("uninstall", "-q", "-y", *FIRST_PARTY)


def test_every_first_party_plugin_together_compiles_tilelang_kernels(all_plugins: TileLangEnv,
                                                                     tmp_path: Path) -> None:
    """Host code of a real TileLang kernel with every plugin in play: lowered with both
    stamps, and compiled (nvcc for the device code, the C compiler for the host)."""
    need_tool("nvcc", why="TileLang compiles the CUDA kernels with it")
    out = all_plugins.run_json(KERNELS + """
import json
import tilelang
import tilelang_hostcg.tilelang as integration

integration.install()
lowered = host_source(elementwise())
with Target(SM80):
    kernel = tilelang.compile(elementwise(), target=Target(SM80))
print(json.dumps({"lowered": [line for line in lowered.splitlines() if "stamp" in line],
                  "compiled": "tilelang_hostcg_stamp_hook" in kernel.get_host_source()}))
""", env={"TILELANG_CACHE_DIR": str(tmp_path / "kernel-cache")})
    assert "int32_t tilelang_hostcg_stamp_codegen() {" in out["lowered"]
    assert "int32_t tilelang_hostcg_stamp_hook() {" in out["lowered"]
    assert out["compiled"] is True
