"""Which TVM is in use is decided by what is installed, in fresh processes (apache-tvm side).

Something that is merely importable as ``tilelang`` (an empty folder or a broken
``tilelang.py`` in the working directory) is not TileLang: apache-tvm stays the TVM in
use, for the library and every command. A TVM that cannot be found or imported is one
message and exit status 2 from every command that needs it, and under ``--json`` one
JSON document: never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

STRAYS = {
    "folder": lambda cwd: (cwd / "tilelang").mkdir(),
    "module": lambda cwd: (cwd / "tilelang.py").write_text("raise RuntimeError('not TileLang')\n"),
}


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env.pop("PYTHONPATH", None)
    return env


def _cli(cwd: Path, *argv: str, env: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tilelang_hostcg", *argv], capture_output=True,
                          text=True, cwd=cwd, env=env or _env(), timeout=300)


@pytest.mark.parametrize("stray", sorted(STRAYS))
def test_a_stray_tilelang_changes_nothing_for_the_commands(stray: str, tmp_path: Path) -> None:
    STRAYS[stray](tmp_path)
    for argv in (("check", "--json"), ("explain", "c", "--json"), ("list", "--load", "--json")):
        proc = _cli(tmp_path, *argv)
        assert proc.returncode == 0, (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        tvm = json.loads(proc.stdout)["tvm"]
        assert tvm["provider"] == "apache-tvm" and "3rdparty" not in tvm["path"], tvm
    proc = _cli(tmp_path, "list")
    assert proc.returncode == 0 and "TVM in use: apache-tvm " in proc.stdout, proc.stdout


@pytest.mark.parametrize("stray", sorted(STRAYS))
def test_a_stray_tilelang_changes_nothing_for_the_library(stray: str, tmp_path: Path) -> None:
    STRAYS[stray](tmp_path)
    code = """
import json, sys
sys.path.insert(0, "")  # the working directory first, as for python -c and notebooks
import importlib.metadata, os
import tilelang_hostcg
name = tilelang_hostcg.resolve_host_codegen("llvm").name
tvm = importlib.metadata.distribution("apache-tvm").locate_file("tvm/__init__.py")
print(json.dumps({"name": name, "provider": "apache-tvm" if os.path.samefile(
                      sys.modules["tvm"].__file__, tvm) else sys.modules["tvm"].__file__,
                  "tilelang": sys.modules.get("tilelang") is not None}))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"name": "llvm", "provider": "apache-tvm",
                                       "tilelang": False}


