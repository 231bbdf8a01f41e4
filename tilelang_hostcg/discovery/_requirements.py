"""Requirement checks of plugin distributions on ``tilelang-hostcg`` and on the TVM, with
``packaging`` (markers for this interpreter, outside any extra; pre-releases accepted).

A requirement on ``tilelang-hostcg`` must be met. The TVM requirements (``apache-tvm``, or
TileLang, which bundles a TVM) are alternatives: met when any one is met by its installed
provider; one naming a provider that is not installed is not missing while the other is
installed. A requirement naming ``tilelang`` or the installed TileLang's own distribution
(whatever its name: ``installed`` holds it under that name) is judged by the TileLang
installed; where that is not stock ``tilelang``, :func:`other_build_requirements` says so
(pip would install stock TileLang over it). A provider outside the range, or no provider, makes the plugin
incompatible. Requirements inside extras never count."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .._names import APACHE_TVM, TILELANG
from .._names import CORE_DISTRIBUTION as CORE
from ._records import normalize_name

if TYPE_CHECKING:
    from packaging.requirements import Requirement

__all__ = ["applicable", "check_requirements", "other_build_requirements", "relevant_requires"]

_JUDGED = (CORE, APACHE_TVM, TILELANG)


def relevant_requires(lines: Iterable[str], installed: Iterable[str] = ()) -> tuple[str, ...]:
    """The ``Requires-Dist`` lines on the core, a TVM provider or a distribution of ``installed``
    (raises ``packaging.requirements.InvalidRequirement`` for a line that cannot be parsed)."""
    from packaging.requirements import Requirement

    judged = {*_JUDGED, *installed}
    return tuple(line for line in lines if normalize_name(Requirement(line).name) in judged)


def _tilelang_in_use(installed: Mapping[str, str | None]) -> str:
    """The name of the installed TileLang's distribution in ``installed`` (``tilelang`` when none
    of another name is there)."""
    return next((name for name in installed if name not in _JUDGED), TILELANG)


def applicable(line: str) -> Requirement | None:
    """The requirement of ``line`` when its marker holds outside any extra, else ``None``."""
    from packaging.requirements import Requirement

    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        return None
    return req


def check_requirements(distribution: str, requires: Sequence[str],
                       installed: Mapping[str, str | None]) -> str | None:
    """Why ``requires`` (Requires-Dist lines) are not met by ``installed`` (the core's and the TVM
    providers' versions; ``None`` or absent: not installed), or ``None``."""
    from packaging.requirements import InvalidRequirement

    tvm_reqs: list[tuple[str, Requirement]] = []  # (provider: apache-tvm or tilelang, requirement)
    in_use = _tilelang_in_use(installed)
    for line in requires:
        try:
            req = applicable(line)
        except InvalidRequirement as exc:
            return f"its requirement {line!r} cannot be parsed ({exc})"
        if req is None:
            continue
        name = normalize_name(req.name)
        if name in (APACHE_TVM, TILELANG, in_use):
            tvm_reqs.append((APACHE_TVM if name == APACHE_TVM else TILELANG, req))
        elif name == CORE:
            have = installed.get(name)
            if have is None:
                return f"it requires {str(req)!r} but {name} is not installed"
            if not _contains(req, have):
                return f"it requires {str(req)!r} but {name} {have} is installed"
    if not tvm_reqs:
        return None
    present = {provider: (name, str(installed[name])) for provider, name in (
        (APACHE_TVM, APACHE_TVM), (TILELANG, in_use)) if installed.get(name)}
    failed = [(req, *present[name]) for name, req in tvm_reqs if name in present]
    if any(_contains(req, have) for req, _, have in failed):
        return None
    if failed:
        req, name, have = failed[0]
        return f"it requires {str(req)!r} but {name} {have} is installed"
    if present:
        return None  # the other provider's TVM stands in for the one named
    wanted = " or ".join(repr(str(req)) for _, req in tvm_reqs)
    return (f"it requires {wanted} but no TVM is installed (neither apache-tvm nor tilelang); "
            "install one, e.g. `pip install tilelang-hostcg[tvm]` or `pip install "
            "tilelang-hostcg[tilelang]`")


def other_build_requirements(requires: Sequence[str], in_use: str) -> list[tuple[str, str]]:
    """The lines of ``requires`` (Requires-Dist lines outside any extra) that name stock
    ``tilelang`` where ``in_use``, the TileLang installed, is another distribution, each with
    the name (``[("tilelang>=0.1.12", "tilelang")]`` for ``in_use="tilelang-paddle"``): pip,
    asked to meet them, installs stock TileLang over the same ``tilelang/`` folder. Lines
    that cannot be parsed are left to :func:`check_requirements`."""
    from packaging.requirements import InvalidRequirement

    found = []
    for line in requires:
        try:
            req = applicable(line)
        except InvalidRequirement:
            continue
        name = normalize_name(req.name) if req is not None else None
        if name == TILELANG != normalize_name(in_use):
            found.append((line, name))
    return found


def _contains(req: Requirement, version: str) -> bool:
    """Whether ``version`` meets ``req`` (pre-releases accepted; an unparsable one does not)."""
    from packaging.version import InvalidVersion

    try:
        return req.specifier.contains(version, prereleases=True)
    except InvalidVersion:
        return False
