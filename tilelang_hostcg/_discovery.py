"""Entry points -> registration plans.

Everything here is a pure function over records, except :func:`scan_environment`,
the one place that reads installed metadata (through ``importlib_metadata`` and
``packaging``, both imported only there). :mod:`._cache` keeps its result between
processes.
"""

from __future__ import annotations

import errno
import os
import stat
import warnings
from collections.abc import Iterable, Mapping, Sequence

from ._errors import PluginWarning
from ._fileio import UnsafeFileError, read_regular_file
from ._record import Record, init_fields
from ._targets import kind_spellings
from ._types import CODEGEN_GROUP, HOOK_GROUP

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


# Moved to _requirements, still importable from here; imported only when asked for: only a
# scan needs them, not the first use with a warm cache.
_MOVED = frozenset({"TVM_PROVIDERS", "_parse_requirement", "_relevant_requires", "_SimpleRequirement",
                    "check_requirements", "installed_versions"})


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _requirements

    return getattr(_requirements, name)


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


def _metadata_fields(dist: Any, problems: list[str] | None = None,
                     ) -> tuple[str | None, str | None, list[str]]:
    """``Name``, ``Version`` and ``Requires-Dist`` of an installed distribution.

    The metadata file (``METADATA``, else ``PKG-INFO``, else an ``*.egg-info`` file
    itself, as ``importlib_metadata`` looks for it) is read with
    :func:`._fileio.read_regular_file`: never through a FIFO, never a folder, never
    over :data:`METADATA_LIMIT`, and it must be UTF-8. Plain headers are read line by
    line, giving what ``importlib_metadata`` gives without importing the ``email``
    package (about 14 ms of a cold scan); anything unusual (folded or odd header lines,
    no ``Name`` or ``Version``) goes through ``importlib_metadata``.

    A file that cannot be used gives ``(None, None, [])`` and one message naming it,
    appended to ``problems`` (or warned as a :class:`PluginWarning` when ``problems``
    is ``None``).
    """
    folder = _local_folder(dist)
    try:
        if folder is None:  # a zip file or another finder's distribution
            return dist.name, dist.version, list(dist.requires or ())
        text = None
        if os.path.isdir(folder):
            for name in ("METADATA", "PKG-INFO"):
                text = _read_metadata_file(folder, name)
                if text:
                    break
        else:  # an old-style ``name.egg-info`` file is its own metadata
            text = _read_metadata_file(os.path.dirname(folder), os.path.basename(folder))
        if not text:
            raise _UnusableMetadata(f"{_describe(folder)} has no METADATA or PKG-INFO file")
        fields = _plain_headers(text)
        # importlib_metadata falls back to requires.txt when there is no Requires-Dist.
        if fields is not None and (fields[2] or _read_metadata_file(folder, "requires.txt")
                                   is None):
            return fields
        name, version = dist.name, dist.version
        return name, version, list(dist.requires or ())
    except _UnusableMetadata as exc:
        message = str(exc)
    except (OSError, ValueError, LookupError, TypeError) as exc:  # the email parser's or a race's
        message = f"{_describe(folder or '?')}: cannot read its metadata ({exc})"
    message += ("; the distribution is ignored. Reinstall it (pip install --force-reinstall "
                "NAME) or remove the folder")
    if problems is None:
        warnings.warn(message, PluginWarning, stacklevel=2)
    else:
        problems.append(message)
    return None, None, []


class _UnusableMetadata(Exception):
    """A metadata file we must not or cannot read; the message names it and why."""


METADATA_LIMIT = 16 * 1024 * 1024
"""Largest ``METADATA`` or ``entry_points.txt`` read (bytes); a larger one is skipped."""


def _describe(folder: str) -> str:
    return f"distribution metadata {folder!r}"


def _local_folder(dist: Any) -> str | None:
    """The distribution's metadata folder (or egg-info file) on the local file system."""
    path = getattr(dist, "_path", None)
    if path is None or type(path).__module__.startswith("zipfile"):
        return None
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else None
    return text if isinstance(text, str) else None


def _read_metadata_file(folder: str, name: str) -> str | None:
    """The text of ``folder/name``: ``None`` when there is no such file (as
    ``importlib_metadata`` treats it); raises :class:`_UnusableMetadata` for anything
    that is not a readable regular UTF-8 file within :data:`METADATA_LIMIT`."""
    data = _read_metadata_bytes(folder, name)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _UnusableMetadata(
            f"{_describe(folder)}: {name} is not UTF-8 ({_guess_encoding(data)}; {exc.reason} "
            f"at byte {exc.start})") from None


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


