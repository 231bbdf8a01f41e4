"""Entry points -> registration plans.

Everything here is a pure function over records, except reading one
``entry_points.txt`` safely (for the cache's checks). The scan of the installed
distributions, :func:`scan_environment`, the one place that reads installed metadata
through ``importlib.metadata``, lives in :mod:`._scan` (imported only when a process
scans) and is importable from here. :mod:`._cache` keeps its result between processes.
"""

from __future__ import annotations

import errno
import os
import stat
import warnings
from collections.abc import Iterable, Mapping

from ._fileio import UnsafeFileError, read_regular_file
from ._targets import kind_spellings
from ._types import CODEGEN_GROUP, HOOK_GROUP, Record, init_fields

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True
if TYPE_CHECKING:
    from typing import Any

    from ._requirements import (  # noqa: F401  # re-exported: moved to _requirements
        TVM_PROVIDERS,
        _parse_requirement,
        _relevant_requires,
        _SimpleRequirement,
        check_requirements,
        installed_versions,
    )
    from ._scan import _metadata_fields, scan_environment  # noqa: F401  # re-exported: moved

__all__ = [
    "CORE_DISTRIBUTION",
    "AdvertisedEntryPoint",
    "ControlProblem",
    "Controls",
    "DiscoveryIndex",
    "PlannedSource",
    "core_entry_points",
    "normalize_name",
    "parse_entry_points",
    "plan_sources",
    "read_entry_points_text",
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


# Moved to _requirements and _scan, still importable from here; imported only when asked
# for: only a scan needs them, not the first use with a warm cache.
_MOVED = dict.fromkeys(("TVM_PROVIDERS", "_parse_requirement", "_relevant_requires",
                        "_SimpleRequirement", "check_requirements", "installed_versions"),
                       "_requirements")
_MOVED.update(dict.fromkeys(("scan_environment", "_metadata_fields", "_plain_headers", "_Copy",
                             "_duplicates", "_GROUP_MARK", "_GROUP_MARK_UTF16"), "_scan"))


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__package__}.{module}"), name)


def normalize_name(name: str) -> str:
    """PEP 503 normalization: lowercase, runs of ``-``, ``_``, ``.`` become one ``-``."""
    text = name.strip().lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


class AdvertisedEntryPoint(Record):
    """One installed entry point of our groups, with its distribution's verdict (immutable).

    ``incompatible`` says why the distribution's requirements on ``tilelang-hostcg``
    or ``apache-tvm`` are not met by what is installed (``None``: they are).
    """

    __slots__ = (  # noqa: RUF023  # fields in order
        "group", "name", "value", "distribution", "version", "requires", "incompatible", "location",
    )
    group: str
    name: str
    value: str
    distribution: str
    version: str
    requires: tuple[str, ...]
    incompatible: str | None
    location: str

    def __init__(self, group: str, name: str, value: str, distribution: str, version: str,
                 requires: tuple[str, ...] = (), incompatible: str | None = None,
                 location: str = "") -> None:
        init_fields(self, group, name, value, distribution, version, requires, incompatible,
                    location)

    @property
    def spec(self) -> str:
        """The entry point as written in metadata: ``kind = value``."""
        return f"{self.name} = {self.value}"


class DiscoveryIndex(Record):
    """What one scan of the environment found (immutable).

    ``duplicates`` maps a distribution installed more than once on ``sys.path``
    (one that advertises our groups in at least one copy) to the locations of its
    copies; the first one is the one used, as in ``importlib.metadata``. One folder
    reached through two ``sys.path`` spellings, and the metadata an editable install
    leaves in its own source tree, are one copy.

    ``problems`` holds one message per distribution skipped because its metadata
    could not be used (each names the folder and what is wrong); ``watched`` lists
    the metadata folders the index depends on besides those of the entry points
    (the core, ``apache-tvm`` and the skipped distributions), for the cache.
    """

    __slots__ = (  # noqa: RUF023  # fields in order
        "entry_points", "duplicates", "installed", "problems", "watched",
    )
    entry_points: tuple[AdvertisedEntryPoint, ...]
    duplicates: tuple[tuple[str, tuple[str, ...]], ...]
    installed: tuple[tuple[str, str | None], ...]
    problems: tuple[str, ...]
    watched: tuple[str, ...]

    def __init__(self, entry_points: tuple[AdvertisedEntryPoint, ...] = (),
                 duplicates: tuple[tuple[str, tuple[str, ...]], ...] = (),
                 installed: tuple[tuple[str, str | None], ...] = (),
                 problems: tuple[str, ...] = (), watched: tuple[str, ...] = ()) -> None:
        init_fields(self, entry_points, duplicates, installed, problems, watched)

    def warn(self, stacklevel: int = 2) -> None:
        """Warn (:class:`PluginWarning`) once for each entry of ``problems``."""
        for message in self.problems:
            from ._errors import PluginWarning  # here: the errors are off the first-use path

            warnings.warn(message, PluginWarning, stacklevel=stacklevel + 1)


class ControlProblem(Record):
    """A ``TILELANG_HOSTCG_*`` item that cannot do what it says: malformed, or naming a
    distribution, kind or codegen that does not exist. ``message`` says what to do."""

    __slots__ = ("variable", "item", "message")  # noqa: RUF023  # fields in order
    variable: str
    item: str
    message: str

    def __init__(self, variable: str, item: str, message: str) -> None:
        init_fields(self, variable, item, message)


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
        from ._errors import PluginWarning  # here: the errors are off the first-use path

        _warned_controls.add(problem.message)
        warnings.warn(problem.message, PluginWarning, stacklevel=_caller_level())


