"""TileLang's integration points (:data:`POINTS`, the table of ``docs/tilelang.md``), checked in the
TileLang the program imports by their shape (what TileLang's callers can call, as they call it), never
by distribution or version: one that lacks a point is refused, naming it. Whether the lowering still
calls them is shown by a build (:mod:`tilelang_hostcg.clients._probe`); reading its code gives a hint only."""

from __future__ import annotations

from typing import Literal

from ..clients import Point
from ..core import UnsupportedTileLangError
from ..environment import Found, has_module

Mode = Literal["registry", "backend"]  # TileLang's layouts (see ._layouts)

_LOWER, _HC, _BACKEND = "tilelang.engine.lower", "tilelang.backend.host_codegen", "tilelang.backend.module"
_HOST_CODEGEN = f"{_LOWER}:host_codegen"  # the function of TileLang's lowering that builds host code
# The cache-key wrappers hand every argument on; TileLang passes the kernel cache's by keyword.
_CACHE_KEYS = (Point("tilelang.cache.kernel_cache", "KernelCache._generate_key", ("self",),
                     keywords=("func", "out_idx", "execution_backend", "args", "target", "target_host")),
               Point("tilelang.autotuner.tuner", "AutoTuner.generate_cache_key",
                     ("self", "parameters", "extra_parameters")))
POINTS: dict[Mode, tuple[Point, ...]] = {
    # 0.1.14 on: each backend module chooses its host codegen and runs its hooks; the lowering's
    # host_codegen reaches them through the backend context.
    "backend": (Point(_BACKEND, "BackendModule.get_host_codegen", ("self", "target_host"),
                      (f"{_BACKEND}:BackendModule.codegen_host",)),
                Point(_BACKEND, "BackendModule.preprocess_host_codegen", ("self", "mod", "target_host", "target"),
                      (f"{_BACKEND}:BackendContext.preprocess_host_codegen",)),
                Point(_BACKEND, "BackendModule.codegen_host", "callable", (f"{_BACKEND}:BackendContext.codegen_host",)),
                Point(_BACKEND, "BackendContext.codegen_host", "callable", (_HOST_CODEGEN,)),
                Point(_BACKEND, "BackendContext.preprocess_host_codegen", "callable", (_HOST_CODEGEN,)),
                Point(_BACKEND, "BackendModule.matches", ("self", "target")),
                Point(_BACKEND, "BackendModule.host_codegens", "field"),
                Point(_BACKEND, "BackendModule.host_codegen_hooks", "field"),
                Point(_BACKEND, "list_backends", "mapping"), *_CACHE_KEYS),
    # 0.1.12-0.1.13: tilelang.engine.lower imports the registry's functions by name and its
    # host_codegen calls them.
    "registry": (Point(_LOWER, "resolve_host_codegen", ("target_host",), (_HOST_CODEGEN,)),
                 Point(_LOWER, "apply_host_codegen_hooks", ("mod", "target_host", "target"), (_HOST_CODEGEN,)),
                 Point(_HC, "_HOST_CODEGENS", "dict"), Point(_HC, "_LAZY_HOST_CODEGENS", "dict"),
                 Point(_HC, "_HOST_CODEGEN_HOOKS", "dict"), Point(_HC, "_LAZY_HOST_CODEGEN_HOOKS", "dict"),
                 *_CACHE_KEYS),
}


def build_name(found: Found) -> tuple[str | None, str | None]:
    """The imported TileLang's distribution name and version (``(None, version)``: a source tree)."""
    owner = found.owner
    return (owner.name if owner is not None else None), found.version()


def describe_build(found: Found) -> str:
    """``tilelang-musa 0.1.15``, or ``from a source tree at PATH``."""
    name, version = build_name(found)
    return f"{name} {version or '?'}" if name is not None else f"from {found.describe()}"


def layout() -> Mode:
    """The imported TileLang's layout, by its module."""
    return "backend" if has_module(_BACKEND) else "registry"


def _neither_layout(mode: Mode) -> bool:
    """Whether the imported ``tilelang`` lacks both layouts' first points (``mode`` is what
    :func:`layout` says: ``registry`` wherever the ``backend`` layout's module is missing)."""
    return mode == "registry" and POINTS["registry"][0].problem() is not None


def problems(mode: Mode) -> list[str]:
    """Every point of ``mode`` that is missing or of another shape (with neither layout, each
    layout's first point)."""
    if _neither_layout(mode):
        return [f"{POINTS['backend'][0]} (or {POINTS['registry'][0]})"]
    return [p for p in (point.problem() for point in POINTS[mode]) if p is not None]


def has_points() -> bool:
    """Whether the imported ``tilelang`` has one layout's first point at all (a stray module of that
    name has neither, and is not TileLang)."""
    return not _neither_layout(layout())


def check(found: Found) -> Mode:
    """The imported TileLang's layout; :class:`UnsupportedTileLangError` naming every point of it
    that is missing or of another shape."""
    mode = layout()
    missing = problems(mode)
    if missing:
        raise UnsupportedTileLangError(
            f"TileLang ({describe_build(found)}) lacks the integration point{'s' if len(missing) > 1 else ''} "
            f"{'; '.join(missing)}, which tilelang_hostcg.tilelang relies on (docs/tilelang.md lists them); "
            "tilelang_hostcg.build() still works with its TVM")
    return mode


def hints(mode: Mode) -> list[str]:
    """What reading TileLang's code suggests about a point a build did not call (never a verdict)."""
    return [h for h in (point.hint() for point in POINTS[mode]) if h is not None]
