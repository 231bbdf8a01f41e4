"""Entry points -> registration plans.

Everything here is a pure function over records, except :func:`scan_environment`,
the one place that reads installed metadata (through ``importlib_metadata`` and
``packaging``, both imported only there). :mod:`._cache` keeps its result between
processes.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ._errors import PluginWarning
from ._requirements import (  # noqa: F401  # re-exported: moved to _requirements
    _parse_requirement,
    _relevant_requires,
    _SimpleRequirement,
    check_requirements,
    installed_versions,
)
from ._targets import kind_spellings
from ._types import CODEGEN_GROUP, HOOK_GROUP

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "CORE_DISTRIBUTION",
    "AdvertisedEntryPoint",
    "Controls",
    "DiscoveryIndex",
    "PlannedSource",
    "core_entry_points",
    "normalize_name",
    "plan_sources",
    "scan_environment",
]

CORE_DISTRIBUTION = "tilelang-hostcg"
TVM_DISTRIBUTION = "apache-tvm"
GROUPS = (CODEGEN_GROUP, HOOK_GROUP)

# The core's own entry points; pyproject.toml advertises exactly these (a test checks).
CORE_ENTRY_POINTS: tuple[tuple[str, str, str], ...] = (
    (CODEGEN_GROUP, "c", "tilelang_hostcg.builtin:C_HOST_CODEGEN"),
    (CODEGEN_GROUP, "llvm", "tilelang_hostcg.builtin:LLVM_HOST_CODEGEN"),
)

ENV_AUTOLOAD_OFF = "TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD"
ENV_DISABLE = "TILELANG_HOSTCG_DISABLE"
ENV_ONLY = "TILELANG_HOSTCG_ONLY"
ENV_PREFER = "TILELANG_HOSTCG_PREFER"


def normalize_name(name: str) -> str:
    """PEP 503 normalization: lowercase, runs of ``-``, ``_``, ``.`` become one ``-``."""
    out: list[str] = []
    for ch in name.strip().lower():
        if ch in "-_.":
            if out and out[-1] == "-":
                continue
            ch = "-"
        out.append(ch)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class AdvertisedEntryPoint:
    """One installed entry point of our groups, with its distribution's verdict.

    ``incompatible`` says why the distribution's requirements on ``tilelang-hostcg``
    or ``apache-tvm`` are not met by what is installed (``None``: they are).
    """

    group: str
    name: str
    value: str
    distribution: str
    version: str
    requires: tuple[str, ...] = ()
    incompatible: str | None = None
    location: str = ""

    @property
    def spec(self) -> str:
        """The entry point as written in metadata: ``kind = value``."""
        return f"{self.name} = {self.value}"


@dataclass(frozen=True, slots=True)
class DiscoveryIndex:
    """What one scan of the environment found.

    ``duplicates`` maps a distribution installed more than once on ``sys.path``
    to the locations of its copies (the first one is the one used).
    """

    entry_points: tuple[AdvertisedEntryPoint, ...] = ()
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    installed: tuple[tuple[str, str | None], ...] = ()


@dataclass(frozen=True, slots=True)
class Controls:
    """The plugin controls, normally read from the environment.

    ``disable`` holds normalized distribution names or ``distribution:kind``;
    ``only`` is ``None`` (no allowlist) or normalized names; ``prefer`` maps a
    kind to the codegen name that wins whenever it matches.
    """

    autoload: bool = True
    disable: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
    prefer: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Controls:
        """Read the ``TILELANG_HOSTCG_*`` variables; malformed items warn and are ignored."""
        env = os.environ if environ is None else environ
        autoload = env.get(ENV_AUTOLOAD_OFF, "").strip().lower() not in {"1", "true", "yes", "on"}
        disable = frozenset(_disable_item(item) for item in _split(env.get(ENV_DISABLE, "")))
        only_text = env.get(ENV_ONLY)
        only = None if only_text is None else frozenset(
            normalize_name(item) for item in _split(only_text))
        prefer: dict[str, str] = {}
        for item in _split(env.get(ENV_PREFER, "")):
            kind, sep, name = item.partition("=")
            if not sep or not kind.strip() or not name.strip():
                warnings.warn(f"{ENV_PREFER}: ignoring {item!r}; write kind=codegen, e.g. "
                              f"{ENV_PREFER}=llvm=llvm", PluginWarning, stacklevel=2)
                continue
            prefer[kind.strip()] = name.strip()
        return cls(autoload=autoload, disable=disable, only=only, prefer=prefer)

    def skip_reason(self, distribution: str, kind: str) -> str | None:
        """Why the controls skip this entry point, or ``None`` when they let it load."""
        dist = normalize_name(distribution)
        if dist == CORE_DISTRIBUTION:
            return None
        if not self.autoload:
            return f"plugin autoload is off ({ENV_AUTOLOAD_OFF}=1)"
        if self.only is not None and dist not in self.only:
            return f"not in {ENV_ONLY}"
        if dist in self.disable:
            return f"disabled by {ENV_DISABLE}={dist}"
        for spelling in kind_spellings(kind):  # dist:hip and dist:rocm name one kind
            if f"{dist}:{spelling}" in self.disable:
                return f"disabled by {ENV_DISABLE}={dist}:{spelling}"
        return None


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def _disable_item(item: str) -> str:
    dist, sep, kind = item.partition(":")
    return f"{normalize_name(dist)}:{kind.strip()}" if sep else normalize_name(dist)


@dataclass(frozen=True, slots=True)
class PlannedSource:
    """An entry point with the state discovery gives it: ``lazy``, ``disabled`` or
    ``incompatible`` (then ``reason`` says why)."""

    entry: AdvertisedEntryPoint
    state: str
    reason: str | None = None


def core_entry_points(version: str) -> tuple[AdvertisedEntryPoint, ...]:
    """The core distribution's own entry points, as records."""
    return tuple(AdvertisedEntryPoint(group, name, value, CORE_DISTRIBUTION, version)
                 for group, name, value in CORE_ENTRY_POINTS)


