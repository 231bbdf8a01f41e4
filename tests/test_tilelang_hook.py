"""The start-up hook without TileLang: what it costs a process that never imports
TileLang, and what it does on ``import tilelang`` when that is not TileLang's
distribution (a folder named ``tilelang``). Fresh interpreters of the test environment,
where the package (and so ``tilelang_hostcg_hook.pth``) is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .plugin_factory import Plugin, codegen_module, install

HEAVY = ["tvm", "tvm_ffi", "importlib.metadata", "importlib_metadata", "packaging", "tilelang",
         "tilelang_hostcg", "tilelang_hostcg._registry", "tilelang_hostcg.discovery"]

REPORT = """
import json, sys
print(json.dumps({
    "hook": [type(f).__module__ for f in sys.meta_path if type(f).__module__ == "_tilelang_hostcg_hook"],
    "ours": sorted(m for m in sys.modules if m.startswith("tilelang_hostcg")),
    "installed": ("tilelang_hostcg.tilelang" in sys.modules
                  and sys.modules["tilelang_hostcg.tilelang"].is_installed()),
    "loader": type(tilelang.__loader__).__name__ if "tilelang" in sys.modules else None,
    "spec_loader": tilelang.__spec__.loader is tilelang.__loader__ if "tilelang" in sys.modules else None,
}))
"""


def run(code: str, cwd: Path, python: str = sys.executable, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    environ.update(env)
    return subprocess.run([python, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=120)


@pytest.fixture
def fake_tilelang(tmp_path: Path) -> Path:
    """A folder holding a package named ``tilelang`` that is not TileLang's distribution."""
    (tmp_path / "tilelang").mkdir()
    (tmp_path / "tilelang" / "__init__.py").write_text("VALUE = 42\n")
    return tmp_path


def test_a_process_that_never_imports_tilelang_imports_nothing_of_ours(tmp_path):
    proc = run(f"import json, sys; print(json.dumps([type(sys.meta_path[0]).__module__, "
               f"[m for m in {HEAVY!r} if m in sys.modules]]))", tmp_path)
    assert proc.returncode == 0, proc.stderr
    first, heavy = json.loads(proc.stdout)
    assert first == "_tilelang_hostcg_hook"  # installed, first on sys.meta_path
    assert heavy == []
    assert proc.stderr == ""


def test_another_package_named_tilelang_is_left_alone(fake_tilelang):
    proc = run("import tilelang\n" + REPORT, fake_tilelang)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert out["hook"] == []  # the finder left sys.meta_path
    assert out["loader"] == "SourceFileLoader" and out["spec_loader"]  # its own loader back
    assert "tilelang_hostcg.tilelang.activation" in out["ours"]  # activation asked ...
    assert out["installed"] is False  # ... and installed nothing


def test_the_off_switch_imports_nothing_of_ours(fake_tilelang):
    for value in ("0", "off", " FALSE "):
        proc = run("import tilelang\n" + REPORT, fake_tilelang, TILELANG_HOSTCG_AUTO_INSTALL=value)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        out = json.loads(proc.stdout)
        assert out["ours"] == [] and out["hook"] == [], (value, out)


def test_a_value_not_understood_warns_at_the_import_line(fake_tilelang):
    proc = run("import warnings\nwarnings.simplefilter('always')\nimport tilelang\n" + REPORT,
               fake_tilelang, TILELANG_HOSTCG_AUTO_INSTALL="maybe")
    assert proc.returncode == 0, proc.stderr
    assert "<string>:3: PluginWarning: TILELANG_HOSTCG_AUTO_INSTALL='maybe' is not understood" in proc.stderr
    assert "TILELANG_HOSTCG_AUTO_INSTALL=0 to turn it off" in proc.stderr
    # Discovery, which activation runs, judges the variable by the same rule: one warning.
    assert proc.stderr.count("is not understood") == 1, proc.stderr


def test_a_failing_import_of_tilelang_fails_as_it_would(fake_tilelang):
    (fake_tilelang / "tilelang" / "__init__.py").write_text("raise ImportError('broken on purpose')\n")
    proc = run("""
        try:
            import tilelang
        except ImportError as exc:
            print(repr(exc))
        import sys
        integration = sys.modules.get("tilelang_hostcg.tilelang")
        print("tilelang" in sys.modules, integration is not None and integration.is_installed())
    """, fake_tilelang)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.split("\n")[:2] == ["ImportError('broken on purpose')", "False False"]


@pytest.mark.slow
def test_with_a_plugin_but_no_tilelang_distribution_nothing_is_installed(fake_tilelang, tmp_path):
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [Plugin("hook-plugin", codegens={"c": "hcgt_hook"},
                                   files={"hcgt_hook.py": codegen_module("c", "hook-c")})])
    proc = run("import warnings\nwarnings.simplefilter('error')\nimport tilelang\n" + REPORT,
               fake_tilelang, python=env.python, XDG_CACHE_HOME=str(env.cache_home))
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    out = json.loads(proc.stdout)
    assert "tilelang_hostcg.tilelang.activation" in out["ours"]
    assert "tilelang_hostcg.tilelang" not in out["ours"]  # a plugin, but no TileLang: quiet
