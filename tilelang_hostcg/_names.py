"""The names this package and its users agree on: distributions, TVM providers, groups (a
leaf module: imports nothing of ours)."""

from __future__ import annotations

__all__ = ["APACHE_TVM", "CODEGEN_GROUP", "CORE_DISTRIBUTION", "GROUPS", "HOOK_GROUP", "TILELANG",
           "TILELANG_BUILDS", "TVM_PROVIDERS"]

CORE_DISTRIBUTION = "tilelang-hostcg"
"""This package's own distribution (PEP 503 normalized)."""

APACHE_TVM = "apache-tvm"
"""The distribution of Apache TVM."""

TILELANG = "tilelang"
"""TileLang's package, and its stock distribution; TileLang bundles a TVM of its own."""

TILELANG_BUILDS = (TILELANG, "tilelang-paddle", "tilelang-rocm")
"""TileLang's published builds: distributions that ship the ``tilelang`` package under a
name of their own (stock TileLang, PaddlePaddle's build, the ROCm build). One of them
installed is TileLang, whatever its name (``tilelang_hostcg._tvm.tilelang_distribution``);
another build is added here (PEP 503 normalized)."""

TVM_PROVIDERS = (APACHE_TVM, *TILELANG_BUILDS)
"""Distributions that provide a TVM; a plugin declares the one it needs."""

CODEGEN_GROUP = "tilelang.host_codegen"
"""Entry-point group of host codegens; an entry point's name is a host target kind."""

HOOK_GROUP = "tilelang.host_codegen_hooks"
"""Entry-point group of host-codegen hooks; an entry point's name is a device target kind."""

GROUPS = (CODEGEN_GROUP, HOOK_GROUP)
