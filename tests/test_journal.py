"""A module's journal belongs to one import of it: a module that replaces itself in
``sys.modules`` keeps its journal, and a module imported again does not keep the
journal of the import before (in process, lazy modules registered in code)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg import PluginLoadError, Registry

STAND_IN = """
    import sys, types
    import tilelang_hostcg as hc

    class _StandIn(types.ModuleType):
        def __getattr__(self, name):
            return getattr(_real, name)

    _real = sys.modules[__name__]
    {before}
    sys.modules[__name__] = _StandIn(__name__)
    {after}
"""
REGISTER = 'hc.register_host_codegen("test", hc.HostCodegen("stand-in", lambda m, t: m))'


@pytest.mark.parametrize("where", ["before", "after"])
def test_a_module_replacing_itself_is_replayed_after_the_users_import(modules: Any, where: str) -> None:
    from tvm.target import Target

    name = modules.write(STAND_IN.format(before=REGISTER if where == "before" else "",
                                         after=REGISTER if where == "after" else ""))
    first = Registry()
    __import__(name)  # the user's import, into the default registry
    assert type(sys.modules[name]).__name__ == "_StandIn"
    first.register_lazy_host_codegen("test", name)
    assert first.resolve_host_codegen(Target("test")).name == "stand-in"
    second = Registry()
    second.register_lazy_host_codegen("test", name)
    assert second.resolve_host_codegen(Target("test")).name == "stand-in"
    import tilelang_hostcg

    tilelang_hostcg.default_registry().unregister_host_codegen("test", "stand-in")


def test_a_module_imported_again_does_not_replay_the_import_before(modules: Any, tmp_path: Path) -> None:
    from tvm.target import Target

    flag = tmp_path / "register"
    flag.touch()
    name = modules.write(f"""
        import os
        import tilelang_hostcg as hc
        if os.path.exists({str(flag)!r}):
            hc.register_host_codegen("test", hc.HostCodegen("first-import", lambda m, t: m))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("test", name)
    assert registry.resolve_host_codegen(Target("test")).name == "first-import"
    del sys.modules[name]
    flag.unlink()
    __import__(name)  # imported again: registers nothing this time
    again = Registry()
    again.register_lazy_host_codegen("test", name)
    with pytest.raises(PluginLoadError, match="registered no host codegen"):
        again.resolve_host_codegen(Target("test"))

