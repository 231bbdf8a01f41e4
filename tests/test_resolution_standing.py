"""The decision places every candidate (chosen, or why not) and orders the matches; ``explain``
words those places and never decides again. Real TVM targets and TVM's own ``target.build.c``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tilelang_hostcg import HostCodegen, Registry, global_func_host_codegen
from tilelang_hostcg.cli import _explain
from tilelang_hostcg.core import PROCESS, ControlPluginWarning
from tilelang_hostcg.discovery import Controls
from tilelang_hostcg.registry import Standing

BUILD = global_func_host_codegen("target.build.c")


def _registry(controls: Controls | None = None) -> Registry:
    registry = Registry(controls=controls or Controls())
    for name, priority, matches in (("high", 20, True), ("first-ten", 10, True), ("second-ten", 10, True),
                                    ("never", 30, False)):
        registry.register_host_codegen(
            "c", HostCodegen(name, BUILD, priority=priority, supports_target=lambda t, m=matches: m))
    return registry


def _places(registry: Registry) -> dict[str, tuple[Standing, str | None]]:
    resolution = registry.resolution("c")
    return {c.registration.name: (c.standing, c.beaten_by.name if c.beaten_by else None)
            for c in resolution.candidates}


def test_every_candidate_has_the_place_the_decision_gave_it() -> None:
    registry = _registry()
    assert _places(registry) == {"high": (Standing.SELECTED, None), "first-ten": (Standing.LOWER_PRIORITY, "high"),
                                 "second-ten": (Standing.LOWER_PRIORITY, "high"), "never": (Standing.NO_MATCH, None)}
    assert registry.allowed_host_codegens_for_target("c") == ["high", "first-ten", "second-ten"]
    registry.unregister_host_codegen("c", "high")
    assert _places(registry)["second-ten"] == (Standing.LATER, "first-ten")


def test_a_preference_places_the_others_below_the_preferred_one_and_first_in_the_order() -> None:
    registry = _registry(Controls(prefer={"c": "second-ten"}))
    places = _places(registry)
    assert places["second-ten"] == (Standing.SELECTED, None)
    assert places["high"] == (Standing.NOT_PREFERRED, "second-ten")
    assert registry.allowed_host_codegens_for_target("c") == ["second-ten", "high", "first-ten"]


def test_explain_words_the_places_of_the_decision() -> None:
    """``explain``'s reasons follow each candidate's standing: change the decision's record and the words follow."""
    registry = _registry()
    resolution = registry.resolution("c")
    reasons = {c.registration.name: _explain._codegen_reason(resolution, c, registry.controls)
               for c in resolution.candidates}
    assert reasons["high"].startswith("selected: highest priority (20)")
    assert reasons["first-ten"] == "passed over: priority 10 is lower than 'high' (20)"
    assert reasons["never"] == "passed over: its supports_target returned False for this target"
    later = next(c for c in resolution.candidates if c.registration.name == "second-ten")
    moved = replace(later, standing=Standing.LATER, beaten_by=resolution.choice.registration)
    assert _explain._codegen_reason(resolution, moved, registry.controls) == (
        "passed over: equal priority 10, registered after 'high'")


def test_explain_reads_the_preference_problem_the_decision_found(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``TILELANG_HOSTCG_PREFER`` naming no codegen of the kind: the decision records the problem (and
    warns it) and ``explain``'s control line is its words; take the record away and the line says what is left."""
    monkeypatch.setattr(PROCESS, "warned", set())  # as if nothing had been warned yet
    registry = _registry(Controls(prefer={"c": "secnd-ten"}))
    with pytest.warns(ControlPluginWarning, match="has no codegen named 'secnd-ten'"):
        resolution = registry.resolution("c")
    assert resolution.unknown_preference is not None
    assert resolution.unknown_preference.item == "c=secnd-ten"
    (line,) = _explain._applied_controls(registry.controls, resolution, [])
    assert line["effect"] == resolution.unknown_preference.message
    assert "second-ten" in line["effect"]  # the nearest name, as the words give it
    (line,) = _explain._applied_controls(registry.controls, replace(resolution, unknown_preference=None), [])
    assert line["effect"] == "'secnd-ten' does not match this target; resolution went by priority"
