"""The names this package and its users agree on: distributions, TVM providers, entry-point groups,
the core's own entry points, how a distribution name is normalized, and the states a plugin source
is in (a leaf module: imports nothing of ours; discovery plans in these states at ``import tvm``)."""

from __future__ import annotations

import re
from enum import Enum
from typing import Literal

CORE_DISTRIBUTION = "tilelang-hostcg"  # PEP 503 normalized
APACHE_TVM = "apache-tvm"
TILELANG = "tilelang"  # TileLang's package (any distribution may ship it) and stock distribution
CODEGEN_GROUP = "tilelang.host_codegen"  # an entry point's name is a host target kind
HOOK_GROUP = "tilelang.host_codegen_hooks"  # an entry point's name is a device target kind
GROUPS = (CODEGEN_GROUP, HOOK_GROUP)
NATIVE_API_VERSION = 2  # tilelang_hostcg.native.API_VERSION (it also serves 1)
NATIVE_DECLARATION = "__tilelang_hostcg_native__"  # a compiler's module saying it calls tilelang_hostcg.native

# The core's own entry points; pyproject.toml advertises exactly these (a test checks).
CORE_ENTRY_POINTS: tuple[tuple[str, str, str], ...] = (
    (CODEGEN_GROUP, "c", "tilelang_hostcg.builtin:C_HOST_CODEGEN"),
    (CODEGEN_GROUP, "llvm", "tilelang_hostcg.builtin:LLVM_HOST_CODEGEN"),
)

_SEPARATORS = re.compile(r"[-_.]+")


def normalize_name(name: str) -> str:
    """A distribution name normalized as PEP 503 says (runs of ``-``, ``_`` and ``.`` become one
    ``-``, then lower case), without importing ``packaging``."""
    return _SEPARATORS.sub("-", name).lower()


def is_core(distribution: str | None) -> bool:
    """Whether ``distribution`` (a name as installed metadata spells it, or ``None``: registered in
    code) is this package's own: the one rule every layer asks."""
    return distribution is not None and normalize_name(distribution) == CORE_DISTRIBUTION


class SourceState(str, Enum):
    """The state of a plugin source (an entry point, or a lazy module registered in code); its value
    is the word the documents show. ``LAZY`` is also a source that failed for the moment (retried)."""

    LAZY = "lazy"
    LOADING = "loading"
    LOADED = "loaded"
    BROKEN = "broken"
    DISABLED = "disabled"
    INCOMPATIBLE = "incompatible"

    def __str__(self) -> str:
        return self.value

    @property
    def failed(self) -> bool:
        """A failure to report: the source's import failed, or its requirements are not met."""
        return self in (SourceState.BROKEN, SourceState.INCOMPATIBLE)

    @property
    def skipped(self) -> bool:
        """Never imported by decision: a control skips it, or its requirements are not met."""
        return self in (SourceState.DISABLED, SourceState.INCOMPATIBLE)

    @property
    def unusable(self) -> bool:
        """Serves nothing: failed or skipped."""
        return self.failed or self.skipped


PlanState = Literal[SourceState.LAZY, SourceState.DISABLED, SourceState.INCOMPATIBLE]
"""What discovery plans, before any load."""
