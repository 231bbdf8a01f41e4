"""The atomic write: the data always fsynced, the folder only when asked."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tilelang_hostcg import _fileio


def _synced(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record what each ``os.fsync`` call syncs ("file" or "folder"), then sync it."""
    seen: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        seen.append("folder" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(_fileio.os, "fsync", fsync)
    return seen


def test_default_write_syncs_the_file_and_the_folder(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _synced(monkeypatch)
    target = tmp_path / "lock.txt"
    _fileio.write_atomic(str(target), b"pinned\n")
    assert target.read_bytes() == b"pinned\n"
    assert seen == ["file", "folder"]


def test_hint_write_syncs_the_file_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _synced(monkeypatch)
    target = tmp_path / "index.bin"
    target.write_bytes(b"old")
    _fileio.write_atomic(str(target), b"new contents", mode=0o600, sync_folder=False)
    assert target.read_bytes() == b"new contents"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert seen == ["file"]
    assert [p.name for p in tmp_path.iterdir()] == ["index.bin"]  # no temporary file left


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_atomic_write_never_renames_over_a_special_file(kind: str, tmp_path: Path) -> None:
    target = tmp_path / "index.bin"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "device":
        os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # our own null device
    else:
        target.mkdir()
    before = target.lstat()
    with pytest.raises(_fileio.UnsafeFileError, match="never replaced"):
        _fileio.write_atomic(str(target), b"data")
    after = target.lstat()
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["index.bin"]  # no temporary file left


def test_write_output_keeps_a_link_and_replaces_its_file(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    link = tmp_path / "link.json"
    os.symlink(real, link)
    assert _fileio.write_output(str(link), b"new") == "replaced"
    assert link.is_symlink() and real.read_bytes() == b"new"
    assert _fileio.write_output(str(tmp_path / "fresh.json"), b"x") == "replaced"
