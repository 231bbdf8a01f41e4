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
    "ControlProblem",
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
class ControlProblem:
    """A ``TILELANG_HOSTCG_*`` item that cannot do what it says: malformed, or naming a
    distribution, kind or codegen that does not exist. ``message`` says what to do."""

    variable: str
    item: str
    message: str


CONTROL_VALUE_LIMIT = 64 * 1024
"""Longest value of a ``TILELANG_HOSTCG_*`` variable that is read (characters)."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})
_warned_controls: set[str] = set()


def show_text(text: str, limit: int = 60) -> str:
    """``text`` as a printable, quoted, bounded string: undecodable bytes (surrogate
    escapes) as ``\\xNN``, other non-ASCII as escapes, at most ``limit`` characters."""
    shown = text if len(text) <= limit else text[:limit]
    raw = shown.encode("utf-8", "surrogateescape").decode("ascii", "backslashreplace")
    raw = "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in raw)
    return f"'{raw}'" if len(text) <= limit else f"'{raw}'... ({len(text)} characters)"


def _is_name(text: str) -> bool:
    """Whether ``text`` is a valid distribution name (PEP 508)."""
    if not text or not text.isascii():
        return False
    ok = all(ch.isalnum() or ch in "._-" for ch in text)
    return ok and text[0].isalnum() and text[-1].isalnum()


def _decodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _as_utf8(text: str) -> str:
    """``text`` decoded from the environment's raw bytes as UTF-8, or unchanged."""
    try:
        return os.fsencode(text).decode("utf-8")
    except UnicodeError:
        return text


