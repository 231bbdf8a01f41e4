"""How ``check`` judges the report of its probe process (:func:`tilelang_hostcg.cli._probe_process.judge`):
only a report that ends in a result, from a process that ended well, confirms; a line that is no report,
a process that ended or ran past the bound before it reported, or a plugin's call that printed is a failed
probe, naming the codegen or hook that was running. The probe process's own report lines, as
:mod:`tilelang_hostcg.cli._probe_child` writes them; the real process is in ``tests/test_probe_isolation.py``."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest

from tilelang_hostcg.cli._probe_process import DEFAULT_BOUND, Bound, judge, package_folder, probe_bound
from tilelang_hostcg.clients._probe import ENDED, GARBLED, PRINTED, RAISED, TIMED_OUT
from tilelang_hostcg.core import PluginWarning, SkippedPluginWarning, warn_plugin, warning_class
from tilelang_hostcg.core._errors import InputError

CALL = {"event": "call", "group": "tilelang.host_codegen", "kind": "c", "name": "odd-c", "distribution": "hcg-odd",
        "version": "1.0", "entry_point": "c = hcg_odd:CODEGEN", "plugin": True}
RESULT = {"called": True, "text": "confirmed by a probe build", "seconds": 0.01, "hints": [], "error": None}
DONE = {"event": "result", "probe": RESULT, "warnings": []}


def _lines(*events: dict[str, Any]) -> list[bytes]:
    return [json.dumps(e).encode() for e in ({"event": "hello", "package": package_folder()},
                                             {"event": "stage", "stage": "building the probe"}, *events)]


def test_a_full_report_from_a_process_that_ended_well_confirms() -> None:
    found = judge(_lines(CALL, {"event": "return", "stdout": 0, "stderr": 0}, DONE), 0, False, DEFAULT_BOUND)
    assert found.confirmed and found.failure is None and found.text == "confirmed by a probe build"


@pytest.mark.parametrize("line", [
    b"confirmed by a probe build", b'{"event": "result", "probe": {"called": "yes"}, "warnings": []}',
    json.dumps({**CALL, "plugin": 1}).encode(), json.dumps({**DONE, "warnings": [["text", "yes"]]}).encode(),
    json.dumps({**DONE, "warnings": [["text", "control", [1]]]}).encode(),
    b"[]", b'{"event": 7}'])
def test_a_line_that_is_no_report_fails_the_probe(line: bytes) -> None:
    found = judge([*_lines(), line, *_lines(DONE)[2:]], 0, False, DEFAULT_BOUND)
    assert not found.confirmed and found.failure is not None and found.failure.how == GARBLED
    assert "what is no probe report" in found.text


def test_a_process_that_ends_in_a_call_fails_the_probe_naming_it() -> None:
    found = judge(_lines(CALL), 0, False, DEFAULT_BOUND)
    assert found.failure is not None and found.failure.how == ENDED and found.failure.blames_plugin
    assert found.text.startswith("the probe build failed in codegen 'odd-c' for kind 'c' (distribution 'hcg-odd' 1.0")
    assert "its process ended (exit status 0) before it reported" in found.text and found.called is True


def test_a_result_from_a_process_that_did_not_end_well_is_no_pass() -> None:
    found = judge(_lines(DONE), -11, False, DEFAULT_BOUND)
    assert found.failure is not None and found.failure.how == ENDED and "signal SIGSEGV" in found.text


def test_running_past_the_bound_names_what_ran() -> None:
    found = judge(_lines(CALL), None, True, Bound(7.0, "--probe-timeout"))
    assert found.failure is not None and found.failure.how == TIMED_OUT
    assert "codegen 'odd-c'" in found.text and "within 7 s (the bound --probe-timeout gives)" in found.text
    idle = judge(_lines(), None, True, DEFAULT_BOUND)  # in the compiler's own code
    assert idle.failure is not None and idle.failure.running is None and not idle.failure.blames_plugin
    assert "while building the probe (no codegen or hook was running)" in idle.text
    assert "120 s (the default bound; --probe-timeout SECONDS or TILELANG_HOSTCG_PROBE_TIMEOUT change it)" in idle.text


def test_the_innermost_call_that_raised_is_named() -> None:
    hook = {**CALL, "group": "tilelang.host_codegen_hooks", "kind": "cuda", "name": "odd-hook"}
    raised = {"event": "raise", "error": "RuntimeError: no", "stdout": 0, "stderr": 0}
    failed = {"event": "result", "probe": {**RESULT, "error": "RuntimeError: no"}, "warnings": []}
    found = judge(_lines(CALL, hook, raised, raised, failed), 0, False, DEFAULT_BOUND)
    assert found.failure is not None and found.failure.how == RAISED
    assert found.text.startswith("the probe build failed in hook 'odd-hook' for kind 'cuda'")


def test_a_plugin_call_that_printed_fails_the_probe_and_a_default_that_printed_does_not() -> None:
    printed = {"event": "return", "stdout": 5, "stderr": 0}
    found = judge(_lines(CALL, printed, DONE), 0, False, DEFAULT_BOUND)
    assert found.failure is not None and found.failure.how == PRINTED and not found.failure.blames_plugin
    assert "it wrote 5 bytes to stdout while it ran" in found.text
    default = judge(_lines({**CALL, "plugin": False}, printed, DONE), 0, False,
                    DEFAULT_BOUND)
    assert default.confirmed


def test_no_probe_in_the_process_or_another_tilelang_hostcg_is_no_pass() -> None:
    found = judge(_lines({"event": "result", "probe": None, "warnings": []}), 0, False, DEFAULT_BOUND)
    assert found.failure is not None and "had no probe build to run" in found.text
    other = [json.dumps({"event": "hello", "package": "/elsewhere/tilelang_hostcg"}).encode(),
             *_lines(DONE)[1:]]
    found = judge(other, 0, False, DEFAULT_BOUND)
    assert found.failure is not None and found.failure.how == GARBLED and "/elsewhere" in found.text


def test_the_bound_comes_from_the_flag_then_the_variable_and_each_is_checked() -> None:
    variable = "TILELANG_HOSTCG_PROBE_TIMEOUT"
    assert probe_bound(None, {}) == DEFAULT_BOUND and DEFAULT_BOUND.seconds == 120
    assert probe_bound(None, {variable: " 30 "}) == Bound(30.0, variable)
    assert probe_bound("45.5", {variable: "30"}) == Bound(45.5, "--probe-timeout")
    for flag, environ, named in (("nan", {}, "--probe-timeout='nan'"), ("90000", {}, "--probe-timeout='90000'"),
                                 ("30", {variable: ""}, f"{variable}=''"),
                                 (None, {variable: "1m"}, f"{variable}='1m'")):
        with pytest.raises(InputError, match="is not a time bound for check's probe build") as caught:
            probe_bound(flag, environ)
        assert named in str(caught.value)


def test_the_plugin_warnings_of_the_process_come_with_its_probe() -> None:
    told = [["predicate of 'odd-c' raised; it is treated as not matching", "predicate-failed",
             ["c", "odd-c", "hcg-odd", None, "raised"]], ["'bad' is skipped", "plugin-skipped", ["bad"]]]
    found = judge(_lines({"event": "result", "probe": RESULT, "warnings": told}), 0, False, DEFAULT_BOUND)
    assert found.confirmed and found.warnings == tuple((text, code, tuple(facts)) for text, code, facts in told)


def test_the_probes_warnings_are_given_here_as_their_classes_with_their_facts() -> None:
    told = [["'bad' is skipped", "plugin-skipped", ["bad"]], ["an old word", "no-such-code", []]]
    found = judge(_lines({"event": "result", "probe": RESULT, "warnings": told}), 0, False, DEFAULT_BOUND)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for text, code, facts in found.warnings:
            warn_plugin(text, warning_class(code), facts=facts)
    assert [(w.category, w.message.key) for w in caught] == [  # type: ignore[union-attr]
        (SkippedPluginWarning, ("plugin-skipped", ("bad",))), (PluginWarning, ("plugin", ("an old word",)))]
