"""Each thing done once: one build parses its target once (TVM's own ``with_host`` aside) and decides
its host codegen at most once; a native plan resolves once. Real TVM, real ``target.build.llvm``."""

from __future__ import annotations

import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import tvm
from tvm.script import tirx as T
from tvm.target import Target

import tilelang_hostcg as hc
import tilelang_hostcg.registry._registry as registry_module
from tilelang_hostcg.registry import build


@T.prim_func
def add_one(a: T.handle, b: T.handle):
    A = T.match_buffer(a, (8,), "float32")
    B = T.match_buffer(b, (8,), "float32")
    for i in range(8):
        B[i] = A[i] + T.float32(1)


@contextmanager
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Counts, while it lasts, the Targets our code constructs and the decisions the registry makes."""
    counts: Counter[str] = Counter()
    made, decide = Target.__init__, registry_module.decide

    def constructing(self, *args, **kwargs):
        frames = traceback.extract_stack()[:-1]
        caller = next((f for f in reversed(frames) if "/tilelang_hostcg/" in f.filename or "/tvm/" in f.filename),
                      None)
        if caller is not None and "/tilelang_hostcg/" in caller.filename:
            counts["targets"] += 1
        return made(self, *args, **kwargs)

    def deciding(*args, **kwargs):
        counts["decisions"] += 1
        return decide(*args, **kwargs)

    monkeypatch.setattr(Target, "__init__", constructing)
    monkeypatch.setattr(registry_module, "decide", deciding)
    yield counts


def test_a_build_parses_its_target_once_and_decides_at_most_once(monkeypatch) -> None:
    mod = tvm.IRModule({"main": add_one})
    registry = hc.Registry(discover=True)
    for _ in range(2):
        with counted(monkeypatch) as counts:
            build(registry, mod, "llvm")
        assert counts["targets"] == 1  # the string, parsed once
        assert counts["decisions"] <= 1
        monkeypatch.undo()
    with counted(monkeypatch) as counts:
        build(registry, mod, Target("llvm"))
    assert counts["targets"] == 0  # a Target given: the build makes none of its own


def test_a_routed_tvm_build_makes_no_target_of_ours(monkeypatch) -> None:
    import tilelang_hostcg.tvm as integration

    registry = hc.Registry()
    integration.install(registry=registry)
    try:
        tvm.compile(add_one, target="llvm")  # the first: defaults join, kinds load
        with counted(monkeypatch) as counts:
            built = tvm.compile(add_one, target="llvm")
        assert counts["targets"] == 0
        assert counts["decisions"] <= 1
        assert built is not None
    finally:
        integration.uninstall()
