"""Lock files: written as a shell redirect writes them, read as untrusted bytes.

``lock -o`` opens the file it is given and writes it, never renaming anything over it:
a write that fails (a file-size limit, a full device, a FIFO nobody reads) says so and
exits non-zero. ``check --lock`` reads any file without a traceback or a hang: another
encoding, any nesting, FIFOs, folders and link loops, and values of the wrong type are
a bad lock file (exit 2), never drift.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tilelang_hostcg.cli import main

GOOD_LOCK_ITEMS = {"distributions": [], "entry_points": [], "codegens": [], "hooks": []}


def _run(*argv: str, code: str | None = None, cwd: Path | None = None,
         ) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    cmd = [sys.executable, "-c", textwrap.dedent(code)] if code else [
        sys.executable, "-m", "tilelang_hostcg", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=cwd)


@pytest.fixture(scope="module")
def current_lock(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The lock of the environment the tests run in, as ``lock`` writes it."""
    path = tmp_path_factory.mktemp("lock") / "hostcg.lock.json"
    proc = _run("lock", "-o", str(path))
    assert proc.returncode == 0, proc.stderr
    return path.read_bytes()


def test_lock_document_has_its_command(current_lock: bytes) -> None:
    doc = json.loads(current_lock)
    assert doc["schema"] == 1 and doc["command"] == "lock"
    assert current_lock.isascii()


def test_lock_written_as_ascii_reads_back(current_lock: bytes, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "lock.json"
    path.write_bytes(current_lock.decode().encode("latin-1"))  # ASCII: identical bytes
    assert main(["check", "--lock", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["ok"] is True and doc["lock"] == str(path)


def _bad(tmp_path: Path, content: bytes) -> Path:
    path = tmp_path / "lock.json"
    path.write_bytes(content)
    return path


def _entry(**values: object) -> bytes:
    item = {"group": "tilelang.host_codegen", "kind": "llvm", "value": "x:Y",
            "distribution": "tilelang-hostcg", **values}
    return json.dumps({"schema": 1, **GOOD_LOCK_ITEMS, "entry_points": [item]}).encode()


@pytest.mark.parametrize("content, needle", [
    (b'{"schema": 1, "distributions": [{"name": "caf\xe9", "version": "1"}]}',
     "is not UTF-8 text (byte 0xe9 at offset"),
    (bytes(range(256)) * 4, "is not UTF-8 text"),
    ("{\"schema\": 1}".encode("utf-16"), "is not UTF-8 text (byte 0xff at offset 0)"),
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
    (b'{"schema": 1, "x": ' + b'{"a": ' * 100_000 + b"1" + b"}" * 100_000 + b"}",
     "nested too deeply"),
    (b"", "not valid JSON"),
    (b'{"schema": true}', "has schema true"),
    (b'{"schema": "1"}', "has schema \"1\""),
    (b'{"schema": 1, "command": "check"}', "is a \"check\" document, not a lock file"),
    (b'{"schema": 1, "hooks": {}}', "'hooks' must be a list"),
    (b'{"schema": 1, "hooks": [7]}', "hooks[0] is int, not an object"),
    (json.dumps({"schema": 1, "distributions": [{"name": "x", "version": 1}]}).encode(),
     "distributions[0] has 'version' = 1, not a string"),
    (json.dumps({"schema": 1, "codegens": [{"kind": "llvm", "name": "llvm", "priority": "0",
                                            "distribution": "tilelang-hostcg"}]}).encode(),
     "codegens[0] has 'priority' = \"0\", not an integer"),
    (json.dumps({"schema": 1, "hooks": [{"kind": "cuda", "name": "h", "priority": True,
                                         "distribution": "d"}]}).encode(),
     "hooks[0] has 'priority' = true, not an integer"),
    (_entry(value=["x:Y"]), "entry_points[0] has 'value' = [\"x:Y\"], not a string"),
    (_entry(kind=None), "entry_points[0] has 'kind' = null, not a string"),
    (json.dumps({"schema": 1, "distributions": [{"name": "x" * 10_000, "version": {}}]}).encode(),
     "has 'version' = {}, not a string"),
    (json.dumps({"schema": 1, "distributions": [{"name": "x", "version": "1", "direct_url": "/x"}]}).encode(),
     "distributions[0] has 'direct_url' = \"/x\", not an object"),
], ids=lambda v: v[:20] if isinstance(v, str) else None)
def test_unusable_lock_is_a_usage_error(content: bytes, needle: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _bad(tmp_path, content)
    assert main(["check", "--lock", str(path), "--json"]) == 2
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["ok"] is False and doc["command"] == "check"
    assert doc["error"]["exit_code"] == 2 and needle in doc["error"]["message"]
    assert str(path) in doc["error"]["message"] and "tilelang-hostcg lock -o" in captured.err
    assert len(captured.err) < 2000 and captured.err.count("\n") == 1


@pytest.mark.parametrize("kind", ["fifo", "folder", "link-loop", "missing", "dangling"])
def test_special_files_are_named_never_a_hang(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "lock.json"
    if kind == "fifo":  # nobody writes it
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "link-loop":
        os.symlink(tmp_path / "b", tmp_path / "a")
        os.symlink(tmp_path / "a", tmp_path / "b")
        path = tmp_path / "a"
    elif kind == "dangling":
        os.symlink(tmp_path / "nowhere", path)
    proc = _run("check", "--lock", str(path), "--json")  # a hang fails by the timeout
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    doc = json.loads(proc.stdout)
    assert str(path) in doc["error"]["message"]


FAILING_WRITE = """
    import resource, signal, sys
    from tilelang_hostcg.cli import main
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (200, 200))
    sys.exit(main(["lock", "-o", sys.argv[1]]))
"""


def test_failed_write_says_so_and_exits_non_zero(current_lock: bytes, tmp_path: Path) -> None:
    assert len(current_lock) > 200
    path = tmp_path / "hostcg.lock.json"
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(FAILING_WRITE), str(path)],
                          capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items()
                               if not k.startswith("TILELANG_HOSTCG_")})
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"cannot write lock file {str(path)!r}" in proc.stderr
    assert "the lock was not written" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # nothing renamed in

    proc = _run("lock", "-o", str(path))  # without the limit, the same command succeeds
    assert proc.returncode == 0 and path.read_bytes() == current_lock


def test_write_into_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lock", "-o", str(tmp_path / "missing" / "lock.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot write lock file" in err and "No such file or directory" in err


# --------------------------------------------------------------------------- special outputs
def _special(kind: str, folder: Path) -> Path:
    """A special file of our own in ``folder`` (never a real ``/dev`` entry)."""
    import socket
    import stat

    path = folder / kind
    if kind == "null":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    elif kind == "full":
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))
    return path


