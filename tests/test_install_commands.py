"""The install commands the documents show work from a checkout, exactly as written.

Every ``pip`` line of a ``bash`` block in ``README.md``, ``docs/tilelang.md`` and the
first-party plugins' READMEs names only what a checkout holds (or what is on the index
already): the packages are not published yet, and a command naming them on the index
would fail. The slow tests run those lines from the root of a copy of the checkout: the
plugins' in an environment without the core, the TileLang ones in a TileLang 0.1.15 environment,
which must not change otherwise. ``python -m build`` makes a wheel and an sdist of the
core and of each first-party plugin that ``twine check --strict`` passes.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from .test_docs import GuideEnv, own_environ
from .tilelang_env import PLUGINS, TileLangEnvs, params

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```bash\n(.*?)^```$", re.DOTALL | re.MULTILINE)
DOCUMENTS = ("README.md", "docs/tilelang.md", *(f"plugins/{name}/README.md" for name in PLUGINS))
PUBLISHED = {"pytest"}
"""What the commands may take from the index by name (the rest comes from the checkout)."""


def pip_lines(document: str) -> list[list[str]]:
    """The ``pip`` commands of ``document``'s bash blocks, split as a shell splits them."""
    text = (ROOT / document).read_text(encoding="utf-8")
    lines = [shlex.split(line, comments=True) for block in FENCE.findall(text)
             for line in block.splitlines()]
    return [argv for argv in lines if argv and argv[0] == "pip"]


def test_every_install_command_shown_names_what_a_checkout_has() -> None:
    for document in DOCUMENTS:
        commands = pip_lines(document)
        assert commands, f"{document} shows no install command"
        for argv in commands:
            assert argv[1] == "install", (document, argv)
            names = [arg for arg in argv[2:] if not arg.startswith("-")]
            local = [arg for arg in names if arg.startswith(".")]
            assert all((ROOT / arg).is_dir() for arg in local), (document, argv)
            assert set(names) - set(local) <= PUBLISHED, (document, argv)


INLINE_PIP = re.compile(r"`(pip install [^`]*)`")


def test_an_install_line_naming_our_packages_on_the_index_says_it_works_once_published() -> None:
    """An install line in the text (not a ``bash`` block) may name our packages as the index will
    have them, in a paragraph that says it works once they are published."""
    documents = (*DOCUMENTS, "docs/authoring.md", "docs/tvm.md")
    found = []
    for document in documents:
        for paragraph in (ROOT / document).read_text(encoding="utf-8").split("\n\n"):
            for line in INLINE_PIP.findall(paragraph.replace("\n", " ")):
                names = [arg for arg in shlex.split(line)[2:] if not arg.startswith((".", "-"))]
                if any(name.startswith("tilelang-hostcg") for name in names):
                    found.append(line)
                    assert "published" in paragraph, (document, line)
    assert "pip install 'tilelang-hostcg[tilelang]'" in found  # docs/tilelang.md's extra among them


def copy_of_the_checkout(dest: Path) -> Path:
    """The checkout's sources in ``dest`` (no virtual environments, no build output)."""
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
        ".git", ".venv*", "__pycache__", "*.egg-info", "build", "dist", ".*_cache",
        ".hypothesis"))
    return dest


def run_pip_lines(env: GuideEnv, document: str, cwd: Path) -> None:
    for argv in pip_lines(document):
        proc = env.run("-m", "pip", "--disable-pip-version-check", *argv[1:], cwd=cwd)
        assert proc.returncode == 0, f"{document}: {shlex.join(argv)}\n{proc.stdout}\n{proc.stderr}"


def fresh_env(path: Path) -> GuideEnv:
    venv.EnvBuilder(with_pip=True).create(path)
    return GuideEnv(path, own_environ(path))


@pytest.mark.slow
def test_each_plugin_readmes_commands_install_it_where_the_core_is_not_installed(
        tmp_path: Path) -> None:
    checkout = copy_of_the_checkout(tmp_path / "checkout")
    env = fresh_env(tmp_path / "venv")
    for plugin in PLUGINS:
        assert "tilelang-hostcg" not in env.installed()
        run_pip_lines(env, f"plugins/{plugin}/README.md", checkout)
        installed = env.installed()
        assert {"tilelang-hostcg", plugin} <= set(installed), (plugin, installed)
        assert "No broken requirements found." in env.pip("check")
        env.pip("uninstall", "-q", "-y", "tilelang-hostcg", plugin)


@pytest.fixture(params=params("0.1.15"))
def tilelang_env(request: pytest.FixtureRequest, tilelang_envs: TileLangEnvs) -> Iterator[GuideEnv]:
    env = tilelang_envs[request.param].env
    env.pip("uninstall", "-q", "-y", "tilelang-hostcg")  # the commands install the core too
    yield GuideEnv(env.path, env.environ)
    env.pip("uninstall", "-q", "-y", "tilelang-hostcg-stamp")
    tilelang_envs.restore(request.param)


