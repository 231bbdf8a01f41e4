"""Which TileLang, at the edges (apache-tvm environment, fresh interpreters): a ``None`` in
``sys.modules`` is no import; a package named ``tilelang`` without TileLang's layout (a user's own
package, a stub in a zip) is left alone by the library, the commands and the routing alike; plain
``list`` says ``null`` for what it cannot know."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from tilelang_hostcg.environment._finding import find

pytestmark = pytest.mark.skipif(find("tilelang") is not None,
                                reason="this environment has a TileLang build of its own")

ROOT = Path(__file__).resolve().parent.parent

PLUGIN = "hcg_edges_plugin"


def _env(pythonpath: list[Path] = ()) -> dict[str, str]:  # type: ignore[assignment]
    env = {k: v for k, v in os.environ.items() if not k.startswith("TILELANG_HOSTCG_")}
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(map(str, pythonpath))
    return env


def _plugin(site: Path) -> Path:
    """A third-party plugin installed in ``site``: an ``llvm`` codegen that counts its builds."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{PLUGIN}.py").write_text(textwrap.dedent("""
        import tilelang_hostcg as h
        BUILDS = []

        def _build(mod, target):
            BUILDS.append(1)
            import tvm
            return tvm.get_global_func("target.build.llvm")(mod, target)

        CODEGEN = h.HostCodegen("edges-llvm", _build, priority=5)
    """))
    info = site / "hcg_edges_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hcg-edges-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[tilelang.host_codegen]\nllvm = {PLUGIN}:CODEGEN\n")
    return site


def _python(code: str, cwd: Path, env: dict[str, str]) -> dict[str, object]:
    script = cwd / "program.py"  # TVMScript reads its source
    script.write_text(textwrap.dedent(code))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


COMPILE = """
import json, sys
{before}
import tvm
from tvm.script import tirx as T

@T.prim_func
def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    for i in range(4):
        B[i] = A[i] + T.float32(1)

{install}
import {plugin}
tvm.compile(add, target="llvm")
import tilelang_hostcg.tvm as integration
print(json.dumps({{"builds": len({plugin}.BUILDS), "installed": integration.is_installed(),
                  "tilelang": repr(sys.modules.get("tilelang", "absent"))[:40]}}))
"""


@pytest.mark.parametrize("how", ["activation", "install"])
def test_a_blocked_tilelang_is_not_imported_and_tvm_is_routed(how: str, tmp_path: Path) -> None:
    site = _plugin(tmp_path / "site")
    out = _python(COMPILE.format(before='sys.modules["tilelang"] = None  # blocked, as a sitecustomize does',
                                 install="tilelang_hostcg_tvm = __import__('tilelang_hostcg.tvm').tvm\n"
                                         "tilelang_hostcg_tvm.install()" if how == "install" else "",
                                 plugin=PLUGIN), tmp_path, _env([site]))
    assert out == {"builds": 1, "installed": True, "tilelang": "None"}


USER_PACKAGE = {"__init__.py": "IMPORTED = True\n", "models.py": "", "engine/__init__.py": ""}


def _user_tilelang(where: Path, how: str) -> Path:
    """A package named ``tilelang`` that is not TileLang: a user's project folder, or a stub in a zip."""
    if how == "project":
        for name, text in USER_PACKAGE.items():
            (where / "tilelang" / name).parent.mkdir(parents=True, exist_ok=True)
            (where / "tilelang" / name).write_text(text)
        return where
    where.mkdir(parents=True, exist_ok=True)
    archive = where / "stub.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for name, text in USER_PACKAGE.items():
            zf.writestr(f"tilelang/{name}", text)
    return archive


@pytest.mark.parametrize("how", ["project", "zip"])
def test_a_tilelang_without_the_layout_is_left_alone_by_the_library(how: str, tmp_path: Path) -> None:
    path = _user_tilelang(tmp_path, how)
    out = _python("""
        import json, sys
        import tilelang_hostcg
        from tilelang_hostcg.environment._compiler import describe_tvm
        name = tilelang_hostcg.resolve_host_codegen("llvm").name
        print(json.dumps({"name": name, "tilelang": "tilelang" in sys.modules, "tvm": describe_tvm()}))
    """, tmp_path, _env([path]))
    assert out["name"] == "llvm" and out["tilelang"] is False, out
    assert str(out["tvm"]).startswith("apache-tvm "), out