def _kind_of(path: Path) -> str:
    import stat

    mode = path.lstat().st_mode
    return ("link" if stat.S_ISLNK(mode) else "chr" if stat.S_ISCHR(mode) else
            "fifo" if stat.S_ISFIFO(mode) else "sock" if stat.S_ISSOCK(mode) else
            "file" if stat.S_ISREG(mode) else "other")


def _device_target(name: str, tmp_path: Path, through_link: bool) -> tuple[Path, Path]:
    """A device like ``/dev/<name>``, made in ``tmp_path``, and the path to give ``lock -o``:
    the device itself, or a link to it."""
    device = _special(name, tmp_path)
    target = tmp_path / "link" if through_link else device
    if through_link:
        os.symlink(device, target)
    return device, target


@pytest.mark.parametrize("through_link", [False, True], ids=["direct", "symlink"])
def test_lock_writes_through_a_device_and_never_replaces_it(through_link: bool, tmp_path: Path,
                                                            ) -> None:
    device, target = _device_target("null", tmp_path, through_link)
    proc = _run("lock", "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    assert "written through, not replaced" in proc.stderr and proc.stdout == ""
    assert _kind_of(device) == "chr" and os.major(device.stat().st_rdev) == 1
    assert _kind_of(target) == ("link" if through_link else "chr")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted({device.name, target.name})


@pytest.mark.parametrize("through_link", [False, True], ids=["direct", "symlink"])
def test_lock_to_a_full_device_fails_and_leaves_it(through_link: bool, tmp_path: Path) -> None:
    device, target = _device_target("full", tmp_path, through_link)
    proc = _run("lock", "-o", str(target))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"cannot write lock file {str(target)!r}: No space left on device" in proc.stderr
    assert _kind_of(device) == "chr" and os.minor(device.stat().st_rdev) == 7
    assert _kind_of(target) == ("link" if through_link else "chr")


def test_lock_into_a_fifo_with_a_reader_writes_through(current_lock: bytes, tmp_path: Path) -> None:
    fifo = _special("fifo", tmp_path)
    assert len(current_lock) < 65536  # fits in the pipe's buffer: read once the writer is done
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader before the writer comes
    try:
        proc = _run("lock", "-o", str(fifo))
        received = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert proc.returncode == 0, proc.stderr
    assert received == current_lock
    assert _kind_of(fifo) == "fifo"


@pytest.mark.parametrize("kind, needle", [
    ("fifo", "No such device or address"),  # nobody reads it
    ("socket", "No such device or address"),
    ("folder", "Is a directory"),
])
def test_lock_fails_on_what_it_cannot_write(kind: str, needle: str, tmp_path: Path) -> None:
    if kind == "folder":
        target = tmp_path / "folder"
        target.mkdir()
    else:
        target = _special(kind, tmp_path)
    before = _kind_of(target)
    proc = _run("lock", "-o", str(target))
    assert proc.returncode == 2, proc.stderr  # a hang fails by the timeout
    assert "Traceback" not in proc.stderr
    assert needle in proc.stderr and str(target) in proc.stderr
    assert _kind_of(target) == before
    assert [p.name for p in tmp_path.iterdir()] == [target.name]


def test_lock_through_a_dangling_link_creates_its_target(current_lock: bytes,
                                                         tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    os.symlink(tmp_path / "nowhere", link)
    proc = _run("lock", "-o", str(link))  # as `tilelang-hostcg lock > dangling` does
    assert proc.returncode == 0, proc.stderr
    assert _kind_of(link) == "link" and (tmp_path / "nowhere").read_bytes() == current_lock


def test_lock_through_a_link_to_a_regular_file_writes_the_file(current_lock: bytes,
                                                                 tmp_path: Path) -> None:
    real = tmp_path / "locks" / "hostcg.lock.json"
    real.parent.mkdir()
    real.write_bytes(b"old")
    link = tmp_path / "hostcg.lock.json"
    os.symlink(real, link)
    proc = _run("lock", "-o", str(link))
    assert proc.returncode == 0, proc.stderr
    assert f"Wrote {link}:" in proc.stdout
    assert _kind_of(link) == "link" and os.readlink(link) == str(real)
    assert real.read_bytes() == current_lock


@pytest.mark.parametrize("into", ["pipe", "file"])
def test_lock_to_dev_stdout(into: str, current_lock: bytes, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    cmd = [sys.executable, "-m", "tilelang_hostcg", "lock", "-o", "/dev/stdout"]
    dev_stdout = Path("/dev/stdout").lstat()
    if into == "pipe":
        proc = subprocess.run(cmd, capture_output=True, env=env, timeout=120)
        out = proc.stdout
    else:
        with open(tmp_path / "out.json", "wb") as stream:
            proc = subprocess.run(cmd, stdout=stream, stderr=subprocess.PIPE, env=env, timeout=120)
        out = (tmp_path / "out.json").read_bytes()
    assert proc.returncode == 0, proc.stderr
    assert out == current_lock
    # Written through, never replaced: /dev/stdout is the same entry (a link, as a rule).
    after = Path("/dev/stdout").lstat()
    assert (after.st_ino, after.st_mode) == (dev_stdout.st_ino, dev_stdout.st_mode)


# ------------------------------------------------------------ bounded input, stdout by any name
def _capped_at_3_gb() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3_000_000 * 1024, 3_000_000 * 1024))  # `ulimit -v 3000000`


@pytest.mark.parametrize("kind", ["dev-zero", "endless-pipe", "huge"])
def test_a_lock_without_end_or_huge_is_a_usage_error(kind: str, tmp_path: Path) -> None:
    path = Path("/dev/zero")
    if kind == "huge":
        path = tmp_path / "huge.lock.json"
        with open(path, "wb") as stream:  # sparse: 64 MiB of zeros after a lock's start
            stream.write(b'{"schema": 1, "distributions": [')
            stream.truncate(64 * 1024 * 1024)
    elif kind == "endless-pipe":
        path = Path("/dev/stdin")  # `yes | tilelang-hostcg check --lock /dev/stdin`
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    for json_flag in ((), ("--json",)):
        yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE) if kind == "endless-pipe" else None
        try:
            proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "check", "--lock", str(path),
                                   *json_flag], stdin=yes.stdout if yes else subprocess.DEVNULL,
                                  capture_output=True, text=True, env=env, timeout=120,
                                  preexec_fn=_capped_at_3_gb)
        finally:
            if yes is not None:
                yes.kill()
                yes.wait()
                assert yes.stdout is not None
                yes.stdout.close()
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
        assert str(path) in proc.stderr and "larger than 16 MiB" in proc.stderr, proc.stderr
        assert "tilelang-hostcg lock -o" in proc.stderr and proc.stderr.count("\n") == 1
        if json_flag:
            doc = json.loads(proc.stdout)
            assert doc["error"]["exit_code"] == 2 and str(path) in doc["error"]["message"]
        else:
            assert proc.stdout == ""