def _caller_level() -> int:
    """The ``stacklevel`` of the user's line, seen from the caller (see ``_errors.outside_level``)."""
    import sys

    from ._errors import outside_level

    return outside_level(sys._getframe(2))


class Controls(Record):
    """The plugin controls, normally read from the environment (immutable).

    ``disable`` holds normalized distribution names or ``distribution:kind``;
    ``only`` is ``None`` (no allowlist) or normalized names; ``prefer`` maps a
    kind to the codegen name that wins whenever it matches. ``problems`` lists what
    :meth:`from_environ` could not use (malformed items, unreadable values).

    Names that do not exist are judged against the installed entry points by
    :meth:`unknown_names` (distributions and kinds, at discovery) and
    :meth:`unknown_preference` (a preferred codegen, once the kind's plugins are
    loaded: at the kind's first resolution, and by ``check`` after loading all).
    """

    __slots__ = (  # fields in order
        "autoload", "disable", "only", "prefer", "problems",
    )
    _compare = ("autoload", "disable", "only", "prefer")  # not problems
    autoload: bool
    disable: frozenset[str]
    only: frozenset[str] | None
    prefer: Mapping[str, str]
    problems: tuple[ControlProblem, ...]

    def __init__(self, autoload: bool = True, disable: frozenset[str] = frozenset(),
                 only: frozenset[str] | None = None, prefer: Mapping[str, str] | None = None,
                 problems: tuple[ControlProblem, ...] = ()) -> None:
        init_fields(self, autoload, disable, only, {} if prefer is None else prefer, problems)

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


class PlannedSource(Record):
    """An entry point with the state discovery gives it: ``lazy``, ``disabled`` or
    ``incompatible`` (then ``reason`` says why)."""

    __slots__ = ("entry", "state", "reason")  # noqa: RUF023  # fields in order
    entry: AdvertisedEntryPoint
    state: str
    reason: str | None

    def __init__(self, entry: AdvertisedEntryPoint, state: str, reason: str | None = None) -> None:
        init_fields(self, entry, state, reason)


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


class _UnusableMetadata(Exception):
    """A metadata file we must not or cannot read; the message names it and why."""


METADATA_LIMIT = 16 * 1024 * 1024
"""Largest ``METADATA`` or ``entry_points.txt`` read (bytes); a larger one is skipped."""


def _describe(folder: str) -> str:
    return f"distribution metadata {folder!r}"


def _read_metadata_bytes(folder: str, name: str) -> bytes | None:
    path = os.path.join(folder, name)
    try:
        try:
            # A link is followed only in a second attempt, which tells a missing file
            # from a dangling link without a separate lstat in the common case.
            return read_regular_file(path, limit=METADATA_LIMIT, follow_links=False)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except UnsafeFileError:
            raise
        except OSError as exc:
            if exc.errno not in _LINK_ERRNOS:
                raise
        try:
            return read_regular_file(path, limit=METADATA_LIMIT)
        except FileNotFoundError:
            raise _UnusableMetadata(f"{_describe(folder)}: {name} is a dangling symbolic link "
                                    f"to {os.readlink(path)!r}") from None
    except UnsafeFileError as exc:
        raise _UnusableMetadata(f"{_describe(folder)}: {name} {_unsafe_reason(exc, path)}") \
            from exc
    except OSError as exc:
        raise _UnusableMetadata(f"{_describe(folder)}: {name} cannot be read "
                                f"({exc.strerror or exc})") from exc


_LINK_ERRNOS = frozenset({errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP)})


def _unsafe_reason(exc: OSError, path: str) -> str:
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return str(exc)
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return f"is {what}, not a regular file"
    return f"is over the limit of {METADATA_LIMIT} bytes" if "limit" in str(exc) else str(exc)


def parse_entry_points(text: str, source: str = "<text>") -> list[tuple[str, str, str]]:
    """``(group, name, value)`` of our groups in ``entry_points.txt`` text, exactly as
    ``importlib.metadata`` reads them (lines stripped, ``#`` comments and blank lines
    skipped, ``[group]`` headers, ``name = value``). Raises :class:`_UnusableMetadata`
    for a line without ``=`` in one of our groups (``importlib.metadata`` fails on it)."""
    found: list[tuple[str, str, str]] = []
    group: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] == "#":
            continue
        if line[0] == "[" and line[-1] == "]":
            group = line.strip("[]")
            continue
        if group not in GROUPS:
            continue
        name, sep, value = line.partition("=")
        if not sep:
            raise _UnusableMetadata(f"{_describe(source)}: entry_points.txt, [{group}]: the line "
                                    f"{line[:80]!r} is not 'name = value'")
        found.append((group, name.strip(), value.strip()))
    return found


def read_entry_points_text(location: str) -> str | None:
    """The UTF-8 text of ``location/entry_points.txt`` (``None`` when there is none),
    read as the scan reads it; raises an exception (never hangs) when it cannot be used."""
    data = _read_metadata_bytes(location, "entry_points.txt")
    return None if data is None else data.decode("utf-8")