@pytest.mark.parametrize("how", ["project", "zip"])
def test_a_program_importing_its_own_tilelang_is_routed_and_check_agrees(how: str, tmp_path: Path) -> None:
    path = _user_tilelang(tmp_path / "user", how) if how == "zip" else _user_tilelang(tmp_path, how)
    site = _plugin(tmp_path / "site")
    env = _env([path, site])
    out = _python(COMPILE.format(before="import tilelang  # the user's own package", install="", plugin=PLUGIN),
                  tmp_path, env)
    assert out["builds"] == 1 and out["installed"] is True, out
    proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "--json", "check"], capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["tvm"]["provider"] == "apache-tvm", doc["tvm"]
    assert doc["client"]["client"] == "tvm" and doc["client"]["routed"] is True, doc["client"]


def test_plain_list_says_null_where_it_cannot_know(tmp_path: Path) -> None:
    """No TVM on ``sys.path`` (one an import hook serves shows with ``list --load``): plain ``list``
    imports nothing, so whether builds are routed is not known: ``null``, never ``false``."""
    out = _python("""
        import json, sys
        from tilelang_hostcg.cli._client import client_document
        doc = client_document({"provider": None, "describe": "no TVM on sys.path"})
        print(json.dumps({**doc, "tvm": "tvm" in sys.modules}))
    """, tmp_path, _env())
    assert out["tvm"] is False and out["predicted"] is True, out
    assert out["routed"] is None and out["active"] is None, out


REDIRECT = '''
import importlib.util, sys

class ScikitBuildRedirectingFinder:
    """As scikit-build-core's editable redirect: serves the package from its source folder."""

    def __init__(self, known):
        self.known = known

    def find_spec(self, fullname, path=None, target=None):
        if fullname in self.known:
            init = self.known[fullname]
            return importlib.util.spec_from_file_location(fullname, init,
                                                          submodule_search_locations=[init.rpartition("/")[0]])
        return None

sys.meta_path.insert(0, ScikitBuildRedirectingFinder({"tilelang": SOURCE + "/tilelang/__init__.py"}))
'''


@pytest.mark.parametrize("imports", [True, False])
def test_a_tilelang_editable_install_beside_apache_tvm_is_answered_for_tilelang(imports: bool,
                                                                              tmp_path: Path) -> None:
    """TileLang installed with ``pip install -e .`` (scikit-build-core's redirecting finder: no folder on
    ``sys.path`` holds ``tilelang``) and apache-tvm beside it: ``check`` answers for TileLang with the
    ``tvm-conflict`` repair (or, where TileLang cannot be imported, the repair of TileLang's environment),
    never advising to reinstall apache-tvm."""
    source, site, boot = tmp_path / "checkout", tmp_path / "site", tmp_path / "boot"
    (source / "tilelang" / "engine").mkdir(parents=True)
    (source / "tilelang" / "__init__.py").write_text(
        "import tvm\n" if imports else "raise ImportError('libtilelang.so: undefined symbol TVMFFIEnvGetStream')\n")
    (source / "tilelang" / "engine" / "__init__.py").write_text("")
    (source / "tilelang" / "engine" / "lower.py").write_text("")
    info = site / "tilelang-0.1.16.dev0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tilelang\nVersion: 0.1.16.dev0\n")
    (info / "direct_url.json").write_text(json.dumps({"url": source.as_uri(), "dir_info": {"editable": True}}))
    (info / "RECORD").write_text("_tilelang_editable.py,,\n_tilelang_editable.pth,,\n"
                                 "tilelang-0.1.16.dev0.dist-info/RECORD,,\n")
    (site / "_tilelang_editable.py").write_text(f"SOURCE = {str(source)!r}\n" + REDIRECT)
    (site / "_tilelang_editable.pth").write_text("import _tilelang_editable\n")
    boot.mkdir()
    (boot / "sitecustomize.py").write_text(f"import site\nsite.addsitedir({str(site)!r})\n")
    proc = subprocess.run([sys.executable, "-m", "tilelang_hostcg", "--json", "check"], capture_output=True,
                          text=True, cwd=tmp_path, env=_env([boot]), timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    if imports:
        assert proc.returncode == 1, proc.stdout + proc.stderr
        (conflict,) = [p["message"] for p in doc["problems"] if p["code"] == "tvm-conflict"]
        assert "beside TileLang (tilelang 0.1.16.dev0)" in conflict, conflict
        assert conflict.endswith("Repair it with: pip uninstall -y apache-tvm (nothing else changes)"), conflict
    else:
        assert proc.returncode == 2, proc.stdout + proc.stderr
        message = doc["error"]["message"]
        assert message.startswith("TileLang (tilelang 0.1.16.dev0) is installed"), message
        assert f"Repair it with: pip uninstall -y apache-tvm && pip install --no-deps -e '{source}'" in message, message
        assert "'apache-tvm==" not in message, message
