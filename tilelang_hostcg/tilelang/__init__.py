"""TileLang integration: route TileLang's host-codegen choice and hooks through the registry.

``import tilelang`` calls :func:`install` once a third-party plugin is installed
(:mod:`.activation`; ``TILELANG_HOSTCG_AUTO_INSTALL=0`` turns that off); a program may call
it too. TileLang is whatever distribution ships it; one that lacks an integration point of
:mod:`.gate` is refused with :class:`UnsupportedTileLangError` naming it, before anything is
touched. After :func:`install`, TileLang resolves its host codegen and runs its hooks through
:func:`tilelang_hostcg.default_registry`, and its kernel cache and autotuner keys hash the
plugin set (:func:`plugin_fingerprint`); :func:`uninstall` puts TileLang back exactly.
TileLang's own codegens are *defaults* (``tilelang-<kind>``, of its distribution): they
serve only where no other codegen matches, so with no plugin the host code is stock's,
byte for byte; its own hooks always run. What is replaced: :mod:`.modes`;
``docs/tilelang.md`` says the rest.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .._errors import warn_plugin
from .._routing import routing
from .._tvm import import_tilelang, tilelang_distributions, tilelang_overlap
from .._types import Origin
from .cache_key import fingerprint, patch_cache_key
from .gate import UnsupportedTileLangError, check, installed_build
from .modes import DEFAULT_PREFIX, State, enter, undo

if TYPE_CHECKING:
    from .._registry import Registry

__all__ = ["DEFAULT_PREFIX", "UnsupportedTileLangError", "add_defaults", "install",
           "is_installed", "plugin_fingerprint", "uninstall"]

_LOCK = threading.RLock()
_STATE: list[State] = []


def is_installed() -> bool:
    """Whether TileLang's host builds go through the registry: :func:`install` is in effect (by
    a program or activation) and its route is still TileLang's (see :func:`tilelang_hostcg._routing.routing`)."""
    return bool(routing("tilelang", explain=False).routed)


def _state(registry: Registry | None) -> State:
    """What :func:`install` or :func:`add_defaults` will record, TileLang imported; raises
    :class:`UnsupportedTileLangError` where TileLang is missing or lacks an integration
    point, and warns when more than one distribution ships TileLang."""
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
    """Route TileLang's host-codegen choice and hooks through ``registry`` (default: the
    default registry). Idempotent; raises :class:`UnsupportedTileLangError` for a TileLang
    that lacks an integration point, having changed nothing. Any failure leaves TileLang and
    the registry as they were."""
    if _STATE:
        return
    # _state imports TileLang before the lock: a thread importing TileLang activates the
    # integration at the end of its import, and must not wait for this thread, which would
    # wait for its import.
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
    without touching TileLang (the CLI's ``check`` and ``explain`` use it to answer as
    TileLang would after :func:`install`)."""
    enter(_state(registry), patch_tilelang=False)


def uninstall() -> None:
    """Undo :func:`install`, also one made by activation: TileLang's original attributes
    are put back (the same objects) and TileLang's defaults leave the registry. No-op when
    not installed."""
    with _LOCK:
        if _STATE:
            undo(_STATE.pop())


def plugin_fingerprint(target: Any = None, target_host: Any = None, *,
                       registry: Registry | None = None) -> dict[str, Any]:
    """What of the plugin set decides host code for ``target``/``target_host``: every
    distribution whose entry points the registry reads or skips (name, version, ``on`` or
    ``off``), and the codegen and hooks chosen (name and origin). JSON-ready and the same
    in every process with the same installed set, whatever was loaded first; TileLang's
    kernel and autotuner cache keys include it after :func:`install`."""
    if registry is None:
        from .._api import default_registry

        registry = _STATE[0].registry if _STATE else default_registry()
    return fingerprint(registry, target, target_host)