BLOCKED = """
import sys

class NoTVM:  # no TVM can be imported, as in an environment without one
    def find_spec(self, name, path=None, target=None):
        if name == "tvm" or name.startswith("tvm."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoTVM())
from tilelang_hostcg.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("how", ["missing", "broken"])
def test_no_usable_tvm_is_one_message_and_exit_2(how: str, tmp_path: Path) -> None:
    env = _env()
    if how == "missing":
        cmd = [sys.executable, "-c", BLOCKED]
        needle = "No TVM is installed"
    else:  # a tvm package that fails to import shadows the installed one
        (tmp_path / "shadow" / "tvm").mkdir(parents=True)
        (tmp_path / "shadow" / "tvm" / "__init__.py").write_text("raise OSError('libtvm.so')\n")
        env["PYTHONPATH"] = str(tmp_path / "shadow")
        cmd = [sys.executable, "-m", "tilelang_hostcg"]
        needle = "TVM is installed but cannot be imported (OSError: libtvm.so)"
    for argv in (["check"], ["explain", "c"], ["check", "--require", "llvm"]):
        proc = subprocess.run([*cmd, *argv], capture_output=True, text=True, cwd=tmp_path,
                              env=env, timeout=300)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr
        assert proc.stderr.count("\n") == 1 and needle in proc.stderr, proc.stderr
        proc = subprocess.run([*cmd, "--json", *argv], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        doc = json.loads(proc.stdout)
        assert doc["ok"] is False and doc["command"] == argv[0]
        assert needle in doc["error"]["message"] and doc["error"]["exit_code"] == 2
    proc = subprocess.run([*cmd, "list", "--json"], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr  # plain list reads metadata only
    assert json.loads(proc.stdout)["tvm"]["provider"] == "apache-tvm"
    proc = subprocess.run([*cmd, "list", "--load"], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr  # the TVM in use is shown as what it is
    assert proc.stdout.startswith("TVM in use: no TVM installed" if how == "missing" else
                                  "TVM in use: TVM cannot be imported"), proc.stdout
    proc = subprocess.run([*cmd, "lock"], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr  # the core's codegens load without TVM
    assert json.loads(proc.stdout)["command"] == "lock"


def test_an_installed_tilelang_that_fails_to_import_is_one_message(tmp_path: Path) -> None:
    """TileLang's metadata says it is installed, but its package raises on import."""
    site = tmp_path / "site"
    info = site / "tilelang-0.1.15.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.15\n")
    (info / "RECORD").write_text("tilelang/__init__.py,,\ntilelang-0.1.15.dist-info/METADATA,,\n")
    (site / "tilelang").mkdir()
    (site / "tilelang" / "__init__.py").write_text("raise RuntimeError('CUDA libraries missing')\n")
    env = {**_env(), "PYTHONPATH": str(site)}
    needle = ("TileLang (tilelang 0.1.15) is installed (at " + str(site) + ") but cannot be imported "
              "(RuntimeError: CUDA libraries missing)")
    for argv in (["check"], ["--json", "explain", "c"]):
        proc = _cli(tmp_path, *argv, env=env)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and needle in proc.stderr, proc.stderr
    assert needle in json.loads(proc.stdout)["error"]["message"]
    proc = _cli(tmp_path, "list", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "TVM in use: TVM bundled with tilelang 0.1.15 (not imported)" in proc.stdout


def test_the_repair_of_an_unimportable_tilelang_reinstalls_it_alone(tmp_path: Path) -> None:
    """Where TileLang fails to import with its requirements met, the repair reinstalls TileLang
    without its dependencies (never torch or a CUDA build with them), and removes an
    apache-tvm installed beside it."""
    site = tmp_path / "site"
    info = site / "tilelang-0.1.15.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.15\n")
    (info / "RECORD").write_text("tilelang/__init__.py,,\ntilelang-0.1.15.dist-info/METADATA,,\n")
    (site / "tilelang").mkdir()
    (site / "tilelang" / "__init__.py").write_text("raise RuntimeError('CUDA libraries missing')\n")
    proc = _cli(tmp_path, "check", env={**_env(), "PYTHONPATH": str(site)})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ("Repair it with: pip uninstall -y apache-tvm && pip install --force-reinstall "
            "--no-deps 'tilelang==0.1.15' (nothing else changes)") in proc.stderr, proc.stderr


@pytest.mark.parametrize("shipped_by", ["mlc-ai-nightly-cpu", None])
def test_plain_list_names_the_tvm_that_import_gives_whatever_ships_it(shipped_by: str | None,
                                                                       tmp_path: Path) -> None:
    """apache-tvm's package under another distribution's name, or TVM's ``python/`` folder of a source
    tree on ``PYTHONPATH``: plain ``list`` (which imports nothing) names what ``import tvm`` would
    give, never ``apache-tvm`` (installed here too, but shadowed) and never "no TVM"."""
    site = tmp_path / "site"
    (site / "tvm").mkdir(parents=True)
    (site / "tvm" / "__init__.py").write_text("raise ImportError('a stand-in: never imported by plain list')\n")
    if shipped_by is not None:
        info = site / "mlc_ai_nightly_cpu-0.21.dev0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {shipped_by}\nVersion: 0.21.dev0\n")
        (info / "RECORD").write_text(f"tvm/__init__.py,,\n{info.name}/METADATA,,\n{info.name}/RECORD,,\n")
    proc = _cli(tmp_path, "list", "--json", env={**_env(), "PYTHONPATH": str(site)})
    assert proc.returncode == 0, proc.stderr
    tvm = json.loads(proc.stdout)["tvm"]
    if shipped_by is not None:
        assert tvm["describe"] == "TVM from mlc-ai-nightly-cpu 0.21.dev0 (not imported)", tvm
        assert tvm["distribution"] == shipped_by
    else:
        assert tvm["describe"] == f"TVM from a source tree at {site} (not imported)", tvm
        assert tvm["distribution"] is None and tvm["tree"] == str(site)
