"""``--json``: a document's warnings are in the document, not on stderr, also those raised
before the command's own capture (a misspelt control is warned as TVM is imported): in
``explain``'s and ``list``'s ``warnings``, and in ``check`` as its ``control`` problem. The
text output shows each once on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MISSPELT = {"TILELANG_HOSTCG_DISABLEE": "x"}


def _run(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    return subprocess.run([sys.executable, "-m", "tilelang_hostcg", *argv], capture_output=True, text=True,
                          env={**env, **MISSPELT}, cwd=tmp_path, timeout=300)


@pytest.mark.parametrize("argv", [("explain", "llvm"), ("list",), ("list", "--load")])
def test_a_misspelt_control_is_in_the_documents_warnings(tmp_path: Path, argv: tuple[str, ...]) -> None:
    proc = _run(tmp_path, *argv, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    (warning,) = json.loads(proc.stdout)["warnings"]
    assert "'TILELANG_HOSTCG_DISABLEE' is not a tilelang-hostcg control" in warning


def test_check_json_has_it_as_a_problem_and_nothing_on_stderr(tmp_path: Path) -> None:
    proc = _run(tmp_path, "check", "--json")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    (problem,) = [p for p in json.loads(proc.stdout)["problems"] if p["code"] == "control"]
    assert "TILELANG_HOSTCG_DISABLEE" in problem["message"]


def test_the_text_output_shows_it_once(tmp_path: Path) -> None:
    proc = _run(tmp_path, "explain", "llvm")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("TILELANG_HOSTCG_DISABLEE") == 1, proc.stderr
    assert proc.stderr.startswith("warning: "), proc.stderr


def test_warnings_caught_before_the_capture_are_told_apart_by_code_and_facts_not_words() -> None:
    """A warning worded as one the document tells, but of another code or about other facts, is another
    warning: it is added to the document's ``warnings`` (or shown); the one the document tells (by its
    code and facts, :func:`told`) is not added again."""
    import warnings

    from tilelang_hostcg.cli._output import quietly, told
    from tilelang_hostcg.core import ControlPluginWarning, MetadataPluginWarning, PluginWarning, warn_plugin

    def build(result: object) -> object:
        warn_plugin("same words", ControlPluginWarning, facts=("TILELANG_HOSTCG_A", "x"))
        warn_plugin("same words", ControlPluginWarning, facts=("TILELANG_HOSTCG_B", "x"))
        warn_plugin("same words", MetadataPluginWarning, facts=("TILELANG_HOSTCG_A", "x"))
        told([(ControlPluginWarning.code, ("TILELANG_HOSTCG_A", "x"))])  # as a document's own capture tells it
        return result

    doc = quietly(build, {"warnings": ["same words"]})
    assert doc == {"warnings": ["same words", "same words", "same words"]}
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        assert quietly(build, {"problems": [{"code": "control", "message": "same words"}]}) is not None
    assert sorted((w.category.code, w.message.facts) for w in shown if issubclass(w.category, PluginWarning)) == [
        ("control", ("TILELANG_HOSTCG_B", "x")), ("plugin-metadata", ("TILELANG_HOSTCG_A", "x"))]
