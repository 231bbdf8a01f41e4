"""The API a compiler calls to build host code through the registry itself (native adoption), with
no function of it replaced. Frozen like any public API: :data:`API_VERSION` says which one this is.

API 2: where the compiler resolves its targets (TileLang: when it creates a compilation's backend
context), it calls :func:`plan` once with its own codegens and hooks and keeps the
:class:`HostPlan`; its build stages call ``plan.apply_hooks(mod)`` and ``plan.build(mod)``, and its
cache keys add ``plan.fingerprint`` where it is not ``None``. The compiler's own win exactly where a
client's defaults win (no plugin's codegen for the kind), so with no third-party plugin the host
code is the compiler's own, and no cache key changes.

API 1 (:func:`build_host`, :func:`apply_hooks`, :func:`fingerprint`) keeps working, made on
:func:`plan`, for modules that declare ``__tilelang_hostcg_native__ = 1``. A module may declare
the API it was written for (``__tilelang_hostcg_native__ = API_VERSION``); a value this API does
not serve is warned once, and that module's builds are the compiler's own alone.

Importing this module is cheap (no TVM, no entry point read, no plugin imported); the first call
plans. ``docs/native.md`` is the guide for compiler maintainers."""

from __future__ import annotations

import sys

from .core import NATIVE_API_VERSION, NATIVE_DECLARATION

# Not ``typing.TYPE_CHECKING``: importing ``typing`` costs milliseconds. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from .clients import HostPlan

__all__ = ["API_VERSION", "DECLARATION", "HostPlan", "apply_hooks", "build_host", "fingerprint", "plan"]

API_VERSION = NATIVE_API_VERSION
"""The version of this API (2); it also serves callers written for API 1."""

DECLARATION = NATIVE_DECLARATION
"""The module attribute by which a compiler's module says it calls this API (its value: the
``API_VERSION`` it was written for, an int)."""


def plan(target_host: Any, target: Any = None, *, codegens: Mapping[str, Any] | None = None,
         hooks: Sequence[Any] = (), client: str) -> HostPlan:
    """Resolve once what ``client``'s host build runs for ``target_host`` and, where given, device
    ``target`` (each a ``Target``, kind name, JSON text or dict, parsed once): the host codegen among
    the installed plugins' and ``codegens`` (the compiler's own, by host kind: objects with ``name``
    and ``build(mod, target_host)``, or callables ``(mod, target_host)``), and the hooks of the device
    kind among the plugins' and ``hooks`` (the compiler's own for that kind, in order: objects with
    ``name`` and ``apply(mod, target_host, target)``, or callables). ``client``: the compiler's name
    as it wants it shown. A bad ``codegens`` or ``hooks`` raises
    :class:`~tilelang_hostcg.NativeDefaultError` (a ``TypeError``) naming it; a kind with no codegen
    raises only when :meth:`HostPlan.build` is called."""
    from .clients import plan as make
    return make(target_host, target, codegens, hooks, client, sys._getframe(1).f_globals, "plan")


def build_host(mod: Any, target_host: Any, *, defaults: Mapping[str, Any], client: str) -> Any:
    """API 1: ``plan(target_host, codegens=defaults, client=client).build(mod)``. A kind with neither
    a plugin's codegen nor a default raises :class:`~tilelang_hostcg.NoHostCodegenError`, a
    ``ValueError``."""
    from .clients import plan as make
    return make(target_host, None, defaults, (), client, sys._getframe(1).f_globals, "build_host").build(mod)


def apply_hooks(mod: Any, target_host: Any, target: Any, *, defaults: Sequence[Any] = (), client: str) -> Any:
    """API 1: ``plan(target_host, target, hooks=defaults, client=client).apply_hooks(mod)``: host ``mod``
    after the hooks of device ``target``'s kind, the compiler's own (``defaults``) and the plugins'."""
    from .clients import plan as make
    made = make(target_host, target, None, defaults, client, sys._getframe(1).f_globals, "apply_hooks")
    if target is None:  # as API 1 did: the compiler's own hooks, given no device target
        from .clients import call_apply
        for hook in defaults:
            mod = call_apply(hook, mod, made.target_host, None)
        return mod
    return made.apply_hooks(mod)


def fingerprint() -> str | None:
    """API 1: for a compiler's kernel cache key, ``None`` where no third-party codegen or hook can run
    (keys unchanged), else a short string made from what the plugins' codegens and hooks would run
    for each kind they serve, and the controls that decided: the same in every process with the same
    installed set and controls. (API 2: :attr:`HostPlan.fingerprint`, exact for one build's targets.)"""
    from .clients import fingerprint as compute
    return compute()


def calls() -> dict[str, int]:
    """Builds and hook passes made through plans in this process, by the ``client`` name given."""
    from .clients import NATIVE
    return NATIVE.calls()


def __getattr__(name: str) -> Any:
    if name == "HostPlan":
        from .clients import HostPlan
        return HostPlan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
