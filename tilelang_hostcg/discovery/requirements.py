"""Requirement checks of plugin distributions: on ``tilelang-hostcg`` and on the TVM.

A plugin may say which TVM it needs through either provider: ``apache-tvm`` or
``tilelang`` (whose wheel bundles a TVM). The rule, for the requirements whose
markers apply:

- a requirement on ``tilelang-hostcg`` must be met by the installed version;
- the TVM requirements (on ``apache-tvm`` or ``tilelang``) are alternatives: met when
  any one of them is met by the installed version of the distribution it names;
- a TVM requirement naming a provider that is not installed is not "missing" when the
  other provider is installed: that provider's TVM stands in for it (both give the
  ``tvm.tirx`` API this project supports);
- when a named provider is installed at a version outside the range, the plugin is
  incompatible (the message quotes the requirement and the installed version); when
  no TVM provider is installed at all, it is incompatible too.

Requirements inside extras (``apache-tvm; extra == "tvm"``) never count: that is how
a plugin offers a TVM to install without pinning one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .._names import CORE_DISTRIBUTION as CORE
from .._names import TVM_PROVIDERS
from .records import normalize_name

__all__ = ["check_requirements", "parse_requirement", "relevant_requires"]


def check_requirements(distribution: str, requires: Sequence[str],
                       installed: Mapping[str, str | None]) -> str | None:
    """Why ``requires`` (Requires-Dist lines) are not met by ``installed``, or ``None``.

    Judges requirements on ``tilelang-hostcg`` and on the TVM providers by the rule in
    this module's docstring; ``installed`` maps those names to installed versions
    (``None`` or absent: not installed). Markers are evaluated for this interpreter;
    pre-releases and dev builds are accepted.
    """
    tvm_reqs: list[tuple[str, Any]] = []
    for line in requires:
        try:
            req = parse_requirement(line)
        except ValueError as exc:  # packaging's InvalidRequirement
            return f"its requirement {line!r} cannot be parsed ({exc})"
        name = normalize_name(req.name)
        if name != CORE and name not in TVM_PROVIDERS:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if name in TVM_PROVIDERS:
            tvm_reqs.append((name, req))
            continue
        have = installed.get(name)
        if have is None:
            return f"it requires {str(req)!r} but {name} is not installed"
        if not _contains(req, have):
            return f"it requires {str(req)!r} but {name} {have} is installed"
    return _check_tvm(distribution, tvm_reqs, installed)


def _contains(req: Any, version: str) -> bool:
    from packaging.version import InvalidVersion

    try:
        return bool(req.specifier.contains(version, prereleases=True))
    except InvalidVersion:
        return False


def _check_tvm(distribution: str, reqs: list[tuple[str, Any]],
               installed: Mapping[str, str | None]) -> str | None:
    if not reqs:
        return None
    present = {name: installed.get(name) for name in TVM_PROVIDERS if installed.get(name)}
    failed = None
    for name, req in reqs:
        have = present.get(name)
        if have is not None:
            if _contains(req, have):
                return None
            failed = failed or (req, name, have)
    if failed is not None:
        req, name, have = failed
        return f"it requires {str(req)!r} but {name} {have} is installed"
    if present:
        return None  # the other provider's TVM stands in for the one named
    wanted = " or ".join(repr(str(req)) for _, req in reqs)
    return (f"it requires {wanted} but no TVM is installed (neither apache-tvm nor tilelang); "
            "install one, e.g. `pip install tilelang-hostcg[tvm]` or `pip install "
            "tilelang-hostcg[tilelang]`")


class _SimpleRequirement:
    """``name[extras] specifiers`` without marker or URL, parsed with ``SpecifierSet``
    only: ``packaging.requirements`` pulls in ``packaging.tags`` and its parser
    (about 15 ms at import), which the common requirement lines do not need."""

    __slots__ = ("extras", "marker", "name", "specifier")

    def __init__(self, name: str, extras: list[str], specifier: Any) -> None:
        self.name, self.extras, self.specifier, self.marker = name, extras, specifier, None

    def __str__(self) -> str:  # as packaging's Requirement.__str__ writes it
        extras = f"[{','.join(sorted(self.extras))}]" if self.extras else ""
        return f"{self.name}{extras}{self.specifier}"


_SIMPLE_REQUIREMENT = (r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
                       r"(?:\[\s*([A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*)?\s*\])?\s*"
                       r"(?:\(\s*([<>=!~][^;()@\[\]]*?)\s*\)|([<>=!~][^;()@\[\]]*?))?\s*")


def parse_requirement(line: str) -> Any:
    """A requirement line as packaging's ``Requirement`` (or an equivalent for the
    simple forms); raises ``ValueError`` when it cannot be parsed."""
    match = re.fullmatch(_SIMPLE_REQUIREMENT, line)
    if match is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        name, extras, spec_paren, spec = match.groups()
        try:
            specifier = SpecifierSet(spec_paren or spec or "")
        except InvalidSpecifier:
            pass  # let the full parser say what is wrong
        else:
            return _SimpleRequirement(
                name, [e.strip() for e in extras.split(",")] if extras else [], specifier)
    from packaging.requirements import Requirement

    return Requirement(line)


def relevant_requires(requires: Iterable[str]) -> tuple[str, ...]:
    """The Requires-Dist lines on the core or a TVM provider (the ones to judge)."""
    keep = []
    for line in requires:
        head = line.split(";", 1)[0]
        for stop in "<>=!~[ (":
            head = head.split(stop, 1)[0]
        if normalize_name(head) in (CORE, *TVM_PROVIDERS):
            keep.append(line)
    return tuple(keep)
