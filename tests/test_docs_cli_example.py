"""The first ``explain`` example of ``docs/cli.md`` is what the command prints in the environment
it names: the README's main job's (apache-tvm, the CUDA, ROCm and template plugins installed).
Lines the document shortens (``...``) match up to the cut; the rest match exactly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
MAIN_JOB = ("tilelang-hostcg-cuda", "tilelang-hostcg-rocm", "tilelang-hostcg-template")


def _example() -> tuple[list[str], list[str]]:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text[text.index("## `explain`"):]
    block = re.search(r"^```console\n(.*?)^```$", section, re.DOTALL | re.MULTILINE)
    assert block, "docs/cli.md's explain section shows no console block"
    command, *lines = block[1].splitlines()
    assert command.startswith("$ tilelang-hostcg ")
    return command.removeprefix("$ tilelang-hostcg ").split(), lines


@pytest.fixture(scope="module")
def env(environments: Environments, first_party_wheels: dict[str, Path]) -> PluginEnvironment:
    environment = environments.new("cli-example")
    environment.pip("install", "-q", "--no-deps", "--no-index",
                    *(str(first_party_wheels[n]) for n in MAIN_JOB))
    return environment


def test_the_first_explain_example_prints_as_shown(env: PluginEnvironment, tmp_path: Path) -> None:
    argv, shown = _example()
    proc = env.command(*argv, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    printed = proc.stdout.splitlines()
    assert len(printed) == len(shown), proc.stdout
    for want, got in zip(shown, printed, strict=True):
        if "..." in want:
            head, _, tail = want.partition("...")
            assert got.startswith(head.rstrip(",")) and got.endswith(tail), (want, got)
        else:
            assert got == want


def test_list_says_in_one_line_what_will_happen_and_marks_additions_as_additions(
        env: PluginEnvironment, tmp_path: Path) -> None:
    proc = env.command("list", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == ("Client: TVM integration (tilelang_hostcg.tvm), expected: `import tvm` turns it on, as a "
                        "third-party plugin is installed; `list --load` says for sure"), lines[1]
    assert "  llvm  [core kind, with additions]" in lines
    (template,) = [line for line in lines if "tilelang-hostcg-template" in line and "llvm =" in line]
    assert template.endswith("[adds to core kind: wins only where it matches]"), template
    assert "overrides" not in proc.stdout
    loaded = env.command("list", "--load", cwd=tmp_path)
    assert "Client: TVM integration (tilelang_hostcg.tvm)\n" in loaded.stdout, loaded.stdout
