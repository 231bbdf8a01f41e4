"""Unit tests of two internal modules: ``tilelang_hostcg._errors`` (how text from outside is
shown) and ``tilelang_hostcg._failures`` (where a plugin failed, its own traceback, and the
command that reinstalls it), over real modules and real metadata folders. The command
line's use of them is tested in ``tests/test_cli_plugins.py``."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from tilelang_hostcg._errors import shown
from tilelang_hostcg._failures import failure_site, plugin_traceback, reinstall_command

from .conftest import ModuleFolder


@pytest.mark.parametrize("text, expected", [
    ("plain name", "plain name"),
    ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    ("bell\x07 cr\r lf\n tab\t nul\x00 del\x7f", "bell\\x07 cr\\r lf\\n tab\\t nul\\x00 del\\x7f"),
    ("csi\x9b nel\x85", "csi\\x9b nel\\x85"),
    ("\u202eabc\u202c \u2066x\u2069 \u200e\u200f\u061c", "\\u202eabc\\u202c \\u2066x\\u2069 \\u200e\\u200f\\u061c"),
    ("caf\u00e9 \u4e2d", "caf\u00e9 \u4e2d"),  # printable text stays as it is
    (b"\xff".decode("utf-8", "surrogateescape"), "\\xff"),  # a byte that was not UTF-8
    ("'\\udcfe'", "'\\xfe'"),  # the same, as repr() writes it
])
def test_shown_escapes_what_a_terminal_would_interpret(text: str, expected: str) -> None:
    assert shown(text) == expected


def test_the_failure_site_is_the_plugins_innermost_frame(modules: ModuleFolder) -> None:
    helper = modules.write("def parse(text):\n    import json\n    return json.loads(text)\n")
    name = modules.write(f"import {helper}\n\n{helper}.parse('not json')\n")
    with pytest.raises(ValueError) as caught:
        importlib.import_module(name)
    plugin_file = str(modules.root / f"{name}.py")
    assert failure_site(caught.value, name) == (plugin_file, 3)  # its own line, not json's
    innermost = failure_site(caught.value)  # no module named: the innermost frame of all
    assert innermost is not None and innermost[0].endswith("decoder.py")
    lines = plugin_traceback(caught.value)
    assert lines[0] == "Traceback (most recent call last):"
    assert f'  File "{plugin_file}", line 3, in <module>' in lines
    assert f"    {helper}.parse('not json')" in lines
    assert lines[-1].startswith("json.decoder.JSONDecodeError: Expecting value")
    files = [line for line in lines if line.startswith("  File ")]
    assert not any("importlib" in line or "<frozen" in line for line in files), files
    assert failure_site(None) is None and plugin_traceback(None) == []


def test_a_traceback_keeps_the_causes(modules: ModuleFolder) -> None:
    name = modules.write("try:\n    {}['x']\nexcept KeyError as exc:\n"
                         "    raise RuntimeError('no x') from exc\n")
    with pytest.raises(RuntimeError) as caught:
        importlib.import_module(name)
    lines = plugin_traceback(caught.value)
    assert lines.index("KeyError: 'x'") < lines.index(
        "The above exception was the direct cause of the following exception:")
    assert lines[-1] == "RuntimeError: no x"


def _dist_info(root: Path, name: str, direct_url: dict[str, object] | None) -> str:
    folder = root / f"{name.replace('-', '_')}-1.0.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if direct_url is not None:
        (folder / "direct_url.json").write_text(json.dumps(direct_url))
    return str(folder)


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
def test_reinstall_command_follows_how_it_was_installed(tmp_path: Path,
                                                        direct_url: dict[str, object] | None,
                                                        expected: str) -> None:
    assert reinstall_command("hcg-x", _dist_info(tmp_path, "hcg-x", direct_url)) == expected


def test_a_syntax_errors_site_is_the_file_that_does_not_compile(modules: ModuleFolder) -> None:
    name = modules.write("x = 1\n\n\ndef broken(:\n    pass\n")
    with pytest.raises(SyntaxError) as caught:
        importlib.import_module(name)
    assert failure_site(caught.value, name) == (str(modules.root / f"{name}.py"), 4)
