"""TileLang integration: route TileLang's host-codegen choice and hooks through the registry.

It turns itself on: once a third-party plugin is installed in a TileLang environment,
``import tilelang`` calls :func:`install` (see :mod:`tilelang_hostcg.tilelang.activation`;
``TILELANG_HOSTCG_AUTO_INSTALL=0`` turns that off). A program can also call it::

    import tilelang_hostcg.tilelang

    tilelang_hostcg.tilelang.install()

After :func:`install`, TileLang (0.1.12 to 0.1.15, whichever of its published builds is
installed: stock ``tilelang`` or PaddlePaddle's ``tilelang-paddle``; another version is
refused with :class:`UnsupportedTileLangError`, before anything is touched) resolves its host codegen
and runs its host-codegen hooks through :func:`tilelang_hostcg.default_registry`
(entry points of installed plugins included), and its kernel cache and autotuner keys
also hash the plugin set (:func:`plugin_fingerprint`); :func:`uninstall` puts TileLang
back exactly as it was, whichever way it was installed. What is replaced in each
TileLang version: :mod:`tilelang_hostcg.tilelang.modes`.

TileLang's own host codegens are registered as *defaults* (named ``tilelang-<kind>``, of
TileLang's distribution in use: ``tilelang``, ``tilelang-paddle``, ...): they serve only
when no other codegen of the kind matches, and then TileLang's own object builds the
host code, so with no plugin the output is byte-identical to stock TileLang. A plugin
codegen that matches (whatever its priority), or a codegen registered in code, wins over
them. TileLang's own hooks are registered as ``tilelang-<kind>`` hooks and always run
(at priority 0, before the plugins' hooks of equal priority), because a device backend
needs them. They belong to TileLang whoever calls :func:`install` (a program, a thread,
or a plugin's import).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from .._errors import warn_plugin
from .._tvm import tilelang_overlap
from .._types import Origin
from .cache_key import fingerprint, patch_cache_key
from .gate import SUPPORTED, UnsupportedTileLangError, installed_build, mode_of
from .modes import DEFAULT_PREFIX, State, enter, undo

if TYPE_CHECKING:
    from .._registry import Registry

__all__ = ["DEFAULT_PREFIX", "SUPPORTED", "UnsupportedTileLangError", "add_defaults", "install",
           "is_installed", "plugin_fingerprint", "uninstall"]

_LOCK = threading.RLock()
_STATE: list[State] = []


def is_installed() -> bool:
    """Whether :func:`install` is in effect (called by a program or by activation)."""
    return bool(_STATE)


def _state(registry: Registry | None) -> State:
    """What :func:`install` or :func:`add_defaults` will record; raises
    :class:`UnsupportedTileLangError` for a TileLang that is missing or unsupported, and
    warns when more than one TileLang build is installed."""
    distribution, version = installed_build()
    overlap = tilelang_overlap()
    if overlap is not None:
        warn_plugin(overlap)
    mode = mode_of(version, distribution)
    if registry is None:
        from .._api import default_registry

        registry = default_registry()
    return State(registry, mode, Origin(distribution, version))


def install(*, registry: Registry | None = None) -> None:
    """Route TileLang's host-codegen choice and hooks through ``registry`` (default: the
    default registry). Idempotent; raises :class:`UnsupportedTileLangError` for a TileLang
    outside :data:`SUPPORTED`, having changed nothing. Any failure leaves TileLang and the
    registry as they were."""
    if _STATE:
        return
    state = _state(registry)
    # Before the lock: a thread importing TileLang activates the integration at the end
    # of its import, and must not wait for this thread, which would wait for its import.
    import tilelang  # noqa: F401  # its TVM becomes the TVM in use

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
