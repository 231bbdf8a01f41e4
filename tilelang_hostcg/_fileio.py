"""Files we write and files we read from outside, handled safely.

Writes are atomic: a temporary file in the same folder, flushed and fsynced, then
renamed over the target; on any failure the old file is left intact and the
temporary file removed. The folder is fsynced too (the rename itself made durable)
unless the caller says the file is only a hint that may be lost in a crash. Reads
never follow a symbolic link, never block on a FIFO or device, accept only regular
files and stop at a size limit.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat

__all__ = ["UnsafeFileError", "read_regular_file", "write_atomic"]

DEFAULT_READ_LIMIT = 64 * 1024 * 1024

_COUNTER = itertools.count()  # temporary names unique among this process's threads


class UnsafeFileError(OSError):
    """A file we were asked to read is not a plain regular file, or is too large."""


def write_atomic(path: str, data: bytes, *, mode: int = 0o644, sync_folder: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically.

    The data is fsynced before the rename, so after a crash ``path`` holds either the
    old file or the whole new one, never part of it. With ``sync_folder`` (the
    default) the folder is fsynced after the rename, so the new file also survives a
    crash; without it a crash right after the write may leave the old file in place.

    Raises ``OSError`` (with the path and the reason) when the write fails; the old
    file, if any, is then unchanged.
    """
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
