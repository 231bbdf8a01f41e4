"""Advice fits how a distribution was installed and what skips it, seen with real installs in a
throwaway environment: the first-party CUDA plugin from its wheel, a plugin installed from its
folder, and an editable plugin (setuptools' finder) whose entry point misnames its module.

- With ``TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD=1`` (or a ``DISABLE``), ``check --require`` and
  ``explain`` name the control that skips the installed plugin, never an install of it, and
  ``explain`` lists that control under ``controls``.
- A lock's distribution that is no longer installed is reinstalled as the lock says it was installed
  (its ``direct_url.json``, kept in the lock): from its folder, which following the advice as written
  does; where the lock kept no source, the advice says how it was installed is not known.
- "Did you mean" names the user's modules, never setuptools' ``__editable___*_finder``.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tilelang_hostcg.testing import PluginEnvironment, write_distribution

from .conftest import Environments

pytestmark = pytest.mark.slow

CUDA = "tilelang-hostcg-cuda"
AUTOLOAD_OFF = {"TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD": "1"}
REQUIRES = ["tilelang-hostcg>=0.1,<1"]


@dataclass
class Env:
    env: PluginEnvironment
    work: Path
    folder: Path  # the folder-installed plugin's source

    def run(self, *argv: str, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.env.command(*argv, env=extra, cwd=self.work)

    def json(self, *argv: str, expect: int, extra: dict[str, str] | None = None) -> Any:
        proc = self.run(*argv, "--json", extra=extra)
        assert proc.returncode == expect, proc.stdout + proc.stderr
        return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory, environments: Environments,
              first_party_wheels: dict[str, Path]) -> Env:
    root = tmp_path_factory.mktemp("advice-installed")
    env = environments.new("advice-installed")
    env.pip("install", "-q", "--no-deps", "--no-index", str(first_party_wheels[CUDA]))
    folder = write_distribution(root / "src", "hcgx-folder", "1.0", requires=REQUIRES, entry_points={
        "tilelang.host_codegen": {"c": "hcgx_folder:CODEGEN"}}, files={"hcgx_folder/__init__.py": """
            import tilelang_hostcg as hc
            CODEGEN = hc.HostCodegen("folder-c", hc.global_func_host_codegen("target.build.c"),
                                     supports_target=lambda t: False)
        """})
    editable = write_distribution(root / "src", "hcgx-newbie", "0.1.0", requires=REQUIRES, entry_points={
        "tilelang.host_codegen": {"c": "hcgx_newbie.codegenz"}}, files={
        "hcgx_newbie/__init__.py": "", "hcgx_newbie/codegen.py": "import tilelang_hostcg\n"})
    env.pip("install", "-q", "--no-deps", "--no-build-isolation", "--no-index", str(folder))
    env.pip("install", "-q", "--no-deps", "--no-build-isolation", "--no-index", "-e", str(editable))
    work = root / "work"
    work.mkdir()
    return Env(env, work, folder)


def test_with_autoload_off_check_require_names_the_control(installed: Env) -> None:
    doc = installed.json("check", "--require", "cuda_host", "--require-hook", "cuda", expect=1,
                         extra=AUTOLOAD_OFF)
    messages = {p["code"]: p["message"] for p in doc["problems"]}
    assert set(messages) == {"missing-codegen", "missing-hook"}, messages
    for message in messages.values():
        assert "TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD" in message, message
        assert f"pip install {CUDA}" not in message and "install a plugin" not in message, message
    assert f"'{CUDA}' is installed, but TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD=1 skips it" in messages[
        "missing-codegen"]


def test_with_autoload_off_explain_names_the_control_and_lists_it(installed: Env) -> None:
    doc = installed.json("explain", "cuda", "--host", "cuda_host", expect=1, extra=AUTOLOAD_OFF)
    text = json.dumps(doc)
    assert f"pip install {CUDA}" not in text, text
    assert f"'{CUDA}' is installed, but TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD=1 skips it" in text, text
    assert [c["variable"] for c in doc["controls"]] == ["TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD"], doc["controls"]


def test_a_disable_is_named_with_how_to_undo_it(installed: Env) -> None:
    # TVM's own cuda_host serves then; the control that skipped the plugin is listed.
    extra = {"TILELANG_HOSTCG_DISABLE": CUDA}
    doc = installed.json("explain", "cuda", "--host", "cuda_host", expect=0, extra=extra)
    assert f"pip install {CUDA}" not in json.dumps(doc)
    assert {(c["variable"], c["item"]) for c in doc["controls"]} == {("TILELANG_HOSTCG_DISABLE", CUDA)}
    # where nothing else serves (an isolated registry, the core's own codegens only):
    proc = installed.env.python_run(f"""
        import tilelang_hostcg as hc
        from tilelang_hostcg.discovery._planning import Controls
        from tilelang_hostcg.registry._resolution import _no_codegen_error
        from tvm.target import Target
        print(_no_codegen_error("cuda_host", Target("cuda_host"), [], [], Controls(disable=frozenset({{{CUDA!r}}}))))
    """, env=extra)
    assert proc.returncode == 0, proc.stderr
    assert f"take '{CUDA}' out of TILELANG_HOSTCG_DISABLE to use it" in proc.stdout, proc.stdout
    assert f"pip install {CUDA}" not in proc.stdout


def test_did_you_mean_names_the_users_module_in_an_editable_install(installed: Env) -> None:
    doc = installed.json("check", expect=1, extra={"TILELANG_HOSTCG_ONLY": "hcgx-newbie"})
    (problem,) = [p for p in doc["problems"] if p["distribution"] == "hcgx-newbie"]
    assert "did you mean 'hcgx_newbie.codegen'?" in problem["message"], problem["message"]
    assert "__editable__" not in problem["message"], problem["message"]
    assert "pip install --no-deps -e" in problem["message"], problem["message"]  # editable stays editable


def test_lock_advice_fits_how_the_distribution_was_installed(installed: Env, tmp_path: Path) -> None:
    lock = tmp_path / "plugins.lock"
    only = {"TILELANG_HOSTCG_ONLY": "hcgx-folder"}
    assert installed.run("lock", "-o", str(lock), extra=only).returncode == 0
    doc = json.loads(lock.read_text())
    doc["distributions"] = [{**d, "version": "0.9"} if d["name"] == "hcgx-folder" else d
                            for d in doc["distributions"]] + [{"name": "hcgx-gone", "version": "2.0"}]
    lock.write_text(json.dumps(doc))
    drift = installed.json("check", "--lock", str(lock), expect=1, extra=only)
    messages = {p["distribution"]: p["message"] for p in drift["problems"] if p["code"].startswith("lock-")}
    assert f"pip install --force-reinstall --no-deps '{installed.folder}'` (as it was installed when locked)" in (
        messages["hcgx-folder"]), messages
    assert "'hcgx-folder==0.9'" not in messages["hcgx-folder"]  # no index has it
    gone = messages["hcgx-gone"]
    assert "'hcgx-gone==2.0'` if it came from an index" in gone and "is not known" in gone, gone


def test_files_gone_from_a_folder_install_are_reinstalled_from_the_folder(installed: Env) -> None:
    """A plugin whose files another uninstall removed: its entry point is right, so no "did you mean"
    names the missing module itself; the advice reinstalls it from its folder, and following it works."""
    import shlex
    import shutil

    shutil.rmtree(installed.env.site_packages / "hcgx_folder")
    only = {"TILELANG_HOSTCG_ONLY": "hcgx-folder"}
    doc = installed.json("check", expect=1, extra=only)
    (problem,) = [p for p in doc["problems"] if p["distribution"] == "hcgx-folder"]
    message = problem["message"]
    assert "did you mean" not in message and "does not exist" not in message, message
    advice = f"pip install --force-reinstall --no-deps '{installed.folder}'"
    assert f"fix or reinstall 'hcgx-folder' ({advice})" in message, message
    installed.env.pip(*shlex.split(advice)[1:], "--no-build-isolation", "--no-index")  # as written, offline
    assert installed.json("check", expect=0, extra=only)["ok"] is True


def test_a_plugin_installed_from_a_folder_locked_then_uninstalled_comes_back_as_the_lock_says(
        installed: Env, tmp_path: Path) -> None:
    """Once the distribution is gone, only the lock remembers where it came from: the lock keeps its
    ``direct_url.json``, the advice reinstalls from that folder, and following it as written (offline:
    no index has the plugin) passes the gate again."""
    import shlex

    folder = write_distribution(tmp_path / "src", "hcgx-locked", "0.1.0", requires=REQUIRES, entry_points={
        "tilelang.host_codegen": {"c": "hcgx_locked:CODEGEN"}}, files={"hcgx_locked/__init__.py": """
            import tilelang_hostcg as hc
            CODEGEN = hc.HostCodegen("locked-c", hc.global_func_host_codegen("target.build.c"),
                                     supports_target=lambda t: False)
        """})
    installed.env.pip("install", "-q", "--no-deps", "--no-build-isolation", "--no-index", str(folder))
    only = {"TILELANG_HOSTCG_ONLY": "hcgx-locked"}
    lock = tmp_path / "plugins.lock"
    try:
        assert installed.run("lock", "-o", str(lock), extra=only).returncode == 0
        (record,) = [d for d in json.loads(lock.read_text())["distributions"] if d["name"] == "hcgx-locked"]
        assert record["direct_url"]["url"] == folder.as_uri(), record
        installed.env.uninstall("hcgx-locked")
        drift = installed.json("check", "--lock", str(lock), expect=1, extra=only)
        (problem,) = [p for p in drift["problems"] if p["distribution"] == "hcgx-locked"]
        message = problem["message"]
        assert problem["code"] == "lock-removed", problem
        advice = f"pip install --force-reinstall --no-deps '{folder}'"
        assert f"`{advice}` (as it was installed when locked)" in message, message
        assert "'hcgx-locked==0.1.0'" not in message and "is not known" not in message, message
        installed.env.pip(*shlex.split(advice)[1:], "--no-build-isolation", "--no-index")  # as written, offline
        assert installed.json("check", "--lock", str(lock), expect=0, extra=only)["ok"] is True
    finally:
        installed.env.pip("uninstall", "-q", "-y", "hcgx-locked")


ROOT = Path(__file__).resolve().parents[1]
NO_CUDA_HOST = """
import tilelang_hostcg as hc
try:
    hc.resolve_host_codegen("cuda_host")
