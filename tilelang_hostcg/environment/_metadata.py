"""Reading installed metadata: the one module that opens a distribution's files, and the answers
built on them alone (a distribution's name, whether it is editable, which distribution's files hold
a module). A metadata file is opened without waiting: a FIFO, a device or a folder where a file
belongs is a problem found (:func:`file_finding`), never a read that blocks; what is wrong is a
finding, worded by :mod:`..diagnosis`. Metadata names what the program imported; it never decides
what that is (:mod:`._finding` finds the compiler)."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core import normalize_name

if TYPE_CHECKING:
    from importlib.metadata import Distribution

    from ..diagnosis import Finding

# The files of a metadata folder this package reads besides ``entry_points.txt`` (which the scan
# judges first, a folder there being no file, as importlib.metadata reads it); each is checked before
# ``importlib.metadata`` opens it.
METADATA_FILES = ("METADATA", "PKG-INFO", "top_level.txt", "RECORD", "direct_url.json", "requires.txt")
_READ_LIMIT = 64 * 1024 * 1024  # a metadata file larger than this is not one an installer wrote
_RECORD_HEAD = 16 * 1024 * 1024  # of a RECORD over the limit, only this much is read (its first lines)
_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
               (stat.S_ISDIR, "a folder"), (stat.S_ISSOCK, "a socket"))


def _metadata_folder(dist: Distribution) -> Any:
    """``dist``'s metadata folder where it is one (``None`` else). ``importlib.metadata`` gives no public
    name for a ``PathDistribution``'s folder: this is the one place that reads its ``_path``."""
    return getattr(dist, "_path", None)


def folder_of(dist: Distribution) -> str:
    """How messages name a distribution: its metadata folder."""
    return str(_metadata_folder(dist) or dist)


def metadata_file_path(dist: Distribution, filename: str) -> str | None:
    """The path of ``filename`` in ``dist``'s metadata folder, where it is one on disk."""
    folder = _metadata_folder(dist)
    if folder is None:
        return None
    try:
        return os.path.join(os.fspath(folder), filename)
    except TypeError:  # a zip path or another non-path object
        return None


def _kind_of(mode: int) -> str | None:
    """What a file of ``mode`` is where it is not a regular file (``None`` for one)."""
    return next((what for test, what in _FILE_KINDS if test(mode)), None if stat.S_ISREG(mode) else "not a file")


def file_kind(dist: Distribution, filename: str) -> str | None:
    """What ``filename`` of ``dist``'s metadata is where it is there but not a regular file (``a FIFO``,
    ``a folder``, ...), else ``None``."""
    path = metadata_file_path(dist, filename)
    if path is None:
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:  # missing (or unreadable: importlib.metadata answers None for it)
        return None
    return _kind_of(mode)


FOLDER = "a folder"  # what importlib.metadata reads as a missing file


def file_finding(dist: Distribution, filename: str) -> Finding | None:
    """What keeps ``filename`` of ``dist``'s metadata from being read without waiting (a FIFO, a device, a
    folder: the distribution is ignored), else ``None``."""
    what = file_kind(dist, filename)
    if what is None:
        return None
    return _finding(dist, problem="not-a-file", file=filename, kind=what, path=metadata_file_path(dist, filename))


def _unreadable_file(dist: Distribution, filenames: tuple[str, ...]) -> str | None:
    """The first of ``filenames`` (default: every file this package reads) that cannot be read without waiting."""
    return next((f for f in filenames or METADATA_FILES if file_kind(dist, f) is not None), None)


def files_finding(dist: Distribution, *filenames: str) -> Finding | None:
    """The first :func:`file_finding` among ``filenames`` (default: every file this package reads), checked
    before ``importlib.metadata`` opens them; ``None`` where all can be read."""
    filename = _unreadable_file(dist, filenames)
    return None if filename is None else file_finding(dist, filename)


def read_file(dist: Distribution, filename: str) -> str | None:
    """``dist``'s metadata file ``filename`` as text, opened without waiting; ``None`` where missing
    or not a regular file (:func:`file_finding` names it); ``UnicodeDecodeError`` for one that is not
    UTF-8; ``PermissionError`` for one this user may not read."""
    path = metadata_file_path(dist, filename)
    if path is None:
        return dist.read_text(filename)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        return None
    with open(fd, "rb") as stream:
        info = os.fstat(fd)
        if _kind_of(info.st_mode) is not None or info.st_size > _READ_LIMIT:
            return None
        return stream.read().decode("utf-8")


