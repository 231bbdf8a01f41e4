"""Copying the template as its README says: the commands of its "Make it yours" block run
as written (copy, rename, ``pip install .``, the copy's own tests, ``pip uninstall``) in a
throwaway environment that has the template installed too. The copy names nothing of the
template, building leaves nothing in either folder, the copy's wheel ships its own package
alone, the two plugins load side by side, and uninstalling the copy leaves the template
whole. A copy renamed only in part clashes, and the error names both distributions and
says which one to rename.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .conftest import Environments

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = "tilelang-hostcg-template"
README = ROOT / "plugins" / TEMPLATE / "README.md"
COPY = "tilelang-hostcg-musa"
LEFTOVERS = ("build", "dist", "*.egg-info")
PROBE = """
    import json
    import tilelang_hostcg as hostcg
    from tvm.target import Target
    reg = hostcg.default_registry()
    print(json.dumps({
        "acme": hostcg.resolve_host_codegen(Target({"kind": "llvm", "mtriple": "x86_64-acme-linux-gnu"})).name,
        "musa": hostcg.resolve_host_codegen(Target({"kind": "llvm", "mtriple": "x86_64-musa-linux-gnu"})).name,
        "ext_dev": sorted(r.name for r in reg.matching_hooks(Target("ext_dev"))),
    }))
"""


def rename_block() -> str:
    """The bash block of the README's "Make it yours" (indented in its list item)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Make it yours"):]
    match = re.search(r"^( *)```bash\n(.*?)^\1```$", section, re.DOTALL | re.MULTILINE)
    assert match, "the README's 'Make it yours' shows no bash block"
    return textwrap.dedent(match[2])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts and ".pytest_cache" not in p.parts}


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for pattern in LEFTOVERS
                  for p in folder.rglob(pattern))


