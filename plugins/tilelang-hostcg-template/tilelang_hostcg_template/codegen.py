"""The ``acme_llvm`` host codegen; importing this module registers it.

Advertised as ``llvm = tilelang_hostcg_template.codegen``: the first time an ``llvm``
host is resolved, ``tilelang_hostcg`` imports this module, and the
``register_host_codegen`` call below lands in the registry doing the import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tilelang_hostcg
from tilelang_hostcg import HostCodegen, global_func_host_codegen

from . import ACME_VENDOR

if TYPE_CHECKING:
    from tvm.target import Target

__all__ = ["ACME_LLVM_CODEGEN", "is_acme_host"]


def is_acme_host(target_host: Target) -> bool:
    """Whether the host target's LLVM triple names the Acme vendor (``arch-acme-os``).

    Predicates must be pure functions of the target: resolution caches their answer.
    """
    triple = str(target_host.attrs.get("mtriple", "") or "")
    parts = triple.split("-")
    return len(parts) >= 3 and parts[1] == ACME_VENDOR


ACME_LLVM_CODEGEN = HostCodegen(
    "acme_llvm",
    global_func_host_codegen("target.build.llvm"),  # TVM's own LLVM host codegen
    supports_target=is_acme_host,
    # Above every other codegen that serves these targets: the core's llvm codegen (0) and the
    # first-party stamp plugin's (10), which serves every llvm host; at 10 it would tie with it.
    priority=20,
)
"""LLVM host code for Acme triples."""

tilelang_hostcg.register_host_codegen("llvm", ACME_LLVM_CODEGEN)
