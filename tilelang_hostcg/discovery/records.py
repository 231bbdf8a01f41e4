"""Installed metadata as records: names, entry points, the scan's result, safe reads.

The leaf of discovery: the records every other layer passes around
(:class:`AdvertisedEntryPoint`, :class:`DiscoveryIndex`), PEP 503 names, and reading
one metadata file without ever following it into a FIFO, a device or a huge file.
Nothing here imports ``importlib.metadata``.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .._errors import warn_plugin
from .._fileio import UnsafeFileError, read_regular_file
from .._names import CODEGEN_GROUP, CORE_DISTRIBUTION, GROUPS

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "CORE_ENTRY_POINTS",
    "METADATA_LIMIT",
    "AdvertisedEntryPoint",
    "DiscoveryIndex",
    "UnusableMetadata",
    "core_entry_points",
    "describe",
    "groups_in",
    "near_miss_group",
    "normalize_name",
    "parse_entry_points",
    "read_entry_points_text",
    "read_metadata_bytes",
]

# The core's own entry points; pyproject.toml advertises exactly these (a test checks).
CORE_ENTRY_POINTS: tuple[tuple[str, str, str], ...] = (
    (CODEGEN_GROUP, "c", "tilelang_hostcg.builtin:C_HOST_CODEGEN"),
    (CODEGEN_GROUP, "llvm", "tilelang_hostcg.builtin:LLVM_HOST_CODEGEN"),
)

METADATA_LIMIT = 16 * 1024 * 1024
"""Largest ``METADATA`` or ``entry_points.txt`` read (bytes); a larger one is skipped."""


def normalize_name(name: str) -> str:
    """PEP 503 normalization: lowercase, runs of ``-``, ``_``, ``.`` become one ``-``."""
    text = name.strip().lower().replace("_", "-").replace(".", "-")
    while "--" in text:
        text = text.replace("--", "-")
    return text


@dataclass(frozen=True, slots=True)
class AdvertisedEntryPoint:
    """One installed entry point of our groups, with its distribution's verdict (immutable).

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
    """What one scan of the environment found (immutable).

    ``duplicates`` maps a distribution installed more than once on ``sys.path``
    (one that advertises our groups in at least one copy) to the locations of its
    copies; the first one is the one used, as in ``importlib.metadata``. One folder
    reached through two ``sys.path`` spellings, and the metadata an editable install
    leaves in its own source tree, are one copy.

    ``problems`` holds one message per distribution skipped because its metadata
    could not be used (each names the folder and what is wrong); ``watched`` lists
    the metadata folders the index depends on besides those of the entry points
    (the core, the TVM providers and the skipped distributions), for the cache.
    ``near_misses`` holds ``(distribution, location, group, ours)`` for each group of
    an installed ``entry_points.txt`` that looks like one of ours but is not (``ours``:
    the group it was probably meant to be); its entry points are never read.
    """

    entry_points: tuple[AdvertisedEntryPoint, ...] = ()
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    installed: tuple[tuple[str, str | None], ...] = ()
    problems: tuple[str, ...] = ()
    watched: tuple[str, ...] = ()
    near_misses: tuple[tuple[str, str, str, str], ...] = ()

    def near_miss_messages(self) -> list[str]:
        """One message per entry of ``near_misses``, saying what to fix."""
        return [f"distribution {dist!r} ({location!r}) advertises entry points in the group "
                f"[{group}], which tilelang-hostcg does not read (did you mean [{ours}]?); "
                f"its entry points there are ignored. Rename the group in its packaging "
                f"metadata and reinstall it" for dist, location, group, ours in self.near_misses]

    def warn(self, stacklevel: int = 2) -> None:
        """Warn (:class:`PluginWarning`) once for each problem and near-miss group."""
        for message in (*self.problems, *self.near_miss_messages()):
            warn_plugin(message)  # at the user's line, whatever ``stacklevel`` says


def core_entry_points(version: str) -> tuple[AdvertisedEntryPoint, ...]:
    """The core distribution's own entry points, as records."""
    return tuple(AdvertisedEntryPoint(group, name, value, CORE_DISTRIBUTION, version)
                 for group, name, value in CORE_ENTRY_POINTS)


class UnusableMetadata(Exception):
    """A metadata file we must not or cannot read; the message names it and why."""


def describe(folder: str) -> str:
    """How messages name a metadata folder."""
    return f"distribution metadata {folder!r}"


_LINK_ERRNOS = frozenset({errno.ELOOP, getattr(errno, "EMLINK", errno.ELOOP)})


def read_metadata_bytes(folder: str, name: str) -> bytes | None:
    """The bytes of ``folder/name`` (``None`` when there is no such file); raises
    :class:`UnusableMetadata` for a FIFO, a device, a folder, a dangling link, an
    unreadable file or one over :data:`METADATA_LIMIT` (never blocks)."""
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
            raise UnusableMetadata(f"{describe(folder)}: {name} is a dangling symbolic link "
                                   f"to {os.readlink(path)!r}") from None
    except UnsafeFileError as exc:
        raise UnusableMetadata(f"{describe(folder)}: {name} {_unsafe_reason(exc, path)}") \
            from exc
    except OSError as exc:
        raise UnusableMetadata(f"{describe(folder)}: {name} cannot be read "
                               f"({exc.strerror or exc})") from exc


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
    skipped, ``[group]`` headers, ``name = value``). Raises :class:`UnusableMetadata`
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
            raise UnusableMetadata(f"{describe(source)}: entry_points.txt, [{group}]: the line "
                                   f"{line[:80]!r} is not 'name = value'")
        found.append((group, name.strip(), value.strip()))
    return found


def read_entry_points_text(location: str) -> str | None:
    """The UTF-8 text of ``location/entry_points.txt`` (``None`` when there is none),
    read as the scan reads it; raises an exception (never hangs) when it cannot be used."""
    data = read_metadata_bytes(location, "entry_points.txt")
    return None if data is None else data.decode("utf-8")


def _squeeze(group: str) -> str:
    return "".join(ch for ch in group.lower() if ch.isalnum())


_SQUEEZED = {_squeeze(group): group for group in GROUPS}


def near_miss_group(group: str) -> str | None:
    """Our group that ``group`` was probably meant to be (a different spelling, case,
    separator, a letter more or less), or ``None`` when it is ours or unrelated."""
    if group in GROUPS or "tilelang" not in group.lower():
        return None
    squeezed = _squeeze(group)
    if squeezed in _SQUEEZED:
        return _SQUEEZED[squeezed]
    for ours_squeezed, ours in _SQUEEZED.items():
        if _one_edit(squeezed, ours_squeezed):
            return ours
    return None


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one inserted, removed or replaced character."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i + (len(a) == len(b)):] == b[i + 1:]


def groups_in(text: str) -> Iterable[str]:
    """The ``[group]`` headers of ``entry_points.txt`` text, as ``importlib.metadata``
    reads them."""
    for raw in text.splitlines():
        line = raw.strip()
        if line and line[0] == "[" and line[-1] == "]":
            yield line.strip("[]")