def safe_read(dist: Distribution, filename: str) -> str | None:
    """:func:`read_file`, with ``None`` for a file that cannot be used (for answers that only look)."""
    try:
        return read_file(dist, filename)
    except Exception:  # not a file, not UTF-8, not readable: it says nothing
        return None


def folder_name_version(dist: Distribution) -> tuple[str, str]:
    """The name and version that ``dist``'s metadata folder is named by (``NAME-VERSION.dist-info``;
    empty where it says none), for a distribution whose ``METADATA`` cannot be read."""
    name, _, version = os.path.basename(folder_of(dist).rstrip("/\\")).rpartition(".")[0].partition("-")
    return name, version.partition("-")[0]


def name_and_version(dist: Distribution) -> tuple[str, str | None]:
    """``dist``'s metadata ``Name`` (PEP 503 normalized) and ``Version``, its ``METADATA`` parsed once;
    where it cannot be read, its folder's name and version, else ``?`` and ``None``."""
    name: object = None
    version: object = None
    if _unreadable_file(dist, ("METADATA", "PKG-INFO")) is None:
        try:
            metadata = dist.metadata
            name, version = metadata["Name"], metadata["Version"]
        except Exception:  # unreadable metadata
            name = version = None
    folder_name, folder_version = folder_name_version(dist)
    return (normalize_name(str(name or "") or folder_name) or "?",
            str(version) if version else (folder_version or None))


def distribution_name(dist: Distribution) -> str:
    """``dist``'s metadata ``Name``, PEP 503 normalized (where it cannot be read, its folder's, else ``?``)."""
    return name_and_version(dist)[0]


def distribution_version(dist: Distribution) -> str | None:
    """``dist``'s metadata ``Version`` (where it cannot be read, its folder's, else ``None``)."""
    return name_and_version(dist)[1]


def direct_url(dist: Distribution) -> dict[str, Any]:
    """``dist``'s PEP 610 ``direct_url.json`` (empty without a readable one: installed from an index)."""
    import json
    try:
        doc = json.loads(read_file(dist, "direct_url.json") or "null")
    except Exception:  # unreadable: as if installed from an index
        return {}
    return doc if isinstance(doc, dict) else {}


def editable_source(dist: Distribution) -> str | None:
    """The source folder of ``dist`` where it is an editable install, else ``None``."""
    from ._direct_url import file_url_path, is_editable  # a PEP 610 document: read only here
    doc = direct_url(dist)
    path = file_url_path(doc.get("url", "")) if is_editable(doc) else None
    return os.path.realpath(path) if path else None


def installed_at(dist: Distribution) -> float:
    """When ``dist`` was installed: the time its metadata folder was written (0 where it cannot be read)."""
    try:
        return os.stat(folder_of(dist)).st_mtime
    except (OSError, ValueError):
        return 0.0


def has_record(dist: Distribution) -> bool:
    """Whether ``dist`` lists its files (a ``RECORD``; PEP 627 lets a system packager omit it)."""
    path = metadata_file_path(dist, "RECORD")
    return os.path.isfile(path) if path is not None else safe_read(dist, "RECORD") is not None


def _top_level(dist: Distribution) -> list[str] | None:
    text = safe_read(dist, "top_level.txt")
    return None if text is None else text.split()


def _head(dist: Distribution, filename: str, size: int) -> str | None:
    """The first ``size`` bytes of ``dist``'s metadata file ``filename`` (whole lines, opened without
    waiting; bytes that are not UTF-8 replaced), ``None`` where it is not a regular file on disk."""
    path = metadata_file_path(dist, filename)
    if path is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with open(fd, "rb") as stream:
        if _kind_of(os.fstat(fd).st_mode) is not None:
            return None
        text = stream.read(size).decode("utf-8", errors="replace")
    return text[:text.rfind("\n") + 1]


def _record(dist: Distribution) -> tuple[str | None, bool]:
    """``dist``'s ``RECORD`` text and whether it is whole: one over the read limit (a vendor build's, or
    a sparse file) is never read whole, only its first lines."""
    record = safe_read(dist, "RECORD")
    if record is not None:
        return record, True
    path = metadata_file_path(dist, "RECORD")
    try:
        large = path is not None and os.stat(path).st_size > _READ_LIMIT
    except OSError:
        large = False
    return (_head(dist, "RECORD", _RECORD_HEAD), False) if large else (None, True)


def _lists(record: str, line: str) -> bool:
    return record.startswith(line) or f"\n{line}" in record


