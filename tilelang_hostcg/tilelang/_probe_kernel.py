"""TileLang's probe build (``check``): a tiny kernel lowered with host code for an explicit architecture,
as TileLang's own tests lower without a GPU or ``nvcc``. No ``from __future__ import annotations``:
``T.prim_func`` reads the annotations as written."""

PROBE_TARGET = {"kind": "cuda", "arch": "sm_90a"}


def build_probe() -> None:
    """``tilelang.lower`` of a 32-element kernel for :data:`PROBE_TARGET`, host code included."""
    import tilelang
    import tilelang.language as T
    from tvm.target import Target

    @T.prim_func  # type: ignore[untyped-decorator]
    def probe(A: T.Tensor((32,), "float32")):  # type: ignore[no-untyped-def,valid-type]
        with T.Kernel(1, threads=32):
            for i in T.Parallel(32):
                A[i] = A[i] + 1.0

    target = Target(PROBE_TARGET)
    with target:
        tilelang.lower(probe, target=target, enable_host_codegen=True)
