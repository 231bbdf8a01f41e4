"""TileLang's integration points (:data:`POINTS`, the table of ``docs/tilelang.md``), checked by
shape, never by distribution or version: one that lacks a point is refused, naming it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .._errors import UnsupportedTileLangError
from .._routing import Point
from .._tvm import distribution_name, tilelang_distributions

if TYPE_CHECKING:
    from importlib.metadata import Distribution

Mode = Literal["registry", "backend"]  # TileLang's layouts (see ._layouts)

_LOWER, _HC, _BACKEND = "tilelang.engine.lower", "tilelang.backend.host_codegen", "tilelang.backend.module"
_CACHE_KEYS = (Point("tilelang.cache.kernel_cache", "KernelCache._generate_key",
                     ("self", "func", "out_idx", "execution_backend", "args", "target", "target_host")),
               Point("tilelang.autotuner.tuner", "AutoTuner.generate_cache_key", ("self",)))
POINTS: dict[Mode, tuple[Point, ...]] = {
    # 0.1.14 on: each backend module chooses its host codegen and runs its hooks.
    "backend": (Point(_BACKEND, "BackendModule.get_host_codegen", ("self", "target_host")),
                Point(_BACKEND, "BackendModule.preprocess_host_codegen", ("self", "mod", "target_host", "target")),
                Point(_BACKEND, "BackendModule.matches", ("self", "target")),
                Point(_BACKEND, "BackendModule.host_codegens", "field"),
                Point(_BACKEND, "BackendModule.host_codegen_hooks", "field"),
                Point(_BACKEND, "list_backends", ()), *_CACHE_KEYS),
    # 0.1.12-0.1.13: tilelang.engine.lower imports the registry's functions by name.
    "registry": (Point(_LOWER, "resolve_host_codegen", ("target_host",)),
                 Point(_LOWER, "apply_host_codegen_hooks", ("mod", "target_host", "target")),
                 Point(_HC, "_HOST_CODEGENS", "dict"), Point(_HC, "_LAZY_HOST_CODEGENS", "dict"),
                 Point(_HC, "_HOST_CODEGEN_HOOKS", "dict"), Point(_HC, "_LAZY_HOST_CODEGEN_HOOKS", "dict"),
                 *_CACHE_KEYS),
}


def installed_build(found: Sequence[Distribution] | None = None) -> tuple[str, str]:
    """The installed TileLang's distribution name and version (``("tilelang-musa", "0.1.15")``)."""
    found = tilelang_distributions() if found is None else found
    if not found:
        raise UnsupportedTileLangError(
            "TileLang is not installed (no installed distribution ships the `tilelang` package); "
            "tilelang_hostcg.build() works with the TVM in use")
    return distribution_name(found[0]), str(found[0].version)


def check(build: tuple[str, str] | None = None) -> Mode:
    """The imported TileLang's layout; :class:`UnsupportedTileLangError` naming every point of it
    that is missing or of another shape (with neither layout, each layout's first point)."""
    from importlib.util import find_spec
    name, version = build or installed_build()
    try:
        mode: Mode = "backend" if find_spec(_BACKEND) is not None else "registry"  # the layout by its module
    except ImportError:  # no tilelang.backend at all
        mode = "registry"
    missing = [p for p in (point.problem() for point in POINTS[mode]) if p is not None]
    if mode == "registry" and missing and missing[0].startswith(f"{POINTS[mode][0]} "):  # neither layout
        missing = [f"{POINTS['backend'][0]} (or {POINTS['registry'][0]})"]
    if missing:
        raise UnsupportedTileLangError(
            f"TileLang ({name} {version}) lacks the integration point{'s' if len(missing) > 1 else ''} "
            f"{'; '.join(missing)}, which tilelang_hostcg.tilelang relies on (docs/tilelang.md lists them); "
            "tilelang_hostcg.build() still works with its TVM")
    return mode
