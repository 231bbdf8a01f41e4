"""The advice for TileLang installed more than once runs as written, proved with real ``pip`` in a
throwaway environment: stand-in builds (a ``tilelang`` package with TileLang's layout) installed by
pip from their wheels, the warning of ``check`` followed step by step (each ``pip`` command as
written, in a shell; each step by hand as it says), then ``check`` again.

- A ghost distribution (a metadata folder with no ``RECORD`` whose ``top_level.txt`` names
  ``tilelang``) beside the real package: no pip command is advised (pip cannot uninstall it, and it
  overwrote nothing); the message names the folder to remove by hand, and removing it is all it takes.
- Two builds installed over each other, then a file edited: the one installed last is named and kept,
  the other uninstalled, and the kept one reinstalled as it was installed (from its wheel).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tilelang_hostcg.environment._finding import find
from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments
from .plugin_factory import build_source_wheels

pytestmark = [pytest.mark.slow, pytest.mark.skipif(find("tilelang") is not None,
                                                   reason="this environment has a TileLang build of its own")]

STOCK = "# stock TileLang\n"
MUSA = "# tilelang-musa's build\n"
BY_HAND = re.compile(r"remove its metadata folder '([^']+)' by hand")


def _layout(init: str) -> dict[str, str]:
    return {"tilelang/__init__.py": init, "tilelang/engine/__init__.py": "", "tilelang/engine/lower.py": ""}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("tilelang-builds-pip")
    folders = [write_distribution(root / "src", "tilelang", "0.1.15", files=_layout(STOCK)),
               write_distribution(root / "src", "tilelang-musa", "0.1.15", files=_layout(MUSA))]
    built = build_source_wheels(root / "wheels", folders)
    return {w.name.split("-")[0].replace("_", "-"): w for w in built}


def _warning(env: PluginEnvironment, cwd: Path) -> str | None:
    proc = env.command("check", "--json", cwd=cwd)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    found = [p["message"] for p in json.loads(proc.stdout)["problems"] if p["code"] == "tilelang-builds"]
    return found[0] if found else None


def _follow(env: PluginEnvironment, message: str, cwd: Path) -> list[str]:
    """Each step of the message, in order: a ``pip`` command run as written in a shell (answering
    pip's confirmation as a user at a terminal does), a folder removed by hand. Returns the commands."""
    shims = cwd / "bin"  # `pip` as the activated environment has it
    shims.mkdir(exist_ok=True)
    (shims / "pip").write_text(f'#!/bin/sh\nexec "{env.python}" -m pip "$@"\n')
    (shims / "pip").chmod(0o755)
    environ = env.environ()
    environ["PATH"] = f"{shims}:{environ['PATH']}"
    steps = re.findall(r"`(pip [^`]+)`|remove its metadata folder '([^']+)' by hand", message.split("Keep it:")[1])
    commands = []
    for command, folder in steps:
        if folder:
            shutil.rmtree(folder)
            continue
        commands.append(command)
        proc = subprocess.run(["bash", "-c", command], input="y\n", cwd=cwd, env=environ, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)
    return commands


def test_a_ghost_distribution_is_removed_by_hand_and_no_pip_command_is_given(
        environments: Environments, wheels: dict[str, Path], tmp_path: Path) -> None:
    env = environments.new("tilelang-ghost")
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheels["tilelang"]))
    ghost = env.site_packages / "tilelang_ghost-0.1.0.dist-info"
    ghost.mkdir()
    (ghost / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang-ghost\nVersion: 0.1.0\n")
    (ghost / "top_level.txt").write_text("tilelang\n")
    message = _warning(env, tmp_path)
    assert message is not None and "tilelang-ghost 0.1.0" in message, message
    assert "`pip " not in message, message  # nothing pip could run: it cannot uninstall what lists no files
    assert BY_HAND.search(message) and BY_HAND.search(message)[1] == str(ghost), message
    assert _follow(env, message, tmp_path) == []
    assert not ghost.exists() and _warning(env, tmp_path) is None
    assert (env.site_packages / "tilelang" / "__init__.py").read_text() == STOCK  # the real build is whole


def test_two_builds_over_each_other_edited_keep_the_one_installed_last(
        environments: Environments, wheels: dict[str, Path], tmp_path: Path) -> None:
    env = environments.new("tilelang-two-builds")
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheels["tilelang"]))
    env.pip("install", "-q", "--no-deps", "--no-index", str(wheels["tilelang-musa"]))  # over stock's files
    (env.site_packages / "tilelang" / "__init__.py").write_text("# edited by the user\n")
    message = _warning(env, tmp_path)
    assert message is not None and "match neither build" in message, message
    assert "tilelang-musa 0.1.15 was installed last" in message, message
    commands = _follow(env, message, tmp_path)
    assert commands == ["pip uninstall -y tilelang",
                        f"pip install --force-reinstall --no-deps '{wheels['tilelang-musa']}'"], message
    assert _warning(env, tmp_path) is None
    assert (env.site_packages / "tilelang" / "__init__.py").read_text() == MUSA  # musa's build, whole