except hc.NoHostCodegenError as exc:
    print(exc)
else:
    print("resolved:", hc.resolve_host_codegen("cuda_host").name)
"""


@pytest.mark.parametrize("core_from", ["checkout", "wheel"])
def test_a_first_party_plugin_is_advised_from_this_repository_and_the_advice_works(
        core_from: str, environments: Environments, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No index has a first-party plugin: the advice installs it from the checkout tilelang-hostcg was
    installed from (its ``direct_url.json``), else from a checkout's root; run as written (offline: the
    build backend is here), the plugin serves its kind."""
    import re
    import shlex

    from .tilelang_env import session_wheels

    env = environments.new(f"first-party-advice-{core_from}")
    if core_from == "wheel":  # over the checkout's editable install: this layer's comes first
        env.pip("install", "-q", "--no-deps", "--no-index", str(session_wheels(tmp_path_factory).project))
    proc = env.python_run(NO_CUDA_HOST, cwd=tmp_path_factory.mktemp("elsewhere"))
    message = proc.stdout.strip()
    assert proc.returncode == 0 and message.startswith("No host codegen registered"), proc.stdout + proc.stderr
    assert "pip install tilelang-hostcg-cuda" not in message, message
    (command,) = re.findall(r"`(pip install [^`]+)`", message)
    if core_from == "checkout":
        assert command == f"pip install {ROOT / 'plugins' / CUDA}", message
        assert "from the checkout tilelang-hostcg was installed from" in message, message
    else:
        assert command == f"pip install ./plugins/{CUDA}", message
        assert "in the root folder of a checkout" in message, message
    argv = [env.python, "-m", *shlex.split(command), "-q", "--no-build-isolation", "--no-index"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=env.environ(), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert env.python_run(NO_CUDA_HOST).stdout.strip() == "resolved: cuda_host"
