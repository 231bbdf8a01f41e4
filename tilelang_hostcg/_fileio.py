"""Files we write and files we read from outside, handled safely.

Writes are atomic: a temporary file in the same folder, flushed and fsynced, then
renamed over the target; on any failure the old file is left intact and the
temporary file removed. The folder is fsynced too (the rename itself made durable)
unless the caller says the file is only a hint that may be lost in a crash. Only a
regular file (or a symbolic link) is ever renamed over: never a device, a FIFO, a
socket or a folder. Output a user names (:func:`write_output`) is written through a
character device or a FIFO, and refused for anything else that is not a regular file.
Reads never follow a symbolic link, never block on a FIFO or device, accept only
regular files and stop at a size limit.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat

__all__ = ["UnsafeFileError", "read_regular_file", "write_atomic", "write_output"]

DEFAULT_READ_LIMIT = 64 * 1024 * 1024

_COUNTER = itertools.count()  # temporary names unique among this process's threads


class UnsafeFileError(OSError):
    """A file we were asked to read or write is not what it may be (not a plain regular
    file where one is needed, or too large); the message names the path and what it is."""


def _what(mode: int) -> str:
    """What a file of ``mode`` is, in words."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def _refuse_replacing(path: str) -> None:
    """Raise :class:`UnsafeFileError` when ``path`` exists and is neither a regular file nor
    a symbolic link: a rename would replace a device, a FIFO, a socket or a folder."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise UnsafeFileError(f"{path!r} is {_what(mode)}, not a regular file; it is never "
                              "replaced")


def write_atomic(path: str, data: bytes, *, mode: int = 0o644, sync_folder: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically.

    The data is fsynced before the rename, so after a crash ``path`` holds either the
    old file or the whole new one, never part of it. With ``sync_folder`` (the
    default) the folder is fsynced after the rename, so the new file also survives a
    crash; without it a crash right after the write may leave the old file in place.

    Raises ``OSError`` (with the path and the reason) when the write fails, and
    :class:`UnsafeFileError` when ``path`` is a device, a FIFO, a socket or a folder
    (only a regular file or a symbolic link itself is replaced); the old file, if any,
    is then unchanged.
    """
    _refuse_replacing(path)
    folder = os.path.dirname(os.path.abspath(path))
    base = os.path.basename(path)
    tmp = os.path.join(folder, f".{base}.{os.getpid()}.{next(_COUNTER)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
        _refuse_replacing(path)  # again: the path may have changed while we wrote
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if not sync_folder:
        return
    try:  # make the rename itself durable where the platform allows it
        dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)


def write_output(path: str, data: bytes) -> str:
    """Write ``data`` to ``path``, an output a user named; returns ``"replaced"`` or
    ``"written"``.

    - A missing file or a regular file is replaced atomically (:func:`write_atomic`):
      ``"replaced"``. A symbolic link to a regular file keeps pointing at it; the file
      it points to is replaced.
    - A character device (``/dev/null``, a terminal) or a FIFO with a reader, or a
      link to one, is written through, never replaced: ``"written"``.
    - Anything else (a socket, a block device, a folder, a FIFO with no reader, a
      dangling link or a link loop) is refused with :class:`UnsafeFileError`.

    Raises ``OSError`` naming the path and the reason when the write fails (a full
    device, a full disk); a regular file is then unchanged.
    """
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except FileNotFoundError:
        write_atomic(path, data)
        return "replaced"
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise UnsafeFileError(f"{path!r} is a symbolic link to a missing file") from None
    except OSError as exc:  # a link loop, a folder we may not search
        raise UnsafeFileError(f"{path!r} cannot be followed: {exc.strerror or exc}") from None
    if stat.S_ISREG(mode):
        write_atomic(os.path.realpath(path) if link else path, data)
        return "replaced"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        _write_through(path, data)
        return "written"
    raise UnsafeFileError(f"{path!r} is {_what(mode)}{' (through a symbolic link)' if link else ''}"
                          ", which can neither be replaced nor written to")


def _write_through(path: str, data: bytes) -> None:
    """Write ``data`` into the character device or FIFO ``path`` (no rename, no create)."""
    import errno  # here: only output to a device or FIFO needs them, not the first use
    import fcntl

    flags = os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)  # never blocks: a FIFO with no reader fails with ENXIO
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise UnsafeFileError(f"{path!r} is a FIFO that nobody reads; start its reader "
                                  "first, or give a regular file") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)):  # it changed since we looked
            raise UnsafeFileError(f"{path!r} changed while being written; try again")
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def read_regular_file(path: str, *, limit: int = DEFAULT_READ_LIMIT, follow_links: bool = True,
                      ) -> bytes:
    """The bytes of ``path``, which must be a regular file of at most ``limit`` bytes.

    The file is opened without blocking (a FIFO or device never hangs the caller);
    with ``follow_links=False`` a symbolic link is refused. Raises
    :class:`UnsafeFileError` for anything but a regular file or a file over the limit,
    and ``OSError`` when it cannot be opened.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UnsafeFileError(f"{path!r} is not a regular file")
        if info.st_size > limit:
            raise UnsafeFileError(f"{path!r} is {info.st_size} bytes, over the limit of {limit}")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > limit:
                raise UnsafeFileError(f"{path!r} grew over the limit of {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
