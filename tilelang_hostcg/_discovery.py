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
from dataclasses import dataclass, field

from ._errors import PluginWarning
from ._fileio import UnsafeFileError, read_regular_file
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


def normalize_name(name: str) -> str:
    """PEP 503 normalization: lowercase, runs of ``-``, ``_``, ``.`` become one ``-``."""
    text = name.strip().lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


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
    (one that advertises our groups in at least one copy) to the locations of its
    copies; the first one is the one used, as in ``importlib.metadata``. One folder
    reached through two ``sys.path`` spellings, and the metadata an editable install
    leaves in its own source tree, are one copy.

    ``problems`` holds one message per distribution skipped because its metadata
    could not be used (each names the folder and what is wrong); ``watched`` lists
    the metadata folders the index depends on besides those of the entry points
    (the core, ``apache-tvm`` and the skipped distributions), for the cache.
    """

    entry_points: tuple[AdvertisedEntryPoint, ...] = ()
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    installed: tuple[tuple[str, str | None], ...] = ()
    problems: tuple[str, ...] = ()
    watched: tuple[str, ...] = ()

    def warn(self, stacklevel: int = 2) -> None:
        """Warn (:class:`PluginWarning`) once for each entry of ``problems``."""
        for message in self.problems:
            warnings.warn(message, PluginWarning, stacklevel=stacklevel + 1)


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


def check_requirements(distribution: str, requires: Sequence[str],
                       installed: Mapping[str, str | None]) -> str | None:
    """Why ``requires`` (Requires-Dist lines) are not met by ``installed``, or ``None``.

    Only requirements on ``tilelang-hostcg`` and ``apache-tvm`` are judged; markers
    are evaluated for this interpreter; pre-releases and dev builds are accepted.
    """
    from packaging.version import InvalidVersion

    for line in requires:
        try:
            req = _parse_requirement(line)
        except ValueError as exc:  # packaging's InvalidRequirement
            return f"its requirement {line!r} cannot be parsed ({exc})"
        name = normalize_name(req.name)
        if name not in installed:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        have = installed[name]
        if have is None:
            return f"it requires {str(req)!r} but {name} is not installed"
        try:
            ok = req.specifier.contains(have, prereleases=True)
        except InvalidVersion:
            ok = False
        if not ok:
            return (f"it requires {str(req)!r} but {name} {have} is installed; install a "
                    f"release of {distribution!r} built for {name} {have}")
    return None


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


_SIMPLE_REQUIREMENT: list[Any] = []


def _parse_requirement(line: str) -> Any:
    """A requirement line as packaging's ``Requirement`` (or an equivalent for the
    simple forms); raises ``ValueError`` when it cannot be parsed."""
    if not _SIMPLE_REQUIREMENT:
        import re

        _SIMPLE_REQUIREMENT.append(re.compile(
            r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*"
            r"(?:\[\s*([A-Za-z0-9._-]+(?:\s*,\s*[A-Za-z0-9._-]+)*)?\s*\])?\s*"
            r"(?:\(\s*([<>=!~][^;()@\[\]]*?)\s*\)|([<>=!~][^;()@\[\]]*?))?\s*"))
    match = _SIMPLE_REQUIREMENT[0].fullmatch(line)
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


def _relevant_requires(requires: Iterable[str]) -> tuple[str, ...]:
    keep = []
    for line in requires:
        head = line.split(";", 1)[0]
        for stop in "<>=!~[ (":
            head = head.split(stop, 1)[0]
        if normalize_name(head) in (CORE_DISTRIBUTION, TVM_DISTRIBUTION):
            keep.append(line)
    return tuple(keep)


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


def installed_versions(core_version: str) -> dict[str, str | None]:
    """Installed versions of the two distributions plugins may require."""
    import importlib_metadata

    found: dict[str, str | None] = {}
    for name in (CORE_DISTRIBUTION, TVM_DISTRIBUTION):
        try:
            found[name] = _metadata_fields(importlib_metadata.distribution(name))[1]
        except importlib_metadata.PackageNotFoundError:
            found[name] = None
    if found[CORE_DISTRIBUTION] is None:  # running from a source tree
        found[CORE_DISTRIBUTION] = core_version
    return found


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

    problems: list[str] = []
    try:
        installed = installed_versions(core_version)
    except (OSError, ValueError) as exc:  # metadata of the core or of TVM that cannot be read
        problems.append(f"the installed versions of {CORE_DISTRIBUTION} and {TVM_DISTRIBUTION} "
                        f"cannot be read ({exc}); requirements on them are judged as not met")
        installed = {CORE_DISTRIBUTION: core_version, TVM_DISTRIBUTION: None}
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
_GROUP_MARK_UTF16 = ("tilelang.host_codegen".encode("utf-16-le"),
                     "tilelang.host_codegen".encode("utf-16-be"))


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