@pytest.mark.parametrize("link_to", ["/dev/stdout", "/proc/self/fd/1", "chain"])
def test_lock_through_a_link_to_stdout_is_stdout(link_to: str, current_lock: bytes,
                                                 tmp_path: Path) -> None:
    link = tmp_path / "out.lock.json"
    if link_to == "chain":  # a link to a link to /dev/stdout
        os.symlink("/dev/stdout", tmp_path / "first")
        os.symlink("first", link)
    else:
        os.symlink(link_to, link)
    out = tmp_path / "redirected.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    with open(out, "wb") as stream:  # `lock -o LINK > redirected.json`
        proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "lock", "-o", str(link)],
                              stdout=stream, stderr=subprocess.PIPE, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == current_lock  # no "Wrote ..." over it
    assert b"Wrote" not in proc.stderr
    assert os.path.islink(link)
    check = _run("check", "--lock", str(out))
    assert check.returncode == 0, check.stdout + check.stderr


def test_explain_of_a_target_nested_5000_deep_is_one_usage_error() -> None:
    deep = '{"kind": ' + '{"a": ' * 5000 + "1" + "}" * 5001
    for json_flag in ((), ("--json",)):
        proc = _run("explain", deep, *json_flag)
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert "RecursionError" not in proc.stderr and "Traceback" not in proc.stderr
        assert "nests more than" in proc.stderr and proc.stderr.count("\n") == 1
        assert len(proc.stderr) < 1000
        if json_flag:
            doc = json.loads(proc.stdout)
            assert doc["command"] == "explain" and doc["error"]["exit_code"] == 2
