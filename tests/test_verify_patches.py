"""The check of ``patches/`` against the compilers' trees (``tests/verify_patches.py``), run on the
apache-tvm this environment installs: a diff claimed for it applies with ``git apply --check``, a
claim that does not hold is reported as failing, and checks that cannot run are said so, never
passed; ``git apply`` in a folder inside another repository still applies there."""

from __future__ import annotations

import site
import subprocess
from pathlib import Path

from .native_patches import PATCHES, apply_patch, git_apply
from .verify_patches import HELD, Tools, Tree, check_tree

NO_TOOLS = Tools({}, None, None, None)


def _installed() -> Path:
    return Path(next(p for p in site.getsitepackages() if (Path(p) / "tvm").is_dir()))


def test_the_diff_claimed_for_the_installed_tvm_applies_and_unrun_checks_are_not_a_pass() -> None:
    verdict, lines, holds = check_tree(Tree("apache-tvm", "tvm", diff="apache-tvm-0.27.diff"), _installed(), {},
                                       NO_TOOLS)
    assert verdict == "`apache-tvm-0.27.diff` applies"
    assert lines[0] == "apache-tvm-0.27.diff: git apply --check: ok"
    assert holds is None and HELD[holds] == "applies; checks not run"
    assert "not run" in lines[-1]


def test_a_claim_that_does_not_hold_fails() -> None:
    _, lines, holds = check_tree(Tree("apache-tvm", "tvm", diff="apache-tvm-main.diff"), _installed(), {}, NO_TOOLS)
    assert holds is False and "git apply --check fails" in lines[0]
    _, _, none_fits = check_tree(Tree("apache-tvm", "tvm", reason="claimed"), _installed(), {}, NO_TOOLS)
    assert none_fits is None  # apache-tvm-0.27.diff applies: "none fits" is not shown, whatever the checks say


def test_git_apply_in_a_folder_of_another_repository_changes_that_folder(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    folder = tmp_path / "venv" / "site"
    (folder / "tvm" / "tirx").mkdir(parents=True)
    (folder / "tvm" / "tirx" / "build.py").write_bytes((_installed() / "tvm" / "tirx" / "build.py").read_bytes())
    assert apply_patch(folder, PATCHES / "apache-tvm-0.27.diff") == ["tvm/tirx/build.py"]
    assert "HOST_CODEGEN_FUNC" in (folder / "tvm" / "tirx" / "build.py").read_text()
    again = git_apply(folder, PATCHES / "apache-tvm-0.27.diff", "--check", "-p2", "--include=tvm/*", check=False)
    assert again.returncode != 0  # applied already: all or nothing refuses it whole
