"""TileLang's metadata at the edges (fresh processes of the test environment, a TileLang-shaped
package on ``PYTHONPATH``): METADATA that is not UTF-8 is no traceback; a vendor build's huge RECORD
is never read whole and still names the build; two builds over each other with an edited file
match neither; ``import tilelang`` failing in a dependency repairs that dependency."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tilelang_hostcg.environment._finding import find

pytestmark = pytest.mark.skipif(find("tilelang") is not None,
                                reason="this environment has a TileLang build of its own")


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env["PYTHONPATH"] = str(site)
    return env


def _cli(site: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tilelang_hostcg", *argv], capture_output=True, text=True,
                          cwd=site.parent, env=_env(site), timeout=300)


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _tilelang(site: Path, init: str = "VERSION = 'x'\n") -> bytes:
    """A package named ``tilelang`` with TileLang's layout (its points are not there)."""
    (site / "tilelang" / "engine").mkdir(parents=True, exist_ok=True)
    (site / "tilelang" / "__init__.py").write_text(init)
    (site / "tilelang" / "engine" / "__init__.py").write_text("")
    (site / "tilelang" / "engine" / "lower.py").write_text("")
    return init.encode()


def _dist(site: Path, name: str, version: str, record: str, metadata: bytes | None = None) -> Path:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_bytes(metadata or f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode())
    (info / "RECORD").write_text(record)
    return info


@pytest.mark.parametrize("argv", [("check",), ("--json", "check")])
def test_tilelang_metadata_that_is_not_utf8_is_no_traceback(argv: tuple[str, ...], tmp_path: Path) -> None:
    site = tmp_path / "site"
    data = _tilelang(site)
    _dist(site, "tilelang", "0.1.15", _record_line("tilelang/__init__.py", data),
          metadata=b"Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.15\nSummary: caf\xe9\xff\n")
    proc = _cli(site, *argv)
    assert "Traceback" not in proc.stderr and "UnicodeDecodeError" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    if argv[0] == "--json":
        doc = json.loads(proc.stdout)
        assert doc["command"] == "check"


@pytest.mark.parametrize("first_lines", [True, False])
def test_a_vendor_builds_huge_record_is_not_read_whole_and_names_the_build(first_lines: bool,
                                                                           tmp_path: Path) -> None:
    site = tmp_path / "site"
    data = _tilelang(site)
    info = _dist(site, "tilelang-musa", "0.1.15", _record_line("tilelang/__init__.py", data) if first_lines else "")
    os.truncate(info / "RECORD", 300 * 1024 * 1024)  # sparse: 300 MB, nearly nothing on disk
    start = time.perf_counter()
    proc = _cli(site, "list", "--json")
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stderr
    tvm = json.loads(proc.stdout)["tvm"]
    assert tvm["distribution"] == "tilelang-musa" and tvm["provider_version"] == "0.1.15", tvm
    assert "source tree" not in tvm["describe"], tvm
    assert elapsed < 30, elapsed  # reading 300 MB several times over would show


@pytest.mark.parametrize("edited", [True, False])
def test_two_builds_over_each_other_with_an_edited_file_match_neither(edited: bool, tmp_path: Path) -> None:
    site = tmp_path / "site"
    musa = b"MUSA = 1\n"
    _tilelang(site, ("EDITED = True\n" if edited else musa.decode()))  # musa installed last, then edited
    stock = _dist(site, "tilelang", "0.1.15", _record_line("tilelang/__init__.py", b"STOCK = 1\n"))
    _dist(site, "tilelang-musa", "0.1.15", _record_line("tilelang/__init__.py", musa))
    os.utime(stock, (time.time() - 3600, time.time() - 3600))  # stock installed first, musa last
    proc = _cli(site, "--json", "check")
    assert "Traceback" not in proc.stderr, proc.stderr
    (warning,) = [p["message"] for p in json.loads(proc.stdout)["problems"] if p["code"] == "tilelang-builds"]
    listed = _cli(site, "list")
    assert listed.returncode == 0, listed.stderr
    if edited:  # the one installed last is kept and put back whole: one build named, never both
        assert "match neither build" in warning and "tilelang-hostcg uses" not in warning, warning
        assert "tilelang-musa 0.1.15 was installed last" in warning, warning
        assert "`pip uninstall -y tilelang`" in warning and "`pip uninstall -y tilelang-musa`" not in warning, warning
        assert "'tilelang-musa==0.1.15'" in warning and "'tilelang==0.1.15'" not in warning, warning
        assert ("TVM in use: TVM bundled with tilelang 0.1.15 or tilelang-musa 0.1.15 (the files installed match "
                "neither build") in listed.stdout, listed.stdout
    else:  # the files are musa's: it is the one in use, and the other one is uninstalled
        assert "tilelang-hostcg uses tilelang-musa 0.1.15" in warning, warning
        assert "`pip uninstall -y tilelang`" in warning and "`pip uninstall -y tilelang-musa`" not in warning, warning
        assert "TVM in use: TVM bundled with tilelang-musa 0.1.15 (not imported)" in listed.stdout, listed.stdout


def test_two_builds_over_each_other_edited_so_that_import_fails_repair_the_one_installed_last(
        tmp_path: Path) -> None:
    site = tmp_path / "site"
    _tilelang(site, "raise RuntimeError('edited')\n")  # musa installed last, then edited
    stock = _dist(site, "tilelang", "0.1.15", _record_line("tilelang/__init__.py", b"STOCK = 1\n"))
    _dist(site, "tilelang-musa", "0.1.15", _record_line("tilelang/__init__.py", b"MUSA = 1\n"))
    os.utime(stock, (time.time() - 3600, time.time() - 3600))
    proc = _cli(site, "check")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "TileLang (tilelang-musa 0.1.15) is installed" in proc.stderr, proc.stderr
    assert "'tilelang-musa==0.1.15'" in proc.stderr and "'tilelang==0.1.15'" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("failure", ["raises", "syntax"])
def test_tilelang_failing_in_a_dependency_repairs_that_dependency(failure: str, tmp_path: Path) -> None:
    """``import tilelang`` fails inside a module it imports (a broken ``tqdm``, here ``hcgdep``): the repair
    reinstalls the distribution of that module alone, not TileLang."""
    site = tmp_path / "site"
    data = _tilelang(site, "import hcgdep\n")
    _dist(site, "tilelang", "0.1.15", _record_line("tilelang/__init__.py", data))
    (site / "hcgdep").mkdir()
    broken = "raise RuntimeError('hcgdep is broken')\n" if failure == "raises" else "def (:\n"
    (site / "hcgdep" / "__init__.py").write_text(broken)
    _dist(site, "hcg-dep", "2.0", _record_line("hcgdep/__init__.py", broken.encode()))
    for argv in (("check",), ("--json", "check")):
        proc = _cli(site, *argv)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
        message = proc.stderr if argv == ("check",) else json.loads(proc.stdout)["error"]["message"]
        assert "The failure is in the module 'hcgdep'" in message, message
        assert str(site / "hcgdep" / "__init__.py") in message and "installed by hcg-dep 2.0" in message, message
        assert "pip install --force-reinstall --no-deps 'hcg-dep==2.0'" in message, message
        assert "'tilelang==0.1.15'" not in message, message