def _is_build_name(name: str, package: str) -> bool:
    """Whether the distribution name ``name`` is ``package``'s or a build of it (``tilelang-musa``; not
    this project's own distributions)."""
    name = normalize_name(name)
    return name == package or (name.startswith(package + "-") and not name.startswith(package + "-hostcg"))


def _named_after(dist: Distribution, package: str) -> bool:
    """Whether ``dist``'s name, or its metadata folder's, is ``package``'s or a build of it."""
    return any(_is_build_name(n, package) for n in (distribution_name(dist), folder_name_version(dist)[0]))


def editable_builds(package: str) -> list[Distribution]:
    """The editable installs of ``package`` (named after it by their metadata folder, nothing else read
    but their ``direct_url.json``) whose source folder holds it: where no folder on ``sys.path`` holds
    the package, an import hook serves it (scikit-build-core's redirecting finder, as an editable
    install of TileLang makes)."""
    from importlib.metadata import distributions
    found = []
    for dist in distributions():
        if not _is_build_name(folder_name_version(dist)[0], package):
            continue
        source = editable_source(dist)
        if source and any(os.path.isfile(os.path.join(source, *parts, package, "__init__.py"))
                          for parts in ((), ("src",))):
            found.append(dist)
    return found


def ships_package(dist: Distribution, package: str) -> bool:
    """Whether ``dist`` ships the top-level ``package``: its ``RECORD`` lists a file under it (searched
    whole, never parsed: TileLang's is over 0.5 MB; of one over the read limit, the first lines), else
    its ``top_level.txt`` names it (else, for a RECORD too large to read, its name says it)."""
    record, whole = _record(dist)
    if record is not None and _lists(record, package + "/"):
        return True
    if record is not None and whole:
        return False
    top_level = _top_level(dist)
    if top_level is not None:
        return package in top_level
    return not whole and _named_after(dist, package)


class Owner(NamedTuple):
    """The installed distribution whose files hold an imported package: its ``name`` (normalized),
    ``version``, metadata ``folder``, and whether it lists its files (``record``)."""

    name: str
    version: str | None
    folder: str
    record: bool

    def describe(self) -> str:
        """``NAME VERSION``."""
        return f"{self.name} {self.version or '?'}"


def owner(dist: Distribution) -> Owner:
    """The :class:`Owner` record of ``dist``."""
    name, version = name_and_version(dist)
    return Owner(name, version, folder_of(dist), has_record(dist))


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _holds(dist: Distribution, package: str, init_file: str, site: str) -> bool:
    """Whether ``dist``, installed in ``site``, ships ``package`` whose ``__init__.py`` is ``init_file``."""
    top_level = _top_level(dist)
    if top_level is not None and package not in top_level:
        return False  # it names its packages, and not this one: its RECORD is not read
    record, whole = _record(dist)
    if record is not None and _lists(record, f"{package}/__init__.py,"):
        return _same_file(os.path.join(site, package, "__init__.py"), init_file)
    if record is not None and whole:
        return False
    if top_level is not None:
        return True  # lists no files (or too many to read), names the package
    if not whole:  # a RECORD too large to read: the name of the distribution or its folder says it
        return _named_after(dist, package)
    return distribution_name(dist) == normalize_name(package)  # lists nothing: its name says it


def _hash_matches(dist: Distribution, package: str, init_file: str) -> bool:
    """Whether ``dist``'s ``RECORD`` hash of ``package/__init__.py`` is that of ``init_file`` (its files
    are the ones installed, where two distributions list the same file)."""
    import base64
    import hashlib
    line = f"{package}/__init__.py,"
    record = _record(dist)[0] or ""
    if not _lists(record, line):
        return False
    start = 0 if record.startswith(line) else record.find("\n" + line) + 1
    fields = record[start:].partition("\n")[0].split(",")
    algorithm, _, value = (fields[1] if len(fields) > 1 else "").partition("=")
    try:
        with open(init_file, "rb") as stream:
            digest = hashlib.new(algorithm, stream.read()).digest()
    except (OSError, ValueError):  # no such hash on this Python, or the file went away
        return False
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == value


def files_match(dist: Distribution, package: str, init_file: str) -> bool:
    """Whether the installed ``package/__init__.py`` (``init_file``) is the one ``dist``'s ``RECORD`` lists,
    by its hash (of two builds installed over each other, the one whose files are there)."""
    return _hash_matches(dist, package, init_file)


