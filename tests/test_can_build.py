"""The one "can build" rule: the TVM global functions a codegen needs are those it
declares (``HostCodegen(..., global_funcs=...)``) and those seen in its build, and a
codegen needing one the TVM in use lacks never matches (real apache-tvm)."""

from __future__ import annotations

import pytest

import tilelang_hostcg as hc

HELD = hc.global_func_host_codegen("target.build.c")
GONE = hc.global_func_host_codegen("target.build.hcgt_gone")


def _module_global(mod, target):
    return GONE(mod, target)


def missing(codegen: hc.HostCodegen) -> str | None:
    """The TVM global function the resolution finds ``codegen`` lacks (``None``: it builds)."""
    registry = hc.Registry()
    registry.register_host_codegen("c", codegen)
    (candidate,) = registry.resolution("c").candidates
    return candidate.detail if candidate.verdict == "missing-build" else None


def test_what_is_seen_and_what_is_declared() -> None:
    made_later = hc.global_func_host_codegen
    closed = hc.global_func_host_codegen("target.build.hcgt_closed")

    def closure(mod, target):
        return closed(mod, target)

    def made_at_call(mod, target):
        return made_later("target.build.hcgt_later")(mod, target)

    assert missing(hc.HostCodegen("held", HELD)) is None
    assert missing(hc.HostCodegen("a", GONE)) == "target.build.hcgt_gone"
    assert missing(hc.HostCodegen("b", _module_global)) == "target.build.hcgt_gone"
    assert missing(hc.HostCodegen("c", closure)) == "target.build.hcgt_closed"
    assert missing(hc.HostCodegen("d", made_at_call)) is None  # not seen: declare it
    declared = hc.HostCodegen("e", made_at_call, global_funcs=["target.build.hcgt_later"])
    assert declared.global_funcs == ("target.build.hcgt_later",)
    assert missing(declared) == "target.build.hcgt_later"


def test_global_funcs_is_keyword_only_and_checked() -> None:
    with pytest.raises(TypeError):
        hc.HostCodegen("x", HELD, None, 0, ("target.build.c",))  # type: ignore[misc]
    with pytest.raises(TypeError, match="sequence of TVM global function names"):
        hc.HostCodegen("x", HELD, global_funcs="target.build.c")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="non-empty strings"):
        hc.HostCodegen("x", HELD, global_funcs=("",))


def test_a_declared_missing_function_means_cannot_build() -> None:
    registry = hc.Registry()
    registry.register_host_codegen("c", hc.HostCodegen("generic", HELD))
    registry.register_host_codegen("c", hc.HostCodegen(
        "acme", lambda mod, target: HELD(mod, target), priority=10,
        global_funcs=("target.build.hcgt_missing",)))
    assert registry.resolve_host_codegen("c").name == "generic"
    verdicts = {c.registration.name: (c.verdict, c.detail) for c in registry.resolution("c").candidates}
    assert verdicts["acme"] == ("missing-build", "target.build.hcgt_missing")
