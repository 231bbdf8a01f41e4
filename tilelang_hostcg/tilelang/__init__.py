"""TileLang integration: TileLang resolves its host codegen and runs its hooks through the
registry. :func:`install` (called by activation at ``import tilelang`` once a plugin is installed)
refuses a TileLang lacking an integration point; TileLang's own codegens become registry defaults
(``tilelang-<kind>``), so with no plugin its host code is stock's. ``docs/tilelang.md`` says more."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .._errors import UnsupportedTileLangError, warn_plugin
from .._routing import routing
from .._tvm import import_tilelang, tilelang_distributions, tilelang_overlap
from .._types import Origin
from ._cache_key import fingerprint, patch_cache_key
from ._layouts import DEFAULT_PREFIX, State, enter, undo
from ._points import check, installed_build

if TYPE_CHECKING:
    from .._registry import Registry

__all__ = ["DEFAULT_PREFIX", "UnsupportedTileLangError", "add_defaults", "install",
           "is_installed", "plugin_fingerprint", "uninstall"]

_LOCK = threading.RLock()
_STATE: list[State] = []


def is_installed() -> bool:
    """Whether :func:`install` is in effect and TileLang's host builds still go through the registry."""
    return bool(routing("tilelang", explain=False).routed)


def _state(registry: Registry | None) -> State:
    """What :func:`install` or :func:`add_defaults` records, TileLang imported and checked."""
    found = tilelang_distributions()
    distribution, version = build = installed_build(found)
    overlap = tilelang_overlap(found)
    if overlap is not None:
        warn_plugin(overlap)
    import_tilelang(found[0])  # before the lock (see install()); waits for another thread's import
    mode = check(build)
    if registry is None:
        from .._api import default_registry

        registry = default_registry()
    return State(registry, mode, Origin(distribution, version))


def install(*, registry: Registry | None = None) -> None:
    """Route TileLang's host-codegen choice and hooks through ``registry`` (default: the default
    registry). Idempotent; :class:`UnsupportedTileLangError` for a TileLang that lacks an
    integration point. A failure changes nothing."""
    if _STATE:
        return
    # TileLang imported before the lock: a thread importing TileLang activates at the end of
    # its import and must not wait for this thread, which waits for that import.
    state = _state(registry)
    with _LOCK:
        if _STATE:
            return
        try:
            enter(state, patch_tilelang=True)
            patch_cache_key(state)
        except BaseException:
            undo(state)
            raise
        _STATE.append(state)


def add_defaults(registry: Registry) -> None:
    """Register TileLang's own codegens and hooks in ``registry`` as :func:`install` does,
    without touching TileLang."""
    enter(_state(registry), patch_tilelang=False)


def uninstall() -> None:
    """Undo :func:`install` (also activation's): TileLang's original attributes come back and
    its defaults leave the registry. No-op when not installed."""
    with _LOCK:
        if _STATE:
            undo(_STATE.pop())


def plugin_fingerprint(target: Any = None, target_host: Any = None, *,
                       registry: Registry | None = None) -> dict[str, Any]:
    """What of the plugin set decides host code for ``target``/``target_host`` (the plugin
    distributions, on or off, and the codegen and hooks chosen): JSON-ready, the same in every
    process with the same installed set; TileLang's cache keys include it after :func:`install`."""
    if registry is None:
        from .._api import default_registry

        registry = _STATE[0].registry if _STATE else default_registry()
    return fingerprint(registry, target, target_host)
