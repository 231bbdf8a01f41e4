"""Rule: every byte of installed metadata is untrusted.

One folder on ``sys.path`` holds a good plugin, distributions whose ``METADATA`` or
``entry_points.txt`` is unusable in one way each (an encoding other than UTF-8,
garbage, empty, a folder, a dangling link, no ``=``, a requirement that cannot be
parsed), and unrelated distributions with
odd metadata. Fresh interpreters must give one warning naming each unusable
distribution, skip it alone, never print a traceback, and still resolve ``llvm`` and
list the good plugin. Metadata is read through ``importlib.metadata``: a file it cannot
open is a file it does not have, and an unrelated distribution's ``METADATA`` is never
read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

CODEGEN_GROUP = "tilelang.host_codegen"


def _info(site: Path, name: str, *, metadata: bytes | None = None,
          entry_points: bytes | None = None) -> Path:
    folder = site / f"{name.replace('-', '_')}-1.0.dist-info"
    folder.mkdir(parents=True)
    (folder / "METADATA").write_bytes(
        metadata if metadata is not None
        else f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode())
    module = name.replace("-", "_")
    (folder / "entry_points.txt").write_bytes(
        entry_points if entry_points is not None
        else f"[{CODEGEN_GROUP}]\n{module} = {module}:CG\n".encode())
    return folder


def _meta(name: str, extra: str = "") -> str:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{extra}"


def _replace_with(kind: str, filename: str) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / filename
        path.unlink()
        if kind == "folder":
            path.mkdir()
        elif kind == "dangling":
            path.symlink_to(folder / "no-such-file")
    return apply


NOT_UTF8 = "entry_points.txt cannot be used (it is not UTF-8"
NO_NAME = "its METADATA cannot be used (it cannot be parsed: ValueError: it has no Name or no Version)"
# name -> (METADATA bytes or None, entry_points.txt bytes or None, then-apply, said)
BAD: dict[str, tuple[bytes | None, bytes | None, Callable[[Path], None] | None, str]] = {
    "bad-latin1-metadata": (_meta("bad-latin1-metadata", "Author: J\xfcrgen M\xfcller\n")
                            .encode("latin-1"), None, None,
                            "its METADATA cannot be used (it is not UTF-8"),
    "bad-utf16-entry-points": (None, f"[{CODEGEN_GROUP}]\nbad_utf16 = m:CG\n".encode("utf-16"),
                               None, NOT_UTF8),
    "bad-garbage-entry-points": (None, b"[tilelang.host_codegen]\nbad = \xff\xfe\x00\x9c\n"
                                 + os.urandom(64), None, NOT_UTF8),
    "bad-no-equals": (None, b"[tilelang.host_codegen]\njust a line\n", None,
                      "entry_points.txt cannot be used (it cannot be parsed"),
    "bad-requirement": (_meta("bad-requirement", "Requires-Dist: tilelang-hostcg (>=0.1\n")
                        .encode(), None, None,
                        "its METADATA cannot be used (it cannot be parsed: InvalidRequirement"),
    "bad-empty-metadata": (b"", None, None, NO_NAME),
    "bad-folder-metadata": (None, None, _replace_with("folder", "METADATA"), "its METADATA is a folder, not a file"),
    "bad-dangling-metadata": (None, None, _replace_with("dangling", "METADATA"), NO_NAME),
}
# Entry-point files that importlib.metadata does not have (it cannot open them): no
# entry points, as every other reader of entry points sees it.
ABSENT = {"absent-folder-entry-points": _replace_with("folder", "entry_points.txt"),
          "absent-dangling-entry-points": _replace_with("dangling", "entry_points.txt")}

GOOD_MODULE = """
import tilelang_hostcg as hc
CG = hc.HostCodegen("good", lambda mod, target: mod)
"""

# Entry-point files that importlib.metadata.entry_points() itself fails or hangs on,
# and TVM calls it when imported: processes that import TVM cannot run next to these.
BREAK_IMPORTLIB = frozenset({"bad-utf16-entry-points", "bad-garbage-entry-points",
                             "bad-no-equals"})

# Discovery and listing only (no TVM).
SCAN = """
import json, sys, warnings
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilelang_hostcg as hc
    registry = hc.default_registry()
    out["sources"] = sorted([s.kind, s.state] for s in registry.sources())
