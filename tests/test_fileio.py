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
