"""Advice is safe to follow as written, and each piece is written once: one helper,
``tilelang_hostcg.diagnosis._advice.reinstall``, words every reinstall the package advises (never
with the dependencies, the name and version shell-quoted), one, ``uninstall``, every uninstall
(it asks nothing), and no other text of the package words one."""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest

import tilelang_hostcg
from tilelang_hostcg.diagnosis import reinstall, uninstall

PACKAGE = Path(tilelang_hostcg.__file__).parent
# A reinstall or put-back: pinned, forced, without dependencies, or editable.
REINSTALL_MARKS = ("--force-reinstall", "--no-deps", "==", " -e ")


@pytest.mark.parametrize("args, spec", [
    (("tilelang", "0.1.15"), "tilelang==0.1.15"),
    (("hcg-x",), "hcg-x"),
    (("apache-tvm-ffi<0.1.13,>=0.1.11",), "apache-tvm-ffi<0.1.13,>=0.1.11"),
    (("/src/my plugin",), "/src/my plugin"),
    (("it's", "1.0"), "it's==1.0"),
])
def test_reinstall_advice_is_safe_to_follow_as_written(args: tuple[str, ...], spec: str) -> None:
    command = reinstall(*args)
    assert shlex.split(command) == ["pip", "install", "--force-reinstall", "--no-deps", spec]
    assert command.split("--no-deps ", 1)[1][0] == "'"  # quoted alike, whatever the name
    assert shlex.split(reinstall(spec, editable=True)) == ["pip", "install", "--no-deps", "-e", spec]


ADVICE = PACKAGE / "diagnosis" / "_advice.py"


def _helper_lines(name: str = "reinstall") -> range:
    tree = ast.parse(ADVICE.read_text())
    (helper,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name]
    return range(helper.lineno, (helper.end_lineno or helper.lineno) + 1)


def test_one_helper_words_every_reinstall() -> None:
    """Every text of the package (string literals, f-string parts and docstrings) that words
    a ``pip install`` reinstall or put-back comes from the helper."""
    helper = _helper_lines()
    found, bypassing = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if "pip install" not in text and "force-reinstall" not in text:
                continue
            words_one = "force-reinstall" in text or any(
                mark in text.partition("pip install")[2] for mark in REINSTALL_MARKS)
            if path == ADVICE and node.lineno in helper:
                found += 1
            elif words_one:
                bypassing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {text!r}")
    assert found >= 2  # the helper's own wordings: the test sees them
    assert bypassing == [], "reinstall advice that bypasses _advice.reinstall:\n" + "\n".join(bypassing)


def test_one_helper_words_every_uninstall() -> None:
    """Every text of the package that words a ``pip uninstall`` comes from :func:`uninstall`, which
    asks nothing (``-y``), so the command runs as written."""
    assert shlex.split(uninstall("hcg-x")) == ["pip", "uninstall", "-y", "hcg-x"]
    helper = _helper_lines("uninstall")
    found, bypassing = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str) and "pip uninstall" in node.value):
                continue
            if path == ADVICE and node.lineno in helper:
                found += 1
            elif re.search(r"(?<!``)pip uninstall", node.value):  # not a docstring naming ``pip uninstall``
                bypassing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert found >= 1
    assert bypassing == [], "uninstall advice that bypasses _advice.uninstall:\n" + "\n".join(bypassing)


def test_help_speaks_to_apache_tvm_users_too(capsys: pytest.CaptureFixture[str]) -> None:
    from tilelang_hostcg.cli import main

    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "host-codegen plugins of TileLang and Apache TVM" in " ".join(text.split())


def test_auto_install_typo_speaks_of_both_integrations() -> None:
    from tilelang_hostcg.discovery._controls import auto_install_problem

    problem = auto_install_problem("nope")
    assert problem is not None
    assert "activation at `import tilelang` and `import tvm` stays on" in problem.message
    assert "TILELANG_HOSTCG_AUTO_INSTALL=0" in problem.message


