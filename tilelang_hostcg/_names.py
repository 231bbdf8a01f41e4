"""The names this package and its users agree on: distributions, TVM providers, entry-point groups
(a leaf module: imports nothing of ours)."""

from __future__ import annotations

CORE_DISTRIBUTION = "tilelang-hostcg"  # PEP 503 normalized
APACHE_TVM = "apache-tvm"
TILELANG = "tilelang"  # TileLang's package (any distribution may ship it) and stock distribution
CODEGEN_GROUP = "tilelang.host_codegen"  # an entry point's name is a host target kind
HOOK_GROUP = "tilelang.host_codegen_hooks"  # an entry point's name is a device target kind
GROUPS = (CODEGEN_GROUP, HOOK_GROUP)
NATIVE_API_VERSION = 1  # tilelang_hostcg.native.API_VERSION
NATIVE_DECLARATION = "__tilelang_hostcg_native__"  # a compiler's module saying it calls tilelang_hostcg.native
