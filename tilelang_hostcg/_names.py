"""The names this package and its users agree on: distributions, TVM providers, groups (a
leaf module: imports nothing of ours)."""

from __future__ import annotations

__all__ = ["APACHE_TVM", "CODEGEN_GROUP", "CORE_DISTRIBUTION", "GROUPS", "HOOK_GROUP", "TILELANG"]

CORE_DISTRIBUTION = "tilelang-hostcg"
"""This package's own distribution (PEP 503 normalized)."""

APACHE_TVM = "apache-tvm"
"""The distribution of Apache TVM."""

TILELANG = "tilelang"
"""TileLang's package (shipped by a distribution of any name), and its stock distribution;
TileLang bundles a TVM of its own."""

CODEGEN_GROUP = "tilelang.host_codegen"
"""Entry-point group of host codegens; an entry point's name is a host target kind."""

HOOK_GROUP = "tilelang.host_codegen_hooks"
"""Entry-point group of host-codegen hooks; an entry point's name is a device target kind."""

GROUPS = (CODEGEN_GROUP, HOOK_GROUP)
