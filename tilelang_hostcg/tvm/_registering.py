"""TVM's own host codegens as registry defaults (``apache-tvm-<kind>``): registered in a registry before
its first answer for a kind (:func:`join_defaults`, which the route's first build calls too), or by
:func:`tilelang_hostcg.tvm.add_defaults`. Imported at that first answer: it imports no build driver."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import APACHE_TVM, HostCodegen, Origin
from ..environment import GlobalFuncBuild, import_tvm, tvm_info
from ._points import DEFAULT_PREFIX, KINDS

if TYPE_CHECKING:
    from ..registry import Registry
    from ._route import State


def register_defaults(registry: Registry, held: dict[str, HostCodegen], kinds: tuple[str, ...] = KINDS) -> None:
    """Register TVM's ``target.build.<kind>`` of each of ``kinds`` not in ``held`` and known to the TVM
    in use (0.26 has no ``cuda_host``) as a default (origin ``apache-tvm`` at the version of the TVM
    module in use: its own ``__version__``), adding it to ``held``."""
    wanted = [k for k in dict.fromkeys(kinds) if k not in held]
    if not wanted:
        return
    tvm = import_tvm()
    known = set(tvm.target.Target.list_kinds())
    origin = Origin(APACHE_TVM, _version(tvm))
    for kind in (k for k in wanted if k in known):
        codegen = HostCodegen(DEFAULT_PREFIX + kind, GlobalFuncBuild("target.build." + kind))
        registry.register_host_codegen(kind, codegen, origin=origin, default=True)
        held[kind] = codegen


def _version(tvm: Any) -> str | None:
    """The version of the TVM module in use: its ``__version__``, else what ships it says (asked of TVM
    itself first: the metadata of what ships it is read only where TVM does not say)."""
    version = getattr(tvm, "__version__", None)
    if isinstance(version, str) and version:
        return version
    info = tvm_info()
    return info.provider_version


def join_defaults(state: State, registry: Registry, kind: str) -> bool:
    """Before ``registry`` decides ``kind``: TVM's defaults (``kind``'s too) join it, as the first routed
    build would add them, under the client's lock; whether they are in (``False`` once ``state`` is
    uninstalled, or where the route builds into another registry)."""
    with state.lock:
        if not state.active or (state.registry is not None and state.registry is not registry):
            return False
        first = state.registry is None
        state.registry = registry
        register_defaults(registry, state.codegens, (*KINDS, kind) if first else (kind,))
        return True