@dataclass
class Walked:
    env: PluginEnvironment
    plugins: Path
    proc: subprocess.CompletedProcess[str]
    template_before: dict[str, bytes]

    @property
    def copy(self) -> Path:
        return self.plugins / COPY


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory, environments: Environments,
           first_party_wheels: dict[str, Path]) -> Walked:
    root = tmp_path_factory.mktemp("template-copy")
    plugins = root / "plugins"
    shutil.copytree(ROOT / "plugins" / TEMPLATE, plugins / TEMPLATE,
                    ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    env = environments.new("template-copy")
    # The guide's order: the stamp plugin (the README's install), then the template: the copy's
    # own tests run beside the stamp plugin's llvm codegen, which serves every llvm host.
    env.pip("install", "-q", "--no-deps", "--no-index", str(first_party_wheels[TEMPLATE]),
            str(first_party_wheels["tilelang-hostcg-stamp"]))
    shims = root / "bin"  # `pip` and `python` as a user's activated environment has them
    shims.mkdir()
    for name, argv in (("python", ""), ("pip", " -m pip")):
        (shims / name).write_text(f'#!/bin/sh\nexec "{env.python}"{argv} "$@"\n')
        (shims / name).chmod(0o755)
    before = _files(plugins / TEMPLATE)
    environ = env.environ()
    environ["PATH"] = f"{shims}:{environ['PATH']}"
    proc = subprocess.run(["bash", "-euo", "pipefail", "-c", rename_block()], cwd=plugins,
                          env=environ, capture_output=True, text=True, timeout=900)
    return Walked(env, plugins, proc, before)


def test_the_readmes_commands_run_as_written(walked: Walked) -> None:
    out = walked.proc.stdout + walked.proc.stderr
    assert walked.proc.returncode == 0, out[-6000:]
    summary = re.search(r"(\d+) passed", out)
    assert summary and int(summary[1]) >= 5, out[-3000:]  # the copy's own tests, every one
    assert not re.search(r"\d+ (failed|skipped|error)", out), out[-3000:]
    assert COPY not in walked.env.pip("list", "--format=freeze").stdout  # uninstalled at the end


def test_the_copy_names_nothing_of_the_template(walked: Walked) -> None:
    assert (walked.copy / "tilelang_hostcg_musa" / "codegen.py").is_file()
    left = {path: word for path, data in _files(walked.copy).items()
            for word in ("tilelang_hostcg_template", TEMPLATE, "acme")
            if word in data.decode(errors="replace").lower()}
    assert left == {}, left
    assert not list(walked.copy.rglob("*template*")), list(walked.copy.rglob("*template*"))


def test_building_leaves_nothing_in_either_folder(walked: Walked) -> None:
    assert _leftovers(walked.copy) == []
    assert _leftovers(walked.plugins / TEMPLATE) == []
    assert _files(walked.plugins / TEMPLATE) == walked.template_before


def test_the_copys_wheel_ships_its_own_package_alone(walked: Walked, tmp_path: Path) -> None:
    # The folder was built and installed from already: what a newcomer copies next.
    walked.env.pip("wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path),
                   str(walked.copy))
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        top = {name.split("/")[0] for name in archive.namelist()}
    assert top == {"tilelang_hostcg_musa", "tilelang_hostcg_musa-0.1.0.dist-info"}, top
    assert _leftovers(walked.copy) == []


def test_uninstalling_the_copy_leaves_the_template_whole(walked: Walked) -> None:
    package = walked.env.site_packages / "tilelang_hostcg_template"
    assert sorted(p.name for p in package.glob("*.py")) == ["__init__.py", "codegen.py", "hooks.py"]
    proc = walked.env.python_run("""
        from tilelang_hostcg.testing import check_plugin
        print(check_plugin("tilelang-hostcg-template"))
    """)
    assert proc.returncode == 0 and "['ext_dev', 'llvm']" in proc.stdout, proc.stdout + proc.stderr


def test_the_template_and_its_copy_load_side_by_side(walked: Walked) -> None:
    walked.env.install(walked.copy)
    try:
        proc = walked.env.command("check", "--strict", "--require-hook", "ext_dev")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert walked.env.run_json(PROBE) == {"acme": "acme_llvm", "musa": "musa_llvm",
                                              "ext_dev": ["acme_device", "musa_device"]}
    finally:
        walked.env.uninstall(COPY)


def test_a_copy_renamed_in_part_clashes_and_the_error_says_which_to_rename(
        walked: Walked, tmp_path: Path) -> None:
    half = tmp_path / "tilelang-hostcg-half"
    shutil.copytree(walked.plugins / TEMPLATE, half)
    (half / "tilelang_hostcg_template").rename(half / "tilelang_hostcg_half")
    for path in [half / "pyproject.toml", *half.rglob("*.py")]:  # the names, not acme_*
        path.write_text(path.read_text().replace(TEMPLATE, "tilelang-hostcg-half")
                        .replace("tilelang_hostcg_template", "tilelang_hostcg_half"))
    walked.env.install(half)
    try:
        proc = walked.env.command("check", "--json")
        assert proc.returncode != 0, proc.stdout
        problems = json.loads(proc.stdout)["problems"]
        assert {p["code"] for p in problems} == {"broken"}, problems
        for problem in problems:  # the codegen's clash and the hook's
            message = problem["message"]
            assert TEMPLATE in message and "tilelang-hostcg-half" in message, message
            assert "rename it in the one you are writing" in message, message
            assert "'tilelang-hostcg-half' was installed last" in message, message
            assert "fix or reinstall" not in message, message
    finally:
        walked.env.uninstall("tilelang-hostcg-half")


def test_the_templates_tests_pass_in_a_fresh_venv(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
                                                  first_party_wheels: dict[str, Path]) -> None:
    """A fresh ``python3 -m venv`` (its own pip and setuptools, no hatchling, no pytest) with the stamp
    plugin installed, as the README's install has it: the "Make it yours" block runs as written (it
    brings pytest itself: ``.venv-main`` has none) and the copy's tests pass; then the commands of
    "Test it", from a copy of the template, and its own tests pass, ``plugin_environment`` included (it
    builds with hatchling from the index there)."""
    import venv
    from importlib.metadata import version

    from .test_docs import GuideEnv, own_environ
    from .tilelang_env import session_wheels

    path = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(path)
    env = GuideEnv(path, own_environ(path))
    folder = tmp_path / TEMPLATE
    shutil.copytree(ROOT / "plugins" / TEMPLATE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    project = session_wheels(tmp_path_factory).project
    env.pip("install", "-q", f"apache-tvm=={version('apache-tvm')}", str(project),
            str(first_party_wheels["tilelang-hostcg-stamp"]))
    assert "hatchling" not in env.installed() and "pytest" not in env.installed()
    shims = tmp_path / "bin"  # `pip` and `python` as the activated environment has them
    shims.mkdir()
    for name, argv in (("python", ""), ("pip", " -m pip")):
        (shims / name).write_text(f'#!/bin/sh\nexec "{env.python}"{argv} "$@"\n')
        (shims / name).chmod(0o755)
    environ = env.environ()
    environ["PATH"] = f"{shims}:{environ.get('PATH', '')}"
    walk = subprocess.run(["bash", "-euo", "pipefail", "-c", rename_block()], cwd=tmp_path, env=environ,
                          capture_output=True, text=True, timeout=900)
    assert walk.returncode == 0, walk.stdout[-4000:] + walk.stderr[-2000:]
    assert re.search(r"\b5 passed\b", walk.stdout), walk.stdout[-2000:]
    env.pip("install", "-q", "-e", str(folder), "pytest")
    proc = env.run("-m", "pytest", "-q", "-p", "no:cacheprovider", "tests", cwd=folder)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert re.search(r"\b5 passed\b", proc.stdout), proc.stdout[-2000:]
    assert _leftovers(folder) == []
