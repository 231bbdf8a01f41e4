"""The ``stamp_c`` host codegen; importing this module registers it.

Advertised as ``c = tilelang_hostcg_stamp.codegen``: the first time a ``c`` host is
resolved, ``tilelang_hostcg`` imports this module and the ``register_host_codegen``
call below lands in the registry doing the import. Priority 10 puts it above the
core's ``c`` codegen; with ``tilelang_hostcg.tilelang.install()`` it also wins over
TileLang's own (a default, used only when no plugin matches).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import tilelang_hostcg
from tilelang_hostcg import HostCodegen, HostCodegenError

from . import CODEGEN_SYMBOL, add_stamp

if TYPE_CHECKING:
    from tvm.target import Target

__all__ = ["BASE_FUNCTIONS", "STAMP_C_CODEGEN", "build_stamped_c"]

BASE_FUNCTIONS = ("target.build.tilelang_c_host", "target.build.c")
"""C host code generators, in order of preference: TileLang's, then TVM's."""


def build_stamped_c(mod: Any, target_host: Target) -> Any:
    """Add :data:`CODEGEN_SYMBOL` to ``mod`` and build it as C host code.

    The TVM function is looked up at every call (as ``global_func_host_codegen`` does).
    """
    import tvm

    for name in BASE_FUNCTIONS:
        build = tvm.get_global_func(name, allow_missing=True)
        if build is not None:
            return build(add_stamp(mod, target_host, CODEGEN_SYMBOL), target_host)
    raise HostCodegenError(
        f"the TVM in use has none of {', '.join(BASE_FUNCTIONS)}; tilelang-hostcg-stamp needs "
        "apache-tvm 0.27 or TileLang 0.1.12-0.1.15 (pip install tilelang-hostcg-stamp[tvm])")


STAMP_C_CODEGEN = HostCodegen("stamp_c", build_stamped_c, priority=10)
"""C host code with the stamp function."""

tilelang_hostcg.register_host_codegen("c", STAMP_C_CODEGEN)
