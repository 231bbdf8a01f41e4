"""TVM's probe build (``check``): a tiny TIR function built for a ``c`` host, as a program builds it."""

from __future__ import annotations

from ..environment import import_tvm

PROBE_TARGET = "c"


def build_probe() -> None:
    """``tvm.compile`` of a four-element TIR function for a ``c`` host (no device, no LLVM needed)."""
    tvm = import_tvm()
    from tvm import te

    a = te.placeholder((4,), "float32", name="A")
    b = te.compute((4,), lambda i: a[i] + 1.0, name="B")
    tvm.compile(te.create_prim_func([a, b]), target=PROBE_TARGET)
