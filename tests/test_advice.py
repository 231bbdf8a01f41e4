"""Advice is safe to follow as written: one helper, ``tilelang_hostcg.environment._advice.reinstall``,
words every reinstall the package advises (never with the dependencies, the name and version
shell-quoted), and no other text of the package words one."""

from __future__ import annotations

import ast
import shlex
from pathlib import Path

import pytest

import tilelang_hostcg
from tilelang_hostcg.environment._advice import reinstall

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


def _helper_lines() -> range:
    tree = ast.parse((PACKAGE / "environment" / "_advice.py").read_text())
    (helper,) = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "reinstall"]
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
            if path.name == "_advice.py" and node.lineno in helper:
                found += 1
            elif words_one:
                bypassing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {text!r}")
    assert found >= 2  # the helper's own wordings: the test sees them
    assert bypassing == [], "reinstall advice that bypasses _advice.reinstall:\n" + "\n".join(bypassing)


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
