"""TileLang is whichever of its published builds is installed (``tilelang``,
``tilelang-paddle``, ``tilelang-rocm``), decided from metadata alone, and named in
messages; two builds at once are reported; a plugin requiring another build is explained.

The metadata here is written by hand into a folder on ``sys.path`` (the stand-in builds
ship a ``tilelang`` package of one file), and installed by ``pip`` for the command-line
tests; real TileLang builds are in ``tests/test_tilelang*.py`` (``tilelang-paddle``
0.1.13 among them) and, for ``tilelang-rocm``, in :func:`test_the_rocm_build_is_refused_by_name`.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg import PluginWarning
from tilelang_hostcg.discovery.requirements import check_requirements, other_build_requirements
from tilelang_hostcg.testing import PluginEnvironment
from tilelang_hostcg.tilelang import UnsupportedTileLangError

from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.skipif(importlib.util.find_spec("tilelang") is not None,
                                reason="this environment has a TileLang build of its own")

PADDLE_INIT = "# PaddlePaddle's build\n"
# Stand-in builds at a version the integration refuses, so that ``check`` does not enter
# their one-file ``tilelang`` package (the TVM in use stays apache-tvm).
STAND_IN = "0.1.11"
STOCK_INIT = "# stock TileLang\n"


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def write_build(site: Path, name: str, version: str, files: dict[str, str] | None = None, *,
                record: bool = True, write_files: bool = True) -> Path:
    """A distribution's metadata as pip writes it (``METADATA``, ``RECORD`` with hashes), and
    its files unless ``write_files`` is false (another build's files are installed)."""
    files = {"tilelang/__init__.py": STOCK_INIT} if files is None else files
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for path, text in files.items():
        lines.append(f"{path},{_hash(text.encode())},{len(text.encode())}")
        if write_files:
            (site / path).parent.mkdir(parents=True, exist_ok=True)
            (site / path).write_text(text)
    if record:
        lines.append(f"{info.name}/METADATA,,")
        lines.append(f"{info.name}/RECORD,,")
        (info / "RECORD").write_text("\n".join(lines) + "\n")
    return info


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder first on ``sys.path`` (undone afterwards)."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    return folder


# ------------------------------------------------------------------ which build
def listed(*sites: Path) -> tuple[dict[str, Any], str]:
    """``tilelang-hostcg list --json`` in a fresh process (no TVM imported: it reads
    metadata) with ``sites`` first on ``sys.path``: its TVM block, and its stderr."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "list", "--json"], capture_output=True,
                          text=True, env={**env, "PYTHONPATH": os.pathsep.join(map(str, sites))},
                          cwd=sites[0], timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["tvm"], proc.stderr


def test_paddles_build_is_tilelang(site: Path) -> None:
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": PADDLE_INIT})
    tvm, stderr = listed(site)
    assert tvm["describe"] == "TVM bundled with tilelang-paddle 0.1.13 (not imported)"
    assert (tvm["provider"], tvm["distribution"]) == ("tilelang", "tilelang-paddle")
    assert stderr == ""  # one build: nothing to warn of


def test_a_build_name_whose_metadata_ships_no_tilelang_package_is_not_tilelang(site: Path) -> None:
    write_build(site, "tilelang-paddle", "0.1.13", {"paddle_only/__init__.py": ""})
    assert listed(site)[0]["provider"] == "apache-tvm"
    import tilelang_hostcg.tilelang as integration

    with pytest.raises(UnsupportedTileLangError, match="not installed"):
        integration.install()


def test_top_level_txt_speaks_where_there_is_no_record(site: Path) -> None:
    info = write_build(site, "tilelang-paddle", "0.1.13", record=False)
    (info / "top_level.txt").write_text("paddle_only\n")
    assert listed(site)[0]["provider"] == "apache-tvm"
    (info / "top_level.txt").write_text("tilelang\n")
    assert listed(site)[0]["distribution"] == "tilelang-paddle"


def test_an_unknown_name_is_not_a_build_even_with_the_package(site: Path) -> None:
    write_build(site, "not-tilelang", "0.1.13")
    assert listed(site)[0]["provider"] == "apache-tvm"


def test_an_unsupported_build_is_refused_naming_distribution_and_version(site: Path) -> None:
    write_build(site, "tilelang-rocm", "0.1.4.post13")
    import tilelang_hostcg.tilelang as integration

    with pytest.raises(UnsupportedTileLangError) as info:
        integration.install()  # refused from metadata, before TileLang is imported
    assert "tilelang-rocm 0.1.4.post13" in str(info.value)
    assert "0.1.12 to 0.1.15" in str(info.value)
    assert not integration.is_installed() and "tilelang" not in sys.modules


def test_two_builds_the_one_whose_files_are_installed_is_used(site: Path) -> None:
    # pip installed stock TileLang, then tilelang-paddle over the same folder: the files
    # are paddle's, and both RECORDs list them. (A version the integration refuses: its
    # install() warns, then refuses from metadata, importing no stand-in.)
    write_build(site, "tilelang", STAND_IN, {"tilelang/__init__.py": STOCK_INIT}, write_files=False)
    write_build(site, "tilelang-paddle", STAND_IN, {"tilelang/__init__.py": PADDLE_INIT})
    assert listed(site)[0]["distribution"] == "tilelang-paddle"
    import tilelang_hostcg.tilelang as integration

    with pytest.warns(PluginWarning) as caught, pytest.raises(UnsupportedTileLangError):
        integration.install()
    overlap = str(caught[0].message)
    assert f"2 TileLang builds are installed (tilelang-paddle {STAND_IN}, tilelang {STAND_IN})" in overlap
    assert f"tilelang-hostcg uses tilelang-paddle {STAND_IN}" in overlap
    assert "pip uninstall tilelang" in overlap
    # The other way round: stock TileLang's files win.
    (site / "tilelang" / "__init__.py").write_text(STOCK_INIT)
    assert listed(site)[0]["distribution"] == "tilelang"


def test_two_builds_without_a_hash_to_tell_the_first_on_sys_path_is_used(site: Path, tmp_path: Path) -> None:
    later = tmp_path / "later"
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": PADDLE_INIT})
    write_build(later, "tilelang", "0.1.15", {"tilelang/__init__.py": STOCK_INIT})
    assert listed(later, site)[0]["distribution"] == "tilelang"  # first on sys.path


# ------------------------------------------------------------------ requirements
@pytest.mark.parametrize(("requires", "installed", "problem"), [
    # A requirement on any build is judged by the build installed, whatever its name.
    (["tilelang>=0.1.12"], {"tilelang-paddle": "0.1.13"}, None),
    (["tilelang>=0.1.14"], {"tilelang-paddle": "0.1.13"}, "'tilelang>=0.1.14' but tilelang-paddle 0.1.13"),
    (["tilelang-paddle>=0.1.13"], {"tilelang": "0.1.15"}, None),
    (["tilelang-paddle>=0.1.13"], {}, "no TVM is installed"),
    (["tilelang>=0.1.12"], {"apache-tvm": "0.27.0"}, None),  # apache-tvm stands in, as before
])
def test_tilelang_requirements_are_judged_by_the_build_installed(requires, installed, problem):
    reason = check_requirements("plugin", requires, {"tilelang-hostcg": "0.1.0", **installed})
    if problem is None:
        assert reason is None
    else:
        assert reason is not None and problem in reason


def test_requirements_naming_another_build_are_found():
    lines = ["tilelang>=0.1.12", "tilelang-hostcg>=0.1", 'tilelang; extra == "tilelang"',
             "tilelang-paddle==0.1.13", "apache-tvm>=0.27"]
    assert other_build_requirements(lines, "tilelang-paddle") == [("tilelang>=0.1.12", "tilelang")]
    assert other_build_requirements(lines, "tilelang") == [("tilelang-paddle==0.1.13", "tilelang-paddle")]


# ------------------------------------------------------------------ the commands


def _stand_in(dist: str, init: str) -> Plugin:
    return Plugin(dist, STAND_IN, files={"tilelang/__init__.py": init}, requires=())


def _check(env: PluginEnvironment, *argv: str) -> tuple[int, dict]:
    proc = env.python_run("import sys; from tilelang_hostcg.cli import main; sys.exit(main())",
                          "check", "--json", *argv)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    # The environment is layered over the test environment, whose apache-tvm sits beside the
    # stand-in TileLang: check rightly reports it (tvm-conflict, an error). Set that one aside.
    others = [p for p in doc.get("problems", ()) if p["code"] != "tvm-conflict"]
    if proc.returncode == 1 and not any(p["severity"] == "error" for p in others):
        return 0, doc
    return proc.returncode, doc


@pytest.mark.slow
def test_check_fails_strict_with_two_builds_installed(tmp_path: Path) -> None:
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [_stand_in("tilelang", STOCK_INIT)])
    install(env, tmp_path, [_stand_in("tilelang-paddle", PADDLE_INIT)])  # over the same folder
    code, doc = _check(env)
    strict_code, strict = _check(env, "--strict")
    (problem,) = [p for p in doc["problems"] if p["code"] == "tilelang-builds"]
    assert problem["severity"] == "warning" and code == 0
    assert f"(tilelang-paddle {STAND_IN}, tilelang {STAND_IN})" in problem["message"]
    assert strict_code == 1 and strict["ok"] is False
    assert [p["severity"] for p in strict["problems"] if p["code"] == "tilelang-builds"] == ["error"]
    # install() warns with the same text (before it refuses this stand-in's version).
    proc = env.python_run("import tilelang_hostcg.tilelang as t; t.install()")
    assert "PluginWarning: 2 TileLang builds are installed" in proc.stderr, proc.stderr
    assert "UnsupportedTileLangError" in proc.stderr
    # As the message says: uninstalling one removes the files both RECORDs list ...
    env.uninstall("tilelang")
    code, doc = _check(env, "--strict")
    assert code == 2
    assert f"TileLang (tilelang-paddle {STAND_IN}) is installed" in doc["error"]["message"]
    assert f"pip install --force-reinstall --no-deps tilelang-paddle=={STAND_IN}" in doc["error"]["message"]
    # ... and reinstalling the one kept repairs it.
    install(env, tmp_path, [_stand_in("tilelang-paddle", PADDLE_INIT)], "--force-reinstall")
    code, doc = _check(env, "--strict")
    assert code == 0 and not [p for p in doc["problems"] if p["code"] == "tilelang-builds"]


REQUIRES_STOCK = Plugin("tl-wants-stock", "1.0", hooks={"cuda": "tl_wants_stock"},
                        files={"tl_wants_stock.py": module(
                            'hc.register_host_codegen_hook("cuda", _hook("wants-stock"))')},
                        requires=("tilelang-hostcg", "tilelang>=0.1.10"))


@pytest.mark.slow
def test_check_explains_a_plugin_requiring_stock_tilelang_over_paddles(tmp_path: Path) -> None:
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [_stand_in("tilelang-paddle", PADDLE_INIT), REQUIRES_STOCK])
    code, doc = _check(env)
    (problem,) = [p for p in doc["problems"] if p["code"] == "tilelang-requirement"]
    assert code == 0 and problem["severity"] == "warning"
    assert problem["distribution"] == "tl-wants-stock"
    message = problem["message"]
    assert "'tl-wants-stock' 1.0 requires 'tilelang>=0.1.10'" in message
    assert f"the TileLang installed is tilelang-paddle {STAND_IN}" in message
    assert "would install tilelang over the same `tilelang/` folder" in message
    assert "pip install --no-deps tl-wants-stock" in message
    assert not [p for p in doc["problems"] if p["code"] in ("incompatible", "broken")]  # it works
    assert _check(env, "--strict")[0] == 1
    # In a stock TileLang environment the same plugin is fine.
    env.uninstall("tilelang-paddle")
    install(env, tmp_path, [_stand_in("tilelang", STOCK_INIT)])
    code, doc = _check(env, "--strict")
    assert code == 0, doc["problems"]
    assert not [p for p in doc["problems"] if p["code"].startswith("tilelang-")]


ROCM = "tilelang-rocm==0.1.4.post13"


@pytest.mark.slow
def test_the_rocm_build_is_refused_by_name(tmp_path: Path) -> None:
    """The index's ``tilelang-rocm`` 0.1.4.post13 (a CPython 3.10 wheel only), installed by pip
    for 3.10 into this environment's folder: its metadata is real, its package does not
    import here, and nothing of ours imports it to refuse it."""
    env = PluginEnvironment(tmp_path / "venv")
    env.pip("install", "-q", "--no-deps", "--only-binary", ":all:", "--python-version", "3.10",
            "--platform", "manylinux1_x86_64", "--target", str(env.site_packages), ROCM)
    proc = env.python_run("""
        import json
        import tilelang_hostcg.tilelang as integration
        try:
            integration.install()
            error = None
        except integration.UnsupportedTileLangError as exc:
            error = str(exc)
        print(json.dumps({"error": error, "installed": integration.is_installed()}))
    """)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["installed"] is False
    assert "TileLang 0.1.4.post13 is not supported" in out["error"]
    assert "installed as tilelang-rocm 0.1.4.post13" in out["error"]
    listed = env.python_run("import sys; from tilelang_hostcg.cli import main; sys.exit(main())", "list")
    assert listed.returncode == 0, listed.stderr
    assert "TVM bundled with tilelang-rocm 0.1.4.post13 (not imported)" in listed.stdout
    assert "installed as tilelang-rocm 0.1.4.post13" in listed.stderr