def test_reinstall_advice_of_what_is_not_installed_says_how_it_was_installed_is_not_known() -> None:
    from tilelang_hostcg.registry._failures import reinstall_advice

    text = reinstall_advice("hcg-never-installed", "1.0")
    assert "`pip install --force-reinstall --no-deps 'hcg-never-installed==1.0'` if it came from an index" in text
    assert "how it was installed is not known" in text and "folder or file" in text


def test_reinstall_advice_from_a_lock_names_the_source_it_kept(tmp_path: Path) -> None:
    """Where the lock kept how a distribution was installed (``direct_url.json``), the advice installs
    from that source: a folder still there as it is, a VCS at its commit; a folder that is gone is named,
    with the command to run once it is back, never an index that may not have it."""
    from tilelang_hostcg.registry._failures import reinstall_advice

    there = reinstall_advice("hcg-never-installed", "1.0", {"url": tmp_path.as_uri(), "dir_info": {}})
    assert there == f"`pip install --force-reinstall --no-deps '{tmp_path}'` (as it was installed when locked)"
    gone = tmp_path / "gone"
    text = reinstall_advice("hcg-never-installed", "1.0", {"url": gone.as_uri(), "dir_info": {"editable": True}})
    assert f"it was installed from '{gone}', which is gone: put that folder or file back, then " in text, text
    assert f"`pip install --no-deps -e '{gone}'`" in text and "==1.0" not in text, text
    vcs = reinstall_advice("hcg-never-installed", "1.0", {"url": "https://example.org/x.git",
                                                          "vcs_info": {"vcs": "git", "commit_id": "abc123"}})
    assert "'git+https://example.org/x.git@abc123'" in vcs, vcs


def test_reinstall_advice_of_an_editable_install_is_editable() -> None:
    from importlib.metadata import distribution

    from tilelang_hostcg.environment._metadata import editable_source
    from tilelang_hostcg.registry._failures import reinstall_advice

    source = editable_source(distribution("tilelang-hostcg"))
    if source is None:
        pytest.skip("tilelang-hostcg is not installed editable here (the test set-up installs it with -e)")
    text = reinstall_advice("tilelang-hostcg", "0.0.1")
    assert text.startswith(f"`{reinstall(source, editable=True)}`"), text
    assert "0.0.1" not in text  # the folder holds what it holds: no version pinned


def test_reinstall_advice_of_an_index_install_pins_the_version() -> None:
    from importlib.metadata import distribution

    from tilelang_hostcg.environment._metadata import direct_url
    from tilelang_hostcg.registry._failures import reinstall_advice

    assert not direct_url(distribution("packaging")).get("url")  # from an index
    assert reinstall_advice("packaging", "23.0") == f"`{reinstall('packaging', '23.0')}`"


@pytest.fixture
def raising_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    (tmp_path / "hcg_raises_at_import.py").write_text("raise RuntimeError('the acme SDK is missing')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "hcg_raises_at_import"
    import sys
    sys.modules.pop("hcg_raises_at_import", None)


def test_a_lazy_module_that_raises_is_said_to_raise_not_to_be_misnamed(hostcg_registry, raising_module) -> None:
    hostcg_registry.register_lazy_host_codegen("c", raising_module)
    with pytest.raises(tilelang_hostcg.PluginLoadError) as caught:
        hostcg_registry.resolve_host_codegen("c")
    message = str(caught.value)
    assert "RuntimeError: the acme SDK is missing" in message
    assert "the module raised while 'hcg_raises_at_import' was imported" in message
    assert "fix the import path" not in message


def test_a_lazy_module_that_does_not_exist_is_said_to_be_misnamed(hostcg_registry) -> None:
    hostcg_registry.register_lazy_host_codegen("c", "hcg_no_such_module_here")
    with pytest.raises(tilelang_hostcg.PluginLoadError, match="fix the import path 'hcg_no_such_module_here'"):
        hostcg_registry.resolve_host_codegen("c")
