"""TileLang integration: TileLang resolves its host codegen and runs its hooks through the
registry. :func:`install` (called by activation at ``import tilelang`` once a plugin is installed)
refuses a TileLang lacking an integration point; TileLang's own codegens become registry defaults
(``tilelang-<kind>``), so with no plugin its host code is stock's. The TileLang is the module that
``import tilelang`` gives; its distribution only names it. ``docs/tilelang.md`` says more."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..clients import Client, ClientState, Native
from ..core import TILELANG, Origin, UnsupportedTileLangError
from ..environment import Found, find, import_tilelang, tilelang_overlap
from ._cache_key import fingerprint, patch_cache_key
from ._layouts import DEFAULT_PREFIX, State, enter, rollback, watch
from ._points import build_name, check

if TYPE_CHECKING:
    from ..registry import Registry

__all__ = ["DEFAULT_PREFIX", "UnsupportedTileLangError", "add_defaults", "install",
           "is_installed", "plugin_fingerprint", "uninstall"]


def imported_tilelang() -> Found:
    """The TileLang that ``import tilelang`` gives, imported (:class:`UnsupportedTileLangError` where
    there is none: ``tilelang`` is not an importable package)."""
    import_tilelang()  # waits for another thread's import; a failure names itself
    found = find(TILELANG)
    if found is None:
        raise UnsupportedTileLangError(
            "TileLang is not installed (`import tilelang` finds no package); tilelang_hostcg.build() works "
            "with the TVM in use")
    return found


def _state(registry: Registry | None) -> State:
    """What :func:`install` or :func:`add_defaults` records, TileLang imported and checked."""
    found = imported_tilelang()
    overlap = tilelang_overlap(found)
    if overlap is not None:
        from ..diagnosis import warn  # a finding's words: only where one is given
        warn(overlap)
    mode = check(found)
    if registry is None:
        from .. import default_registry

        registry = default_registry()
    name, version = build_name(found)
    return State(registry, mode=mode, origin=Origin(name or TILELANG, version))


class TileLangClient(Client):
    """TileLang as a client: its two host-codegen functions of the layout it has, and its cache keys."""

    name = "tilelang"
    title = "TileLang integration (tilelang_hostcg.tilelang)"
    compiler = "TileLang"
    native_modules = ("tilelang.backend.module", "tilelang.engine.lower")

    def _prepare(self, registry: Registry | None) -> State:
        # TileLang imported before the lock: a thread importing TileLang activates at the end of
        # its import and must not wait for this thread, which waits for that import.
        return _state(registry)

    def _enter(self, prepared: State) -> ClientState:
        try:
            enter(prepared, patch_tilelang=True)
            patch_cache_key(prepared)
            watch(prepared)
        except BaseException:
            rollback(prepared)
            raise
        return prepared

    def blocker(self) -> str | None:
        try:
            check(imported_tilelang())
        except Exception as exc:  # UnsupportedTileLangError, TVMNotFoundError
            return str(exc)
        return None

    def probe_build(self) -> None:
        from ._probe_kernel import build_probe
        with self.running_probe():
            build_probe()

    def extension_point(self) -> Native | None:
        from ._provider import POINT_MODULE, point
        where = point()
        return Native(POINT_MODULE, None, where) if where is not None else None

    def hints(self) -> list[str]:
        from ._points import hints, layout
        return hints(layout())


CLIENT = TileLangClient()


def is_installed() -> bool:
    """Whether :func:`install` is in effect and TileLang's host builds go through the route: by what the
    last build did while the same objects hold the routes, else by what can be known (each route, or
    another package's function in its place, reaches ours)."""
    return CLIENT.is_installed()


def install(*, registry: Registry | None = None) -> None:
    """Route TileLang's host-codegen choice and hooks through ``registry`` (default: the default
    registry). Idempotent; :class:`UnsupportedTileLangError` for a TileLang that lacks an
    integration point. A failure changes nothing."""
    CLIENT.install(registry=registry)


def add_defaults(registry: Registry) -> None:
    """Register TileLang's own codegens and hooks in ``registry`` as :func:`install` does,
    without touching TileLang."""
    enter(_state(registry), patch_tilelang=False)


def uninstall() -> None:
    """Undo :func:`install` (also activation's): TileLang's original attributes come back and its
    defaults leave the registry; an attribute another package has wrapped since is left to it (named
    in a warning), and our route inside it hands every call to TileLang's original. No-op when not
    installed."""
    CLIENT.uninstall()


def plugin_fingerprint(target: Any = None, target_host: Any = None, *,
                       registry: Registry | None = None) -> dict[str, Any]:
    """What of the plugin set decides host code for ``target``/``target_host``: the plan of those
    targets (the codegen and hooks that run, each TileLang's own or a plugin's with its distribution
    and version, and the controls that decided), ``third_party`` and its ``fingerprint`` (``None``
    where nothing third-party runs): JSON-ready, the same in every process with the same installed
    set and controls. After :func:`install`, TileLang's cache keys add the fingerprint where it is
    not ``None`` (else they are TileLang's own)."""
    state = CLIENT.state
    if registry is None:
        from .. import default_registry

        registry = state.registry if state is not None and state.registry is not None else default_registry()
    own = state if state is not None and state.registry is registry else None
    return fingerprint(registry, target, target_host, own.codegens if own is not None else None,
                       own.hooks if own is not None else None)