@pytest.mark.slow
@pytest.mark.tilelang
@pytest.mark.parametrize("document", ["README.md", "docs/tilelang.md"])
def test_the_tilelang_install_commands_change_no_other_package(
        document: str, tilelang_env: GuideEnv, tmp_path: Path) -> None:
    checkout = copy_of_the_checkout(tmp_path / "checkout")
    before = tilelang_env.installed()
    run_pip_lines(tilelang_env, document, checkout)
    after = tilelang_env.installed()
    changed = {name: (before.get(name), after.get(name)) for name in before.keys() | after.keys()
               if before.get(name) != after.get(name)}
    # packaging, the core's one dependency, may be added where missing; nothing installed changes
    assert set(changed) - {"packaging"} == {"tilelang-hostcg", "tilelang-hostcg-stamp"}, changed
    assert changed.get("packaging", (None, ""))[0] is None, changed
    assert "No broken requirements found." in tilelang_env.pip("check")
    listed = tilelang_env.command("list", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "tilelang-hostcg-stamp" in json.dumps(json.loads(listed.stdout))
    proc = tilelang_env.python_run("import tilelang; print(tilelang.__version__)")
    assert proc.returncode == 0 and "0.1.15" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("project", [".", *(f"plugins/{name}" for name in PLUGINS)])
def test_build_makes_a_wheel_and_an_sdist_that_twine_accepts(project: str, tmp_path: Path) -> None:
    source = copy_of_the_checkout(tmp_path / "checkout") / project
    dist = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(source)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    built = sorted(p.name for p in dist.iterdir())
    assert [name.endswith(".tar.gz") for name in built].count(True) == 1, built
    assert [name.endswith(".whl") for name in built].count(True) == 1, built
    proc = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                           *map(str, dist.iterdir())], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def setup_commands() -> list[str]:
    """The commands of the README's Set-up block (its first bash block), comments left out."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = text[text.index("\n## Set-up\n"):]
    block = FENCE.search(setup)
    assert block is not None, "README's Set-up shows no bash block"
    return [shlex.join(argv) for argv in (shlex.split(line, comments=True) for line in block[1].splitlines())
            if argv]


def test_the_readmes_setup_is_two_commands() -> None:
    main_job, tests = setup_commands()
    assert main_job == "bash examples/quickstart.sh", main_job
    assert tests == "bash .ci/run", tests


@pytest.mark.slow
def test_the_readmes_main_job_runs_as_written(tmp_path: Path) -> None:
    """Set-up step 1, word for word, by bash from the root of a copy of the checkout (no
    virtual environment in it: the venv it makes is fresh; no ``tests/``: the examples
    need none of it), with the environment of a user's shell: none of this run's
    controls, paths or virtual environment."""
    main_job = setup_commands()[0]
    checkout = copy_of_the_checkout(tmp_path / "checkout")
    shutil.rmtree(checkout / "tests")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TILELANG_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg-cache")  # pip's cache stays (PIP_CACHE_DIR or ~)
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", main_job], cwd=checkout, env=env,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-4000:]
    out = proc.stdout
    for plugin in ("tilelang-hostcg-cuda", "tilelang-hostcg-rocm", "tilelang-hostcg-template"):
        assert plugin in out, plugin  # installed, and listed
    # The plugins turn TVM's integration on: TVM's own codegens answer for llvm and c from the start.
    for line in ("host 'llvm' via 'apache-tvm-llvm': ran on the CPU, result correct",
                 "host 'c' via 'apache-tvm-c': ran on the CPU, result correct",
                 "cuda device + llvm host: host module 'llvm', device modules ['cuda']",
                 "cuda device + cuda_host host: one CUDA C++ translation unit"):
        assert line in out, (line, out[-3000:])
    assert "skipped" not in out, out[-3000:]
    assert out.count("Host codegens (entry-point group") == 1, out[-3000:]  # listed once
    assert (checkout / ".venv-main" / "bin" / "tilelang-hostcg").exists()


def test_the_readmes_main_job_installs_every_plugin_an_example_needs() -> None:
    script = (ROOT / shlex.split(setup_commands()[0])[1]).read_text(encoding="utf-8")
    installed = set(re.findall(r"\bplugins/([\w-]+)", script))
    for example in sorted((ROOT / "examples").glob("*.py")):
        needed = set(re.findall(r"pip install \.?/?plugins/([\w-]+)", example.read_text()))
        assert needed <= installed, (example.name, needed - installed)
    assert "tilelang-hostcg-template" in installed  # examples/template_plugin.py's