def _nearest(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or ``""``."""
    import difflib

    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def warn_control_problems(problems: Iterable[ControlProblem]) -> None:
    """Warn (a :class:`PluginWarning`) about each problem, once per process, pointing at
    the first caller outside this package (the user's line)."""
    for problem in problems:
        if problem.message in _warned_controls:
            continue
        _warned_controls.add(problem.message)
        warnings.warn(problem.message, PluginWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` of the first frame outside this package, seen from the caller."""
    import sys

    package = os.path.dirname(__file__) + os.sep
    frame, level = sys._getframe(2), 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


@dataclass(frozen=True, slots=True)
class Controls:
    """The plugin controls, normally read from the environment.

    ``disable`` holds normalized distribution names or ``distribution:kind``;
    ``only`` is ``None`` (no allowlist) or normalized names; ``prefer`` maps a
    kind to the codegen name that wins whenever it matches. ``problems`` lists what
    :meth:`from_environ` could not use (malformed items, unreadable values).

    Names that do not exist are judged against the installed entry points by
    :meth:`unknown_names` (distributions and kinds, at discovery) and
    :meth:`unknown_preference` (a preferred codegen, once the kind's plugins are
    loaded: at the kind's first resolution, and by ``check`` after loading all).
    """

    autoload: bool = True
    disable: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
    prefer: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[ControlProblem, ...] = field(default=(), compare=False)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Controls:
        """Read the ``TILELANG_HOSTCG_*`` variables.

        Values are untrusted: an item that is not valid UTF-8, not a distribution
        name, or malformed is dropped with a :class:`PluginWarning` naming the
        variable (recorded in ``problems``); a value over
        :data:`CONTROL_VALUE_LIMIT` characters is ignored whole, except
        ``TILELANG_HOSTCG_ONLY``, which then allows no third-party distribution (an
        allowlist fails closed). Items are separated by commas; ``DISABLE`` and
        ``ONLY`` also accept whitespace.
        """
        env = os.environ if environ is None else environ
        problems: list[ControlProblem] = []
        autoload = _read_autoload(env.get(ENV_AUTOLOAD_OFF), problems)
        disable_items = _items(ENV_DISABLE, env.get(ENV_DISABLE), problems, names=True)
        disable = frozenset(filter(None, (_disable_item(item, problems)
                                          for item in disable_items or ())))
        only_items = _items(ENV_ONLY, env.get(ENV_ONLY), problems, names=True)
        only = None if only_items is None else frozenset(
            normalize_name(item) for item in only_items if _only_item(item, problems))
        prefer: dict[str, str] = {}
        for item in _items(ENV_PREFER, env.get(ENV_PREFER), problems, names=False) or ():
            kind, sep, name = item.partition("=")
            if not sep or not kind.strip() or not name.strip():
                problems.append(ControlProblem(
                    ENV_PREFER, item, f"{ENV_PREFER}: ignoring {show_text(item)}; write "
                    f"kind=codegen, e.g. {ENV_PREFER}=llvm=llvm"))
                continue
            prefer[kind.strip()] = name.strip()
        warn_control_problems(problems)
        return cls(autoload=autoload, disable=disable, only=only, prefer=prefer,
                   problems=tuple(problems))

    def skip_control(self, distribution: str, kind: str) -> tuple[str, str] | None:
        """The control that skips this entry point, as ``(variable, item)``, or ``None``."""
        dist = normalize_name(distribution)
        if dist == CORE_DISTRIBUTION:
            return None
        if not self.autoload:
            return ENV_AUTOLOAD_OFF, "1"
        if self.only is not None and dist not in self.only:
            return ENV_ONLY, ",".join(sorted(self.only))
        if dist in self.disable:
            return ENV_DISABLE, dist
        for spelling in kind_spellings(kind):  # dist:hip and dist:rocm name one kind
            if f"{dist}:{spelling}" in self.disable:
                return ENV_DISABLE, f"{dist}:{spelling}"
        return None

    def skip_reason(self, distribution: str, kind: str) -> str | None:
        """Why the controls skip this entry point, or ``None`` when they let it load."""
        control = self.skip_control(distribution, kind)
        if control is None:
            return None
        variable, item = control
        if variable == ENV_AUTOLOAD_OFF:
            return f"plugin autoload is off ({ENV_AUTOLOAD_OFF}=1)"
        if variable == ENV_ONLY:
            return f"not in {ENV_ONLY}"
        return f"disabled by {ENV_DISABLE}={item}"

    def unknown_names(self, entry_points: Iterable[AdvertisedEntryPoint],
                      ) -> list[ControlProblem]:
        """Items of ``DISABLE``, ``ONLY`` and ``PREFER`` naming a distribution or kind
        that no installed entry point (the core's included) advertises."""
        if not (self.disable or self.only or self.prefer):
            return []
        entries = list(entry_points)
        kinds_of: dict[str, set[str]] = {CORE_DISTRIBUTION: set()}
        for ep in entries:
            kinds_of.setdefault(normalize_name(ep.distribution), set()).update(
                kind_spellings(ep.name))
        kinds_of[CORE_DISTRIBUTION].update(name for _, name, _ in CORE_ENTRY_POINTS)
        problems: list[ControlProblem] = []
        for item in sorted(self.disable):
            dist, sep, kind = item.partition(":")
            if dist not in kinds_of:
                problems.append(_no_distribution(ENV_DISABLE, item, dist, kinds_of))
            elif sep and kind not in kinds_of[dist]:
                problems.append(ControlProblem(
                    ENV_DISABLE, item, f"{ENV_DISABLE}={item}: distribution {dist!r} advertises "
                    f"no kind {kind!r}{_nearest(kind, kinds_of[dist])}; it advertises "
                    f"{', '.join(sorted(kinds_of[dist])) or 'nothing'}"))
        for dist in sorted(self.only or ()):
            if dist not in kinds_of:
                problems.append(_no_distribution(ENV_ONLY, dist, dist, kinds_of))
        codegen_kinds = {k for ep in entries if ep.group == CODEGEN_GROUP
                         for k in kind_spellings(ep.name)} | set(kinds_of[CORE_DISTRIBUTION])
        for kind in sorted(self.prefer):
            if kind not in codegen_kinds:
                problems.append(ControlProblem(
                    ENV_PREFER, f"{kind}={self.prefer[kind]}",
                    f"{ENV_PREFER}={kind}={self.prefer[kind]}: no installed distribution "
                    f"advertises host kind {kind!r}{_nearest(kind, codegen_kinds)}; the "
                    "preference applies only if code registers a codegen for that kind"))
        return problems

    def unknown_preference(self, kind: str, names: Iterable[str]) -> ControlProblem | None:
        """The problem with ``PREFER`` for ``kind`` when no codegen of that kind is
        called as it says (``names``: the kind's codegens, plugins loaded), else ``None``."""
        wanted = self.prefer.get(kind)
        if wanted is None:
            return None
        present = set(names)
        if wanted in present:
            return None
        listed = ", ".join(repr(n) for n in sorted(present)) or "none"
        return ControlProblem(
            ENV_PREFER, f"{kind}={wanted}",
            f"{ENV_PREFER}={kind}={wanted}: kind {kind!r} has no codegen named "
            f"{wanted!r}{_nearest(wanted, present)}; its codegens: {listed}. The preference "
            "has no effect; fix the name (see `tilelang-hostcg list --load`)")

    def check_preference(self, kind: str, names: Iterable[str]) -> None:
        """Warn once when ``PREFER`` names a codegen that ``kind`` does not have."""
        if kind in self.prefer:
            problem = self.unknown_preference(kind, names)
            if problem is not None:
                warn_control_problems([problem])


def _no_distribution(variable: str, item: str, dist: str,
                     kinds_of: Mapping[str, Iterable[str]]) -> ControlProblem:
    return ControlProblem(
        variable, item, f"{variable}={item}: no installed distribution {dist!r} advertises "
        f"host-codegen entry points{_nearest(dist, kinds_of)}; check the name with "
        "`tilelang-hostcg list`")


def _read_autoload(value: str | None, problems: list[ControlProblem]) -> bool:
    if value is None:
        return True
    text = value.strip().lower()
    if text in _TRUE:
        return False
    if text not in _FALSE:
        problems.append(ControlProblem(
            ENV_AUTOLOAD_OFF, value, f"{ENV_AUTOLOAD_OFF}={show_text(value)} is not understood; "
            f"plugin autoload stays on. Write {ENV_AUTOLOAD_OFF}=1 to turn it off"))
    return True


def _items(variable: str, value: str | None, problems: list[ControlProblem], *,
           names: bool) -> list[str] | None:
    """The items of a list variable (``None`` when unset), dropping unusable ones."""
    if value is None:
        return None
    if len(value) > CONTROL_VALUE_LIMIT:
        fails_closed = variable == ENV_ONLY
        problems.append(ControlProblem(
            variable, value[:40], f"{variable} is {len(value)} characters long, over the limit "
            f"of {CONTROL_VALUE_LIMIT}; it is ignored" + (
                " and no third-party distribution is allowed" if fails_closed else "")
            + f". Shorten {variable}"))
        return [] if fails_closed else None
    raw = value.replace(",", " ").split() if names else value.split(",")
    items = []
    for item in (part.strip() for part in raw):
        if not item:
            continue
        if not _decodable(item):
            item = _as_utf8(item)  # a UTF-8 name read under an ASCII locale (LANG=C)
        if not _decodable(item):
            problems.append(ControlProblem(
                variable, item, f"{variable}: ignoring {show_text(item)}: it is not valid UTF-8 "
                f"text; set {variable} to names separated by commas"))
            continue
        items.append(item)
    return items


def _only_item(item: str, problems: list[ControlProblem]) -> bool:
    if _is_name(item):
        return True
    problems.append(ControlProblem(
        ENV_ONLY, item, f"{ENV_ONLY}: ignoring {show_text(item)}: not a distribution name; "
        "separate names with commas"))
    return False


def _disable_item(item: str, problems: list[ControlProblem]) -> str | None:
    dist, sep, kind = item.partition(":")
    kind = kind.strip()
    if not _is_name(dist.strip()) or (sep and not kind) or (sep and not _is_kind(kind)):
        problems.append(ControlProblem(
            ENV_DISABLE, item, f"{ENV_DISABLE}: ignoring {show_text(item)}: write a distribution "
            "name or distribution:kind, separated by commas"))
        return None
    return f"{normalize_name(dist)}:{kind}" if sep else normalize_name(dist)


def _is_kind(text: str) -> bool:
    return text.isascii() and all(ch.isalnum() or ch in "_-." for ch in text)


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
    entry_points = tuple(entry_points)
    warn_control_problems(controls.unknown_names(entry_points))
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
