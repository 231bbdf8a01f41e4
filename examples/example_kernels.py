"""Small real TIR kernels the examples build (TVMScript, apache-tvm 0.27)."""

from __future__ import annotations

from tvm.script import tirx as T


@T.prim_func
def vector_add(a: T.handle, b: T.handle, c: T.handle):
    """C = A + B on the CPU (one loop)."""
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for i in range(n):
        C[i] = A[i] + B[i]


@T.prim_func
def gpu_vector_add(a: T.handle, b: T.handle, c: T.handle):
    """C = A + B with a 1-D grid of 128-thread blocks."""
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.match_buffer(c, (n,), "float32")
    for bx in T.thread_binding((n + 127) // 128, thread="blockIdx.x"):
        for tx in T.thread_binding(128, thread="threadIdx.x"):
            if bx * 128 + tx < n:
                C[bx * 128 + tx] = A[bx * 128 + tx] + B[bx * 128 + tx]


@T.prim_func
def gpu_scale_2d(a: T.handle, b: T.handle):
    """B[i, j] = A[i, j] * 2 + j with a 2-D grid of 16x16 blocks."""
    m = T.int32()
    n = T.int32()
    A = T.match_buffer(a, (m, n), "float32")
    B = T.match_buffer(b, (m, n), "float32")
    for by in T.thread_binding((m + 15) // 16, thread="blockIdx.y"):
        for bx in T.thread_binding((n + 15) // 16, thread="blockIdx.x"):
            for ty in T.thread_binding(16, thread="threadIdx.y"):
                for tx in T.thread_binding(16, thread="threadIdx.x"):
                    if by * 16 + ty < m and bx * 16 + tx < n:
                        B[by * 16 + ty, bx * 16 + tx] = (
                            A[by * 16 + ty, bx * 16 + tx] * T.float32(2)
                            + T.Cast("float32", bx * 16 + tx))