out["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
out["tvm"] = "tvm" in sys.modules
print(json.dumps(out))
"""

# Resolution with TVM, the good plugin loaded.
SCRIPT = """
import json, sys, warnings
out = {}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tilelang_hostcg as hc
    from tvm.target import Target
    registry = hc.default_registry()
    out["llvm"] = registry.resolve_host_codegen(Target("llvm")).name
    out["sources"] = sorted([s.kind, s.state] for s in registry.sources())
    registry.load_all()
    out["good"] = [r.name for r in registry.registrations("tilelang.host_codegen")
                   if r.kind == "good_plugin"]
out["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
print(json.dumps(out))
"""


def _site(root: Path, names: frozenset[str] | set[str]) -> Path:
    root.mkdir(parents=True)
    (root / "good_plugin.py").write_text(GOOD_MODULE)
    _info(root, "good-plugin")
    for name, (metadata, entry_points, apply, _said) in BAD.items():
        if name not in names:
            continue
        folder = _info(root, name, metadata=metadata, entry_points=entry_points)
        if apply is not None:
            apply(folder)
    for name, apply in ABSENT.items():
        apply(_info(root, name))
    # An unrelated distribution with odd metadata: its METADATA is never read.
    _info(root, "unrelated-latin1", metadata=_meta("unrelated-latin1", "Author: M\xfcller\n")
          .encode("latin-1"), entry_points=b"[console_scripts]\nx = y:z\n")
    if names >= BREAK_IMPORTLIB:  # an entry_points.txt nobody can read is named, ours or not
        _info(root, "broken-utf16",
              entry_points="[console_scripts]\nx = y:z\n".encode("utf-16"))
    return root


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every unusable kind of metadata."""
    return _site(tmp_path_factory.mktemp("untrusted-metadata") / "site", set(BAD))


@pytest.fixture(scope="module")
def tvm_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unusable metadata next to which TVM can still be imported."""
    return _site(tmp_path_factory.mktemp("untrusted-metadata") / "site",
                 set(BAD) - BREAK_IMPORTLIB)


def _run(site: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True, env=env,
                          cwd=site.parent, timeout=120)


def _check(site: Path, result: dict[str, Any]) -> None:
    kinds = {kind for kind, _state in result["sources"]}
    assert "good_plugin" in kinds
    assert not kinds & {name.replace("-", "_") for name in (*BAD, *ABSENT)}, kinds
    messages = [text for category, text in result["warnings"] if category == "MetadataPluginWarning"]
    present = [name for name in BAD if (site / f"{name.replace('-', '_')}-1.0.dist-info")
               .exists()]
    for name in present:
        said = BAD[name][3]
        folder = str(site / f"{name.replace('-', '_')}-1.0.dist-info")
        naming = [m for m in messages if repr(folder) in m]
        assert len(naming) == 1, (name, messages)
        assert said in naming[0], naming[0]
        # The reinstall advice names the distribution and version, without its dependencies.
        fix = f"Reinstall it (pip install --force-reinstall --no-deps '{name.replace('-', '_')}==1.0')"
        assert fix in naming[0], naming[0]
    assert not [m for m in messages if "unrelated" in m or "absent" in m], messages
    broken = [m for m in messages if "broken_utf16" in m]
    assert len(broken) == (1 if (site / "broken_utf16-1.0.dist-info").exists() else 0)
    assert len(messages) == len(present) + len(broken), messages


def test_each_unusable_distribution_is_named_and_skipped_alone(site: Path) -> None:
    proc = _run(site, ["-c", SCAN])
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    _check(site, result)
    assert result["tvm"] is False


def test_resolution_next_to_unusable_metadata(tvm_site: Path) -> None:
    proc = _run(tvm_site, ["-c", SCRIPT])
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    _check(tvm_site, result)
    # The good plugin turns TVM's integration on: TVM's own llvm default answers from the first use.
    assert result["llvm"] == "apache-tvm-llvm" and result["good"] == ["good"]


@pytest.mark.parametrize("argv", [["list"], ["list", "--json"]])
def test_listing_never_prints_a_traceback(site: Path, argv: list[str]) -> None:
    proc = _run(site, ["-m", "tilelang_hostcg", *argv])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    assert proc.returncode == 0, proc.stderr
    where = json.dumps(json.loads(proc.stdout)["warnings"]) if "--json" in argv else proc.stderr
    assert "bad_utf16_entry_points-1.0.dist-info" in where


@pytest.mark.parametrize("argv", [["list", "--load"], ["check", "--json"], ["explain", "llvm"]])
def test_the_command_line_never_prints_a_traceback(tvm_site: Path, argv: list[str]) -> None:
    site = tvm_site
    proc = _run(site, ["-m", "tilelang_hostcg", *argv])
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    if argv[0] == "check":
        doc = json.loads(proc.stdout)
        texts = [p["message"] for p in doc["problems"]]
        assert sum("bad_empty_metadata-1.0.dist-info" in t for t in texts) == 1, texts
    else:
        assert proc.returncode == 0, proc.stderr
        assert "bad_latin1_metadata-1.0.dist-info" in proc.stderr


@pytest.mark.parametrize("argv", [["check"], ["explain", "llvm"], ["check", "--json"]])
def test_an_entry_points_file_that_breaks_import_tvm_is_named(site: Path, argv: list[str]) -> None:
    """``import tvm`` itself fails next to an ``entry_points.txt`` that is not UTF-8 (TVM's
    autoload reads every distribution's): the commands that need TVM name that folder, as
    plain ``list`` does, and never advise reinstalling TVM, which cannot help."""
    proc = _run(site, ["-m", "tilelang_hostcg", *argv])
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    said = json.loads(proc.stdout)["error"]["message"] if "--json" in argv else proc.stderr
    for name in ("bad_utf16_entry_points", "bad_garbage_entry_points", "broken_utf16"):
        assert f"{name}-1.0.dist-info': entry_points.txt cannot be used (it is not UTF-8" in said, said
        assert f"pip install --force-reinstall --no-deps '{name}==1.0'" in said, said
    assert "apache-tvm" not in said.partition("cannot be imported")[2], said