def _guess_encoding(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or b"\x00" in data[:64]:
        return "it looks like UTF-16"
    return "perhaps Latin-1 or another legacy encoding"


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


def scan_environment(core_version: str, path: Sequence[str] | None = None, *,
                     warn: bool = True) -> DiscoveryIndex:
    """Read our entry-point groups from every distribution on ``path`` (default ``sys.path``).

    This is the only function that reads installed metadata, and it sees what
    ``importlib.metadata.entry_points()`` sees: distributions in ``sys.path`` order,
    the first copy of each normalized name wins (judged for every distribution, not
    only the ones advertising our groups), and later copies are never used; those of
    distributions advertising our groups are reported in ``duplicates``.

    Every ``entry_points.txt`` is read once, as bytes, through
    :func:`._fileio.read_regular_file`; only distributions advertising our groups
    have their ``METADATA`` parsed. Metadata that cannot be used (not UTF-8, not a
    regular file, a dangling link, unreadable, too large, a line without ``=``)
    skips that distribution alone, with a :class:`PluginWarning` naming it (when
    ``warn``) and a message in ``problems``.
    """
    import importlib_metadata

    from ._requirements import TVM_PROVIDERS, _relevant_requires, check_requirements, installed_versions

    problems: list[str] = []
    try:
        installed = installed_versions(core_version)
    except (OSError, ValueError) as exc:  # metadata of the core or of TVM that cannot be read
        problems.append(f"the installed versions of {CORE_DISTRIBUTION} and of TVM "
                        f"cannot be read ({exc}); requirements on them are judged as not met")
        installed = {CORE_DISTRIBUTION: core_version, **dict.fromkeys(TVM_PROVIDERS)}
    first: dict[str, _Copy] = {}
    later: dict[str, list[_Copy]] = {}
    plugins: list[tuple[_Copy, list[tuple[str, str, str]]]] = []
    watched: list[str] = []
    kwargs = {} if path is None else {"path": list(path)}
    for dist in importlib_metadata.distributions(**kwargs):
        copy = _Copy(dist)
        key = copy.key(problems)
        if key is None:
            continue
        if key in first:
            later.setdefault(key, []).append(copy)
            continue
        first[key] = copy
        if key in _WATCHED_KEYS:
            watched.append(copy.location)
        eps = copy.our_entry_points(problems)
        if eps is None:
            watched.append(copy.location)
        elif eps:
            plugins.append((copy, eps))
    found: list[AdvertisedEntryPoint] = []
    for copy, eps in plugins:
        name, version, requires_dist = _metadata_fields(copy.dist, problems)
        if not name:
            watched.append(copy.location)
            continue
        requires = _relevant_requires(requires_dist)
        verdict = (None if normalize_name(name) == CORE_DISTRIBUTION
                   else check_requirements(name, requires, installed))
        found.extend(AdvertisedEntryPoint(group, kind, value, name, version or "?", requires,
                                          verdict, copy.location) for group, kind, value in eps)
    duplicates = _duplicates(first, later, problems)
    index = DiscoveryIndex(tuple(found), duplicates, tuple(sorted(installed.items())),
                           tuple(problems), tuple(dict.fromkeys(w for w in watched if w)))
    if warn:
        index.warn(stacklevel=2)
    return index


_WATCHED_KEYS = frozenset(("tilelang_hostcg", "apache_tvm"))
_GROUP_MARK = b"tilelang.host_codegen"
# The mark in UTF-16 (LE, BE), spelled out: the codecs are not imported for it.
_GROUP_MARK_UTF16 = (bytes(b for c in _GROUP_MARK for b in (c, 0)),
                     bytes(b for c in _GROUP_MARK for b in (0, c)))


class _Copy:
    """One distribution folder found on the path, read lazily and safely."""

    __slots__ = ("dist", "location", "name", "text")

    def __init__(self, dist: Any) -> None:
        self.dist = dist
        folder = _local_folder(dist)
        self.location = folder if folder is not None else str(getattr(dist, "_path", ""))
        self.name: str | None = None
        self.text: str | None = None

    def key(self, problems: list[str]) -> str | None:
        """The name ``importlib.metadata`` tells copies apart by: from the folder name
        where it has one (``name-1.0.dist-info``), else from ``Name`` in the metadata."""
        stem = os.path.basename(self.location)
        base, ext = os.path.splitext(stem)
        if ext in (".dist-info", ".egg-info") and base:
            self.name = base.partition("-")[0]
        else:
            self.name = _metadata_fields(self.dist, problems)[0]
            if not self.name:
                return None
        return normalize_name(self.name).replace("-", "_")

    def our_entry_points(self, problems: list[str]) -> list[tuple[str, str, str]] | None:
        """``(group, kind, value)`` of our groups, in file order, as ``importlib.metadata``
        parses them; ``None`` (with a message) when the file cannot be used."""
        try:
            data = self._entry_points_bytes()
            if data is None or _GROUP_MARK not in data:
                if data is not None and any(m in data for m in _GROUP_MARK_UTF16):
                    raise _UnusableMetadata(f"{_describe(self.location)}: entry_points.txt is "
                                            "not UTF-8 (it looks like UTF-16)")
                return []
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _UnusableMetadata(
                    f"{_describe(self.location)}: entry_points.txt is not UTF-8 "
                    f"({_guess_encoding(data)}; {exc.reason} at byte {exc.start})") from None
            return parse_entry_points(text, self.location)
        except _UnusableMetadata as exc:
            problems.append(f"{exc}; the distribution's entry points are ignored. Reinstall it "
                            "(pip install --force-reinstall NAME) or remove the folder")
            return None

    def _entry_points_bytes(self) -> bytes | None:
        if _local_folder(self.dist) is None:
            try:
                text = self.dist.read_text("entry_points.txt")
            except (OSError, ValueError) as exc:
                raise _UnusableMetadata(f"{_describe(self.location)}: entry_points.txt "
                                        f"cannot be read ({exc})") from exc
            return None if text is None else text.encode("utf-8", "surrogatepass")
        return _read_metadata_bytes(self.location, "entry_points.txt")


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


def _duplicates(first: Mapping[str, _Copy], later: Mapping[str, list[_Copy]],
                problems: list[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Real second copies of the distributions that advertise our groups in any copy.

    Not copies: the same folder reached again (a ``sys.path`` entry listed twice, or
    two spellings of one folder, through a link or a relative path), and the
    ``*.egg-info`` an editable install leaves in its own source tree (the source tree
    is named by the ``direct_url.json`` of the installed copy).
    """
    out = []
    for key, copies in later.items():
        head = first[key]
        seen = {_real(head.location)}
        distinct: list[_Copy] = []
        for copy in copies:
            real = _real(copy.location)
            if real in seen:
                continue
            seen.add(real)
            distinct.append(copy)
        projects = [p for p in (_editable_project(c.location) for c in (head, *distinct)) if p]
        distinct = [c for c in distinct
                    if not _inside_any(c.location, projects)
                    and not (_inside_any(head.location, projects)
                             and _editable_project(c.location) is not None)]
        if not distinct:
            continue
        ours = [c for c in (head, *distinct) if c.our_entry_points([])]
        if not ours:
            continue
        name = normalize_name(head.name or key)
        out.append((name, (head.location, *(c.location for c in distinct))))
    return tuple(sorted(out))


def _real(location: str) -> str:
    try:
        return os.path.realpath(location)
    except (OSError, ValueError):
        return location


def _editable_project(location: str) -> str | None:
    """The source folder of an editable install (PEP 610 ``direct_url.json``), if any."""
    if not location.endswith(".dist-info"):
        return None
    try:
        import json
        from urllib.parse import unquote, urlsplit

        data = _read_metadata_bytes(location, "direct_url.json")
        if data is None:
            return None
        doc = json.loads(data.decode("utf-8"))
        if not (isinstance(doc, dict) and isinstance(doc.get("dir_info"), dict)
                and doc["dir_info"].get("editable") is True):
            return None
        url = urlsplit(str(doc.get("url", "")))
        if url.scheme != "file":
            return None
        return _real(unquote(url.path))
    except (_UnusableMetadata, ValueError, OSError):
        return None


def _inside_any(location: str, folders: Sequence[str]) -> bool:
    real = _real(location)
    return any(real == f or real.startswith(f.rstrip(os.sep) + os.sep) for f in folders)
