"""The API a compiler calls to build host code through the registry itself (native adoption), with
no function of it replaced. Frozen like any public API: :data:`API_VERSION` says which one this is.

A compiler calls :func:`build_host` where it builds a host module and :func:`apply_hooks` where it
runs its device backends' hooks on it, passing its own codegens and hooks as ``defaults``; they win
exactly where a client's defaults win (no plugin, or no plugin's codegen for the kind), so with no
third-party plugin the host code is the compiler's own. The module that calls this API declares it
with ``__tilelang_hostcg_native__ = API_VERSION`` (the version it was written for).

Importing this module is cheap (no TVM, no entry point read, no plugin imported); the first call
plans. ``docs/native.md`` is the guide for compiler maintainers."""

from __future__ import annotations

import sys

from .core._names import NATIVE_API_VERSION, NATIVE_DECLARATION

# Not ``typing.TYPE_CHECKING``: importing ``typing`` costs milliseconds. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

__all__ = ["API_VERSION", "DECLARATION", "apply_hooks", "build_host", "fingerprint"]

API_VERSION = NATIVE_API_VERSION
"""The version of this API; a compiler declares the one it was written for."""

DECLARATION = NATIVE_DECLARATION
"""The module attribute by which a compiler's module says it calls this API (its value: the
``API_VERSION`` it was written for)."""

_called: dict[str, int] = {}  # client name -> native calls in this process (what "confirmed" reads)


def build_host(mod: Any, target_host: Any, *, defaults: Mapping[str, Any], client: str) -> Any:
    """The runtime module of host ``mod`` for ``target_host``, built by the host codegen the registry
    resolves among the installed plugins and ``defaults`` (the compiler's own codegens by host kind:
    objects with ``name`` and ``build(mod, target_host)``, or callables ``(mod, target_host)``).
    ``client``: the compiler's name as it wants it shown. A kind with neither a plugin's codegen nor
    a default raises :class:`~tilelang_hostcg.NoHostCodegenError`, a ``ValueError``."""
    _called[client] = _called.get(client, 0) + 1
    _check_caller(sys._getframe(1).f_globals)
    from .clients._native import build_host as build
    return build(mod, target_host, defaults, client)


def apply_hooks(mod: Any, target_host: Any, target: Any, *, defaults: Sequence[Any] = (), client: str) -> Any:
    """Host ``mod`` after the hooks of device ``target``'s kind: ``defaults`` (the compiler's own
    hooks for that kind, in order: objects with ``name`` and ``apply(mod, target_host, target)``, or
    callables of those arguments) and the installed plugins' hooks, in the registry's order."""
    _called[client] = _called.get(client, 0) + 1
    _check_caller(sys._getframe(1).f_globals)
    from .clients._native import apply_hooks as apply
    return apply(mod, target_host, target, defaults, client)


def fingerprint() -> str:
    """A short string that changes whenever the plugin set that can change host code changes (the
    plugin distributions, on or off, the preferences, codegens and hooks registered in code), for a
    compiler's kernel cache key: the same in every process with the same installed set."""
    from .clients._native import fingerprint as compute
    return compute()


def calls() -> dict[str, int]:
    """Native calls made in this process, by the ``client`` name given."""
    return dict(_called)


def _check_caller(caller: dict[str, Any]) -> None:
    """A caller declaring a newer API than this one: one warning naming both versions."""
    declared = caller.get(DECLARATION)
    if declared is not None and declared != API_VERSION:
        from .clients._native import newer_api
        newer_api(declared, caller.get("__name__"))
