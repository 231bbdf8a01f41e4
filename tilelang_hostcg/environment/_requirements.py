"""Requirement checks of plugin distributions on ``tilelang-hostcg`` and on the TVM, with ``packaging``
(markers for this interpreter outside any extra; pre-releases accepted). The core's must be met; the TVM
providers' (``apache-tvm``, or TileLang under any distribution name) are alternatives: met when any one
installed provider meets its own; no provider at all makes the plugin incompatible."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from ..core import APACHE_TVM, TILELANG, normalize_name
from ..core import CORE_DISTRIBUTION as CORE

if TYPE_CHECKING:
    from packaging.requirements import Requirement

_JUDGED = (CORE, APACHE_TVM, TILELANG)
UNKNOWN_VERSION = "unknown"
"""The version of a TVM provider imported from a source tree that does not say its own: it meets
every requirement (nothing proves otherwise)."""


def relevant_requires(lines: Iterable[str], installed: Iterable[str] = ()) -> tuple[str, ...]:
    """The ``Requires-Dist`` lines on the core, a TVM provider or a distribution of ``installed``
    (raises ``packaging.requirements.InvalidRequirement`` for a line that cannot be parsed)."""
    from packaging.requirements import Requirement
    judged = {*_JUDGED, *installed}
    return tuple(line for line in lines if normalize_name(Requirement(line).name) in judged)


def applicable(line: str) -> Requirement | None:
    """The requirement of ``line`` when its marker holds outside any extra, else ``None``."""
    from packaging.requirements import Requirement
    req = Requirement(line)
    if req.marker is not None and not req.marker.evaluate({"extra": ""}):
        return None
    return req


def check_requirements(distribution: str, requires: Sequence[str],
                       installed: Mapping[str, str | None]) -> str | None:
    """Why ``requires`` (Requires-Dist lines) are not met by ``installed`` (versions of the core, the TVM
    providers and the installed TileLang's distribution, by name; ``None``: not installed), or ``None``."""
    from packaging.requirements import InvalidRequirement
    tvm_reqs: list[tuple[str, Requirement]] = []  # (provider: apache-tvm or tilelang, requirement)
    in_use = next((name for name in installed if name not in _JUDGED), TILELANG)  # the TileLang installed
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
        elif name == CORE and not ((have := installed.get(CORE)) and meets(req, have)):
            return f"it requires {str(req)!r} but {name} {f'{have} is installed' if have else 'is not installed'}"
    if not tvm_reqs:
        return None
    present = {provider: (name, str(installed[name])) for provider, name in (
        (APACHE_TVM, APACHE_TVM), (TILELANG, in_use)) if installed.get(name)}
    failed = [(req, *present[name]) for name, req in tvm_reqs if name in present]
    if any(have == UNKNOWN_VERSION or meets(req, have) for req, _, have in failed):
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
    """The lines of ``requires`` that name stock ``tilelang`` where ``in_use``, the TileLang installed, is
    another distribution, each with the name: pip would install stock TileLang over the same folder."""
    from packaging.requirements import InvalidRequirement
    found = []
    for line in requires:
        with suppress(InvalidRequirement):  # left to check_requirements
            req = applicable(line)
            if req is not None and normalize_name(req.name) == TILELANG != normalize_name(in_use):
                found.append((line, TILELANG))
    return found


def meets(req: Requirement, version: str) -> bool:
    """Whether ``version`` meets ``req`` (pre-releases accepted; an unparsable one does not)."""
    from packaging.version import InvalidVersion
    try:
        return req.specifier.contains(version, prereleases=True)
    except InvalidVersion:
        return False