def plan_sources(entry_points: Iterable[AdvertisedEntryPoint], controls: Controls,
                 core_version: str) -> list[PlannedSource]:
    """Turn installed entry points into planned lazy sources (pure).

    The core's own entry points are always present (installed or not) and come
    first; third-party ones follow sorted by distribution, group, kind and value,
    so the load order never depends on ``sys.path``.
    """
    third_party = sorted(
        (ep for ep in entry_points if normalize_name(ep.distribution) != CORE_DISTRIBUTION),
        key=lambda ep: (normalize_name(ep.distribution), ep.group, ep.name, ep.value))
    planned = [PlannedSource(ep, "lazy") for ep in core_entry_points(core_version)]
    for ep in third_party:
        reason = controls.skip_reason(ep.distribution, ep.name)
        if reason is not None:
            planned.append(PlannedSource(ep, "disabled", reason))
        elif ep.incompatible is not None:
            planned.append(PlannedSource(ep, "incompatible", ep.incompatible))
        else:
            planned.append(PlannedSource(ep, "lazy"))
    return planned


def _metadata_fields(dist: Any) -> tuple[str | None, str | None, list[str]]:
    """``Name``, ``Version`` and ``Requires-Dist`` of an installed distribution.

    A ``*.dist-info/METADATA`` with plain headers is read line by line, giving what
    ``importlib_metadata`` gives: it parses with the ``email`` package, whose import
    alone costs about 14 ms of a cold scan. Anything unusual (folded or odd header
    lines, egg-info, no ``Name`` or ``Version``) goes through ``importlib_metadata``.
    """
    if str(getattr(dist, "_path", "")).endswith(".dist-info"):
        text = dist.read_text("METADATA")
        fields = _plain_headers(text) if text else None
        # importlib_metadata falls back to requires.txt when there is no Requires-Dist.
        if fields is not None and (fields[2] or dist.read_text("requires.txt") is None):
            return fields
    return dist.name, dist.version, list(dist.requires or ())


def _plain_headers(text: str) -> tuple[str, str, list[str]] | None:
    name = version = None
    requires: list[str] = []
    key = ""
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if not line:
            break  # end of the headers
        if line[0] in " \t":  # a folded line continues the previous header
            if key in ("name", "version", "requires-dist"):
                return None
            continue
        key, sep, value = line.partition(":")
        if not sep or not key or "\r" in line or not all(
                "!" <= ch <= "~" for ch in key) or line.startswith("From "):
            return None  # let the email parser judge it
        key, value = key.lower(), value.lstrip(" \t")
        if key == "name":
            name = value if name is None else name
        elif key == "version":
            version = value if version is None else version
        elif key == "requires-dist":
            requires.append(value)
    if not name or not version:
        return None
    return name, version, requires


def scan_environment(core_version: str, path: Sequence[str] | None = None) -> DiscoveryIndex:
    """Read our entry-point groups from every distribution on ``path`` (default ``sys.path``).

    This is the only function that reads installed metadata. Each distribution's
    ``entry_points.txt`` is read once; only distributions advertising our groups have
    their ``METADATA`` parsed. The first copy of a distribution on the path wins, as
    in ``importlib.metadata``; later copies are reported in ``duplicates``.
    """
    import importlib_metadata

    installed = installed_versions(core_version)
    seen: dict[str, list[str]] = {}
    found: list[AdvertisedEntryPoint] = []
    kwargs = {} if path is None else {"path": list(path)}
    for dist in importlib_metadata.distributions(**kwargs):
        text = dist.read_text("entry_points.txt")
        if not text or "tilelang.host_codegen" not in text:
            continue
        name, version, requires_dist = _metadata_fields(dist)
        if not name:
            continue
        location = str(getattr(dist, "_path", ""))
        key = normalize_name(name)
        seen.setdefault(key, []).append(location)
        if len(seen[key]) > 1:
            continue
        eps = [ep for ep in dist.entry_points if ep.group in GROUPS]
        if not eps:
            continue
        requires = _relevant_requires(requires_dist)
        verdict = (None if key == CORE_DISTRIBUTION
                   else check_requirements(name, requires, installed))
        found.extend(AdvertisedEntryPoint(ep.group, ep.name, ep.value, name, version or "?",
                                          requires, verdict, location) for ep in eps)
    duplicates = tuple((name, tuple(locs)) for name, locs in sorted(seen.items())
                       if len(locs) > 1)
    return DiscoveryIndex(tuple(found), duplicates, tuple(sorted(installed.items())))