def owners_of(package: str, init_file: str, likely: tuple[str, ...] = ()) -> list[Distribution]:
    """The installed distributions whose files hold the imported ``package`` (its ``__init__.py`` is
    ``init_file``): those in the folder above it that list that file (or, listing no files, name the
    package in ``top_level.txt`` or are named after it), else an editable install whose source folder
    holds it and that names the package. More than one is a broken installation; the one whose files
    are installed comes first. ``likely``: names looked up first (one whose ``RECORD`` lists the very
    file installed is the answer, without reading the rest of the folder)."""
    from importlib.metadata import distributions
    site = os.path.dirname(os.path.dirname(os.path.realpath(init_file)))
    for name in likely:
        for dist in distributions(name=name, path=[site]):
            if has_record(dist) and _holds(dist, package, init_file, site) and _hash_matches(dist, package, init_file):
                return [dist]
    found = {folder_of(d): d for d in distributions(path=[site]) if _holds(d, package, init_file, site)}
    if not found:
        for dist in distributions():
            source = editable_source(dist)
            if source and (init_file.startswith(source + os.sep) or os.path.realpath(init_file).startswith(
                    source + os.sep)) and package in (_top_level(dist) or [distribution_name(dist)]):
                found.setdefault(folder_of(dist), dist)
    owners = list(found.values())
    if len(owners) > 1:  # the one whose files are installed first
        owners.sort(key=lambda d: not _hash_matches(d, package, init_file))
    return owners


def shipping(package: str, folders: list[str]) -> list[Distribution]:
    """Every installed distribution in ``folders`` that ships ``package`` (by its metadata alone)."""
    from importlib.metadata import distributions
    found: dict[str, Distribution] = {}
    for folder in folders:
        for dist in distributions(path=[folder]):
            if ships_package(dist, package):
                found.setdefault(os.path.realpath(folder_of(dist)), dist)
    return list(found.values())


def folder_problems(site: str) -> list[Finding]:
    """Every metadata file of the distributions installed in ``site`` that cannot be read without
    waiting (a FIFO, a device; a folder, but where ``entry_points.txt`` belongs, which
    ``importlib.metadata`` reads as missing), as a finding."""
    from importlib.metadata import distributions
    found = []
    for dist in distributions(path=[site]):
        for filename in (*METADATA_FILES, "entry_points.txt"):
            kind = file_kind(dist, filename)
            if kind is None or (kind == FOLDER and filename == "entry_points.txt"):
                continue
            finding = file_finding(dist, filename)
            if finding is not None:
                found.append(finding)
    return found


def unusable_entry_points() -> list[Finding]:
    """Each distribution whose ``entry_points.txt`` cannot be read, as a finding: it fails
    ``importlib.metadata.entry_points()`` for every group (TVM's autoload at ``import tvm``)."""
    from importlib.metadata import distributions
    found = []
    for dist in distributions():
        problem = file_finding(dist, "entry_points.txt")
        if problem is not None:
            found.append(problem)
            continue
        try:
            dist.entry_points  # noqa: B018  # read, for its error
        except Exception as exc:
            found.append(unusable_finding(dist, "entry_points.txt", exc))
    return found


def unusable_finding(dist: Distribution, file: str, exc: Exception, ignored: str | None = None) -> Finding:
    """``dist``'s metadata ``file`` cannot be used: ``exc`` says why (``ignored``: what is ignored for it,
    ``distribution`` or ``entry points``)."""
    if isinstance(exc, UnicodeDecodeError):
        return _finding(dist, problem="not-utf-8", file=file, reason=exc.reason, at=str(exc.start), ignored=ignored)
    first = str(exc).strip().partition("\n")[0]  # packaging's errors add a drawn caret line
    return _finding(dist, problem="unparsable", file=file, error=type(exc).__name__, reason=first, ignored=ignored)


def unreadable_finding(dist: Distribution, file: str) -> Finding:
    """``dist``'s metadata ``file`` is there, but this user may not read it: the distribution is ignored."""
    return _finding(dist, problem="unreadable", file=file)


def _finding(dist: Distribution, **facts: str | None) -> Finding:
    """A metadata finding about ``dist``: its folder, then ``facts``, then the name and version its folder
    is named by (``NAME-VERSION.dist-info``: its repair)."""
    from ..core import MetadataPluginWarning  # a warning's class: only where metadata is broken
    from ..diagnosis import Finding  # a finding: only where metadata is broken
    name, version = folder_name_version(dist)
    named = {"folder": folder_of(dist), **facts, "name": name or None, "version": version or None}
    return Finding(MetadataPluginWarning, tuple(named.items()), "environment")

