"""What ``tilelang-hostcg check`` says of a plugin that fails to load: where it failed (its
own line), its own traceback, the command that reinstalls it as it was installed, and its
text escaped where a terminal would interpret it. In-process, through the command line's
``main``, over real modules and real metadata folders on ``sys.path``. The other outputs'
use of the same rules is tested in ``tests/test_cli_plugins.py``."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tilelang_hostcg.cli import main

from .conftest import ModuleFolder
from .plugin_factory import CODEGEN_GROUP


def broken(modules: ModuleFolder, source: str, direct_url: dict[str, object] | None = None) -> str:
    """Install ``source`` as the module of distribution ``hcg-x``'s ``llvm`` codegen
    (``direct_url``: its PEP 610 record); returns the module's name."""
    name = modules.write(source)
    folder = modules.distribution("hcg-x", {CODEGEN_GROUP: {"llvm": f"{name}:X"}},
                                  requires=("tilelang-hostcg",))
    if direct_url is not None:
        (folder / "direct_url.json").write_text(json.dumps(direct_url))
    return name


def check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          *argv: str) -> tuple[int, str]:
    """``tilelang-hostcg check ARGV`` with ``hcg-x`` the only plugin: exit code, stdout."""
    monkeypatch.setenv("TILELANG_HOSTCG_ONLY", "hcg-x")
    code = main(["check", *argv])
    return code, capsys.readouterr().out


def problem(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """The one problem ``check --json`` reports of ``hcg-x``."""
    code, out = check(monkeypatch, capsys, "--json")
    assert code == 1, out
    (found,) = [p for p in json.loads(out)["problems"] if p["distribution"] == "hcg-x"]
    assert found["code"] == "broken", found
    return found


def test_the_failure_site_and_the_traceback_are_the_plugins_own(
        modules: ModuleFolder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    helper = modules.write("def parse(text):\n    import json\n    return json.loads(text)\n")
    name = broken(modules, f"import {helper}\n\n{helper}.parse('not json')\n")
    found = problem(monkeypatch, capsys)
    plugin_file = str(modules.root / f"{name}.py")
    assert f"(at {plugin_file}:3)" in found["message"]  # its own line, not json's
    lines = found["traceback"]
    assert lines[0] == "Traceback (most recent call last):"
    assert f'  File "{plugin_file}", line 3, in <module>' in lines
    assert f"    {helper}.parse('not json')" in lines
    assert lines[-1].startswith("json.decoder.JSONDecodeError: Expecting value")
    files = [line for line in lines if line.startswith("  File ")]
    assert not any("importlib" in line or "<frozen" in line or "tilelang_hostcg" in line
                   for line in files), files


def test_a_traceback_keeps_the_causes(modules: ModuleFolder, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    broken(modules, "try:\n    {}['x']\nexcept KeyError as exc:\n    raise RuntimeError('no x') from exc\n")
    lines = problem(monkeypatch, capsys)["traceback"]
    assert lines.index("KeyError: 'x'") < lines.index(
        "The above exception was the direct cause of the following exception:")
    assert lines[-1] == "RuntimeError: no x"


def test_a_syntax_errors_site_is_the_file_that_does_not_compile(
        modules: ModuleFolder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    name = broken(modules, "x = 1\n\n\ndef broken(:\n    pass\n")
    assert f"(at {modules.root / f'{name}.py'}:4)" in problem(monkeypatch, capsys)["message"]


@pytest.mark.parametrize("direct_url, expected", [
    (None, "pip install --force-reinstall --no-deps 'hcg-x==1.0'"),  # from an index, this version
    ({"url": "file:///src/hcg%20x", "dir_info": {"editable": True}}, "pip install --no-deps -e '/src/hcg x'"),
    ({"url": "file:///src/hcg-x", "dir_info": {}}, "pip install --force-reinstall --no-deps '/src/hcg-x'"),
    ({"url": "file:///w/hcg_x-1.0-py3-none-any.whl", "archive_info": {}},
     "pip install --force-reinstall --no-deps '/w/hcg_x-1.0-py3-none-any.whl'"),
    ({"url": "https://example.org/hcg-x.git", "vcs_info": {"vcs": "git", "commit_id": "abc"}},
     "pip install --force-reinstall --no-deps 'git+https://example.org/hcg-x.git@abc'"),
    ({"url": 7}, "pip install --force-reinstall --no-deps 'hcg-x==1.0'"),  # not PEP 610: the index form
])
def test_the_reinstall_command_follows_how_it_was_installed(
        modules: ModuleFolder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        direct_url: dict[str, object] | None, expected: str) -> None:
    broken(modules, "raise ImportError('gone')\n", direct_url)
    assert f"fix or reinstall 'hcg-x' ({expected})" in problem(monkeypatch, capsys)["message"]


@pytest.mark.parametrize("text, expected", [
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("bell\x07 cr\r lf\n tab\t nul\x00 del\x7f", "bell\\x07 cr\\r lf\\n tab\\t nul\\x00 del\\x7f"),
    ("csi\x9b nel\x85", "csi\\x9b nel\\x85"),
    ("\u202eabc\u202c \u2066x\u2069 \u200e\u200f\u061c", "\\u202eabc\\u202c \\u2066x\\u2069 \\u200e\\u200f\\u061c"),
    ("caf\u00e9 \u4e2d", "caf\u00e9 \u4e2d"),  # printable text stays as it is
    ("\udcff", "\\xff"),  # a byte that was not UTF-8
    ("'\\udcfe'", "'\\xfe'"),  # the same, as repr() writes it
])
def test_a_plugins_text_is_shown_escaped(
        modules: ModuleFolder, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        text: str, expected: str) -> None:
    broken(modules, f"raise RuntimeError({text!r})\n")
    code, out = check(monkeypatch, capsys)
    assert code == 1
    (line,) = [line for line in out.splitlines() if "hcg-x" in line and "failed to load" in line]
    assert f"RuntimeError: {expected} (at " in line, line
