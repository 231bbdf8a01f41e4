"""Loading is linear in what a plugin registers: one kind with four times the codegens
costs four times the work, whether they come from a plugin's load, from code, or from a
load that fails and is rolled back. The work is counted, not timed: every Python-level
call made (``sys.setprofile``), from the first use of the kind to its answer, so the
figure does not depend on the machine or its load (the wall-clock figure is
``benchmarks/bench.py``'s section 5b)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import pytest

from tilelang_hostcg import HostCodegen, PluginLoadError, Registry

SMALL, LARGE = 1000, 4000  # a sort per registration makes the ratio about 16, not 4


def calls(fn: Callable[[], Any]) -> int:
    """How many functions (Python and built-in) ``fn()`` calls, directly or not."""
    count = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(profile)
    try:
        fn()
    except PluginLoadError:
        pass
    finally:
        sys.setprofile(None)
    return count


def plugin(modules: Any, n: int, *, fails: bool = False) -> str:
    """A lazy module registering ``n`` codegens for kind ``test`` (priorities mixed, so
    that their order is not the registration order), then raising when ``fails``."""
    return modules.write(f"""
        import tilelang_hostcg as hc

        def _build(mod, target):
            return mod

        for _i in range({n}):
            hc.register_host_codegen("test", hc.HostCodegen(f"cg-{{_i}}", _build, priority=(_i * 7) % 5))
        if {fails}:
            raise RuntimeError("after registering")
    """)


def load_and_resolve(modules: Any, n: int, *, fails: bool = False) -> int:
    from tvm.target import Target

    registry = Registry()
    registry.register_lazy_host_codegen("test", plugin(modules, n, fails=fails))
    target = Target("test")
    return calls(lambda: registry.resolve_host_codegen(target))


def register_in_code(n: int) -> int:
    from tvm.target import Target

    registry = Registry()
    target = Target("test")
    codegens = [HostCodegen(f"cg-{i}", lambda mod, t: mod, priority=(i * 7) % 5) for i in range(n)]

    def run() -> None:
        for codegen in codegens:
            registry.register_host_codegen("test", codegen)
        registry.resolve_host_codegen(target)

    return calls(run)


@pytest.mark.parametrize("how", ["plugin-load", "failed-load", "in-code"])
def test_registering_four_times_as_many_costs_four_times_the_work(modules: Any, how: str) -> None:
    import tvm.target  # noqa: F401  (imported before counting)

    if how == "in-code":
        small, large = register_in_code(SMALL), register_in_code(LARGE)
    else:
        small = load_and_resolve(modules, SMALL, fails=how == "failed-load")
        large = load_and_resolve(modules, LARGE, fails=how == "failed-load")
    assert large / small < 4.5, (how, small, large, large / small)


def test_the_answer_is_the_kinds_order_after_a_linear_load(modules: Any) -> None:
    """The order resolution reads is the one a sort per registration gave: by priority,
    then registration order (an override registering anew)."""
    from tvm.target import Target

    registry = Registry()
    registry.register_lazy_host_codegen("test", plugin(modules, 50))
    chosen = registry.resolve_host_codegen(Target("test"))
    names = [r.name for r in registry.registrations(kind="test")]
    expected = sorted((f"cg-{i}" for i in range(50)), key=lambda n: (-((int(n[3:]) * 7) % 5), int(n[3:])))
    assert names == expected and chosen.name == expected[0]
    registry.register_host_codegen("test", HostCodegen("cg-3", lambda m, t: m, priority=4), override=True)
    names = [r.name for r in registry.registrations(kind="test")]
    top = [n for n in expected if (int(n[3:]) * 7) % 5 == 4 and n != "cg-3"]
    assert names[:len(top) + 1] == [*top, "cg-3"]
    assert registry.unregister_host_codegen("test", "cg-3") is not None
    assert "cg-3" not in [r.name for r in registry.registrations(kind="test")]
