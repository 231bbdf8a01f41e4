"""The names this package and its users agree on: distributions, TVM providers, entry-point groups,
and how a distribution name is normalized
(a leaf module: imports nothing of ours)."""

from __future__ import annotations

import re

CORE_DISTRIBUTION = "tilelang-hostcg"  # PEP 503 normalized
APACHE_TVM = "apache-tvm"
TILELANG = "tilelang"  # TileLang's package (any distribution may ship it) and stock distribution
CODEGEN_GROUP = "tilelang.host_codegen"  # an entry point's name is a host target kind
HOOK_GROUP = "tilelang.host_codegen_hooks"  # an entry point's name is a device target kind
GROUPS = (CODEGEN_GROUP, HOOK_GROUP)
NATIVE_API_VERSION = 2  # tilelang_hostcg.native.API_VERSION (it also serves 1)
NATIVE_DECLARATION = "__tilelang_hostcg_native__"  # a compiler's module saying it calls tilelang_hostcg.native

_SEPARATORS = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """A distribution name normalized as PEP 503 says (runs of ``-``, ``_`` and ``.`` become one
    ``-``, then lower case), without importing ``packaging``."""
    return _SEPARATORS.sub("-", name).lower()


def is_core(distribution: str | None) -> bool:
    """Whether ``distribution`` (a name as installed metadata spells it, or ``None``: registered in
    code) is this package's own: the one rule every layer asks."""
    return distribution is not None and normalize_name(distribution) == CORE_DISTRIBUTION
