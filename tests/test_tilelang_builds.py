"""TileLang is whatever distribution ships the ``tilelang`` package, under any name
(``tilelang``, ``tilelang-paddle``, a vendor's ``tilelang-musa``), decided from metadata
alone and named in messages; two at once are reported; a plugin requiring stock TileLang
over another build is explained.

The metadata here is written by hand into a folder on ``sys.path`` (the stand-in builds
ship a ``tilelang`` package of one file), and installed by ``pip`` for the command-line
tests; real TileLang builds, relabelled as installers write metadata, are in
``tests/test_tilelang_open_world.py``, and the index's ``tilelang-rocm`` in
:func:`test_the_rocm_build_is_refused_naming_what_it_lacks`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilelang_hostcg.diagnosis import words
from tilelang_hostcg.environment._builds import tilelang_builds
from tilelang_hostcg.environment._builds import tilelang_overlap as overlap_found
from tilelang_hostcg.environment._finding import find
from tilelang_hostcg.environment._metadata import distribution_name
from tilelang_hostcg.environment._requirements import check_requirements, other_build_requirements
from tilelang_hostcg.testing import PluginEnvironment
from tilelang_hostcg.tilelang import UnsupportedTileLangError
from tilelang_hostcg.tilelang._points import build_name

from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.skipif(find("tilelang") is not None,
                                reason="this environment has a TileLang build of its own")


def tilelang_distribution():  # the distribution whose files hold the `tilelang` that import gives
    found = find("tilelang")
    return found.owners[0] if found is not None and found.owners else None


def tilelang_distributions():
    return tilelang_builds()


def tilelang_overlap() -> str | None:  # the overlap's finding, in words
    finding = overlap_found()
    return None if finding is None else words(finding)


def installed_build():
    found = find("tilelang")
    assert found is not None, "no importable tilelang package"
    return build_name(found)

PADDLE_INIT = "# PaddlePaddle's build\n"
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
def test_paddles_build_is_tilelang(site: Path) -> None:
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": PADDLE_INIT})
    dist = tilelang_distribution()
    assert dist is not None and distribution_name(dist) == "tilelang-paddle"
    assert installed_build() == ("tilelang-paddle", "0.1.13")
    assert tilelang_overlap() is None
    # Plain `list` imports no TVM and names the build from metadata (a fresh process: this
    # one may have imported apache-tvm already).
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "list", "--json"], capture_output=True,
                          text=True, env={**env, "PYTHONPATH": str(site)}, cwd=site, timeout=300)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)["tvm"]
    assert doc["describe"] == "TVM bundled with tilelang-paddle 0.1.13 (not imported)"
    assert (doc["provider"], doc["distribution"]) == ("tilelang", "tilelang-paddle")


def _plain_list(site: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``tilelang-hostcg list ARGV`` in a fresh process with ``site`` first on ``sys.path``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    path = os.pathsep.join([str(site), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "list", *argv], capture_output=True,
                          text=True, env={**env, "PYTHONPATH": path}, cwd=site, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_plain_list_says_tilelangs_own_codegens_and_hooks_show_with_load(site: Path) -> None:
    assert json.loads(_plain_list(site, "--json").stdout)["note"] is None  # apache-tvm: nothing left out
    # A TileLang whose import would fail: plain list must answer without importing it.
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": "raise RuntimeError('imported')\n"})
    text = _plain_list(site)
    (note,) = [line for line in text.stderr.splitlines() if line.startswith("note: ")]
    assert "TileLang's own host codegens and hooks (such as 'tilelang-c'" in note, note
    assert "plain `list` imports nothing" in note
    assert "`tilelang-hostcg list --load` imports TileLang (tilelang-paddle 0.1.13) and lists them" in note
    doc = json.loads(_plain_list(site, "--json").stdout)
    assert doc["note"] == note.removeprefix("note: ") and doc["loaded"] is False
    assert "lists them" not in _plain_list(site, "--json").stderr  # with --json, in the document only


def test_a_build_name_whose_metadata_ships_no_tilelang_package_is_not_tilelang(site: Path) -> None:
    write_build(site, "tilelang-paddle", "0.1.13", {"paddle_only/__init__.py": ""})
    assert tilelang_distribution() is None
    import tilelang_hostcg.tilelang as integration

    with pytest.raises(UnsupportedTileLangError, match="not installed"):
        integration.install()


def test_top_level_txt_speaks_where_there_is_no_record(site: Path) -> None:
    info = write_build(site, "tilelang-paddle", "0.1.13", record=False)
    (info / "top_level.txt").write_text("paddle_only\n")
    assert tilelang_distribution() is None
    (info / "top_level.txt").write_text("tilelang\n")
    dist = tilelang_distribution()
    assert dist is not None and distribution_name(dist) == "tilelang-paddle"


def test_any_name_that_ships_the_package_is_tilelang(site: Path) -> None:
    write_build(site, "tilelang-musa", "0.1.15")
    assert installed_build() == ("tilelang-musa", "0.1.15")
    # Metadata beside another folder than the package's is not looked at (nor read).
    write_build(site / "elsewhere", "tilelang-other", "0.1.15", {"other/__init__.py": ""})
    assert [distribution_name(d) for d in tilelang_distributions()] == ["tilelang-musa"]


def test_an_editable_install_is_tilelang(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "checkout"
    (source / "tilelang").mkdir(parents=True)
    (source / "tilelang" / "__init__.py").write_text(STOCK_INIT)
    info = write_build(site, "tilelang", "0.1.16.dev0", {"__editable__.tilelang-0.1.16.dev0.pth": str(source)})
    (info / "direct_url.json").write_text(json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}}))
    assert tilelang_distribution() is None  # the package is not importable yet
    monkeypatch.syspath_prepend(str(source))  # what the .pth does at start-up
    assert installed_build() == ("tilelang", "0.1.16.dev0")


def test_a_stand_in_without_the_integration_points_is_refused_naming_them(site: Path) -> None:
    write_build(site, "tilelang-rocm", "0.1.4.post13")
    assert installed_build() == ("tilelang-rocm", "0.1.4.post13")
    import tilelang_hostcg.tilelang as integration

    try:
        with pytest.raises(UnsupportedTileLangError) as info:
            integration.install()  # it imports the installed TileLang to look at its points
        assert sys.modules["tilelang"].__file__ == str(site / "tilelang" / "__init__.py")
    finally:
        sys.modules.pop("tilelang", None)
    message = str(info.value)
    assert message.startswith("TileLang (tilelang-rocm 0.1.4.post13) lacks the integration point "
                              "tilelang.backend.module.BackendModule.get_host_codegen (or "
                              "tilelang.engine.lower.resolve_host_codegen)"), message
    assert "tilelang_hostcg.build() still works" in message and "pip install" not in message
    assert not integration.is_installed()


def test_two_builds_the_one_whose_files_are_installed_is_used(site: Path) -> None:
    # pip installed stock TileLang, then tilelang-paddle over the same folder: the files
    # are paddle's, and both RECORDs list them.
    write_build(site, "tilelang", "0.1.13", {"tilelang/__init__.py": STOCK_INIT}, write_files=False)
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": PADDLE_INIT})
    found = [distribution_name(d) for d in tilelang_distributions()]
    assert found == ["tilelang-paddle", "tilelang"]
    overlap = tilelang_overlap()
    assert overlap is not None
    assert "2 TileLang builds are installed (tilelang-paddle 0.1.13, tilelang 0.1.13)" in overlap
    assert "tilelang-hostcg uses tilelang-paddle 0.1.13" in overlap
    assert "pip uninstall -y tilelang" in overlap
    assert "then `pip install --force-reinstall --no-deps 'tilelang-paddle==0.1.13'`" in overlap
    finding = overlap_found()  # the facts, as data: the builds, the one kept, how they overlap
    assert finding is not None and finding.code == "tilelang-builds"
    assert (finding["kept"], finding["folders"], finding["overwritten"], finding["ghosts"]) == (
        "tilelang-paddle 0.1.13", "one", "yes", None)
    # The other way round: stock TileLang's files win.
    (site / "tilelang" / "__init__.py").write_text(STOCK_INIT)
    assert [distribution_name(d) for d in tilelang_distributions()] == ["tilelang", "tilelang-paddle"]


def test_a_ghost_build_without_a_record_is_removed_by_hand_not_by_pip(site: Path) -> None:
    """A distribution that names ``tilelang`` in ``top_level.txt`` but lists no files (no ``RECORD``):
    pip cannot uninstall it, so the advice says which folder to remove."""
    write_build(site, "tilelang", "0.1.15", {"tilelang/__init__.py": STOCK_INIT})
    ghost = write_build(site, "tilelang-ghost", "0.1.0", {}, record=False)
    (ghost / "top_level.txt").write_text("tilelang\n")
    overlap = tilelang_overlap()
    assert overlap is not None and "tilelang-ghost 0.1.0" in overlap, overlap
    assert "pip uninstall -y tilelang-ghost" not in overlap
    assert f"remove its metadata folder {str(ghost)!r} by hand" in overlap
    assert "pip cannot uninstall it" in overlap


def test_two_builds_in_different_folders_are_said_to_shadow_not_to_share(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    later = tmp_path / "later"
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": PADDLE_INIT})
    write_build(later, "tilelang", "0.1.15", {"tilelang/__init__.py": STOCK_INIT})
    monkeypatch.syspath_prepend(str(later))
    overlap = tilelang_overlap()
    assert overlap is not None
    assert "same folder" not in overlap and "breaks both" not in overlap and "shared files" not in overlap
    assert "they sit in different folders" in overlap and "the other is shadowed" in overlap
    assert "tilelang-hostcg uses tilelang 0.1.15" in overlap and "`pip uninstall -y tilelang-paddle`" in overlap


def test_two_builds_without_a_hash_to_tell_the_first_on_sys_path_is_used(
        site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    later = tmp_path / "later"
    write_build(site, "tilelang-paddle", "0.1.13", {"tilelang/__init__.py": PADDLE_INIT})
    write_build(later, "tilelang", "0.1.15", {"tilelang/__init__.py": STOCK_INIT})
    monkeypatch.syspath_prepend(str(later))  # first on sys.path now
    assert [distribution_name(d) for d in tilelang_distributions()] == ["tilelang", "tilelang-paddle"]


# ------------------------------------------------------------------ requirements
@pytest.mark.parametrize(("requires", "installed", "problem"), [
    # A requirement on any build is judged by the build installed, whatever its name.
    (["tilelang>=0.1.12"], {"tilelang-paddle": "0.1.13"}, None),
    (["tilelang>=0.1.14"], {"tilelang-paddle": "0.1.13"}, "'tilelang>=0.1.14' but tilelang-paddle 0.1.13"),
    (["tilelang-musa>=0.1.15"], {"tilelang-musa": "0.1.15"}, None),
    (["tilelang-musa>=0.1.16"], {"tilelang-musa": "0.1.15"}, "'tilelang-musa>=0.1.16' but tilelang-musa 0.1.15"),
    (["tilelang>=0.1.16"], {"tilelang-musa": "0.1.15"}, "'tilelang>=0.1.16' but tilelang-musa 0.1.15"),
    (["tilelang>=0.1.12"], {}, "no TVM is installed"),
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
    assert other_build_requirements(lines, "tilelang-musa") == [("tilelang>=0.1.12", "tilelang")]
    assert other_build_requirements(lines, "tilelang") == []


# ------------------------------------------------------------------ the commands
# Stand-in builds: their one-file ``tilelang`` package lacks TileLang's integration points, so
# the integration refuses it and the TVM in use stays apache-tvm.
STAND_IN = "0.1.11"


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
    # install() warns with the same text (before it refuses this stand-in, which lacks the points).
    proc = env.python_run("import tilelang_hostcg.tilelang as t; t.install()")
    assert "TileLangBuildsPluginWarning: 2 TileLang builds are installed" in proc.stderr, proc.stderr
    assert "UnsupportedTileLangError: TileLang (tilelang-paddle" in proc.stderr
    # As the message says: uninstalling one removes the files both RECORDs list ...
    env.uninstall("tilelang")
    assert env.python_run("import tilelang").returncode != 0
    # ... and reinstalling the one kept, as it says, repairs it.
    install(env, tmp_path, [_stand_in("tilelang-paddle", PADDLE_INIT)], "--force-reinstall")
    assert env.python_run("import tilelang").returncode == 0
    code, doc = _check(env, "--strict")
    assert code == 0 and not [p for p in doc["problems"] if p["code"] == "tilelang-builds"]


REQUIRES_STOCK = Plugin("tl-wants-stock", "1.0", hooks={"cuda": "tl_wants_stock"},
                        files={"tl_wants_stock.py": module(
                            'hc.register_host_codegen_hook("cuda", _hook("wants-stock"))')},
                        requires=("tilelang-hostcg", "tilelang>=0.1.10"))


REQUIRES_NEWER = Plugin("tl-wants-newer", "1.0", hooks={"rocm": "tl_wants_newer"},
                        files={"tl_wants_newer.py": module(
                            'hc.register_host_codegen_hook("rocm", _hook("wants-newer"))')},
                        requires=("tilelang-hostcg", "tilelang>=0.1.14"))


@pytest.mark.slow
def test_an_incompatible_plugin_is_not_also_said_to_work(tmp_path: Path) -> None:
    """A plugin requiring ``tilelang>=0.1.14`` beside ``tilelang-paddle`` 0.1.11: one truth.
    The installed build's version does not meet it, so it is ``incompatible``, and only that
    (not also "the plugin works with it, but pip ...")."""
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [_stand_in("tilelang-paddle", PADDLE_INIT), REQUIRES_NEWER])
    code, doc = _check(env)
    newer = [p for p in doc["problems"] if p["distribution"] == "tl-wants-newer"]
    assert code == 1 and [p["code"] for p in newer] == ["incompatible"], newer
    assert f"requires 'tilelang>=0.1.14' but tilelang-paddle {STAND_IN} is installed" in newer[0]["message"]
    assert not [p for p in doc["problems"] if "works with it" in p["message"]]


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
    assert "pip install --force-reinstall --no-deps 'tl-wants-stock==1.0'" in message
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
def test_the_rocm_build_is_refused_naming_what_it_lacks(tmp_path: Path) -> None:
    """The index's ``tilelang-rocm`` 0.1.4.post13 (a CPython 3.10 wheel only), installed by pip
    for 3.10 into this environment's folder: its metadata is real, and so is its package, which
    ``install()`` imports to look at its integration points (here its import fails); no message
    advises another TileLang."""
    env = PluginEnvironment(tmp_path / "venv")
    env.pip("install", "-q", "--no-deps", "--only-binary", ":all:", "--python-version", "3.10",
            "--platform", "manylinux1_x86_64", "--target", str(env.site_packages), ROCM)
    proc = env.python_run("""
        import json
        import tilelang_hostcg.tilelang as integration
        try:
            integration.install()
            error = None
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
        print(json.dumps({"error": error, "installed": integration.is_installed()}))
    """)
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["installed"] is False
    # Its import fails here (a dependency missing, or its CPython 3.10 libraries): the same build
    # reinstalled alone is the only advice; where it imported, the points it lacks would be named.
    assert "TileLang (tilelang-rocm 0.1.4.post13)" in out["error"], out
    advice = out["error"].split("pip install")[1:]
    assert all(a.startswith(" --force-reinstall --no-deps 'tilelang-rocm==0.1.4.post13'") for a in advice), out
    listed = env.python_run("import sys; from tilelang_hostcg.cli import main; sys.exit(main())", "list")
    assert listed.returncode == 0, listed.stderr
    assert "TVM bundled with tilelang-rocm 0.1.4.post13 (not imported)" in listed.stdout
    assert "Client: none: no third-party plugin is installed" in listed.stdout
