"""The small real TIR kernels of the examples (``examples/example_kernels.py``), shared by the
tests: one copy, which the examples use without ``tests/``."""

from examples.example_kernels import gpu_scale_2d, gpu_vector_add, vector_add

__all__ = ["gpu_scale_2d", "gpu_vector_add", "vector_add"]
