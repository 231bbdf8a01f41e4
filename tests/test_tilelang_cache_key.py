"""TileLang's kernel cache key is a function of the installed set and the kernel's targets,
never of what a process happened to load first (no TileLang needed: the key's plugin
part is :func:`tilelang_hostcg.tilelang.plugin_fingerprint`)."""

from __future__ import annotations

import pytest

from tilelang_hostcg.testing import PluginEnvironment

from .plugin_factory import Plugin, install, module

pytestmark = pytest.mark.slow

# A plugin whose module, once imported, registers one more lazy module for its kind: the
# registry gains a source when the plugin loads.
PLUGIN = Plugin("key-plugin", "1.0", codegens={"c": "hcgt_key.first"}, hooks={"cuda": "hcgt_key.hooks"},
                files={
    "hcgt_key/__init__.py": "",
    "hcgt_key/first.py": module("""
        hc.register_host_codegen("c", _codegen("key-first", priority=3))
        hc.register_lazy_host_codegen("c", "hcgt_key.second")
    """),
    "hcgt_key/second.py": module("""
        hc.register_host_codegen("c", _codegen("key-second", priority=1))
    """),
    "hcgt_key/hooks.py": module("""
        hc.register_host_codegen_hook("cuda", _hook("key-hook"))
    """),
})

FINGERPRINT = """
import json
import tilelang_hostcg
from tilelang_hostcg.tilelang import plugin_fingerprint
from tvm.target import Target

device = Target({"kind": "cuda", "arch": "sm_80"}, host="c")
if FIRST:  # another load order: the plugin's kinds are used before the key is made
    tilelang_hostcg.resolve_host_codegen(Target("c"))
    tilelang_hostcg.default_registry().matching_hooks(device)
sources = len(tilelang_hostcg.default_registry().sources())
print(json.dumps({"key": plugin_fingerprint(device), "sources_before": sources,
                  "sources_after": len(tilelang_hostcg.default_registry().sources())}))
"""


def test_the_key_does_not_depend_on_what_was_loaded_first(tmp_path):
    env = PluginEnvironment(tmp_path / "venv")
    install(env, tmp_path, [PLUGIN])
    key_first = env.run_json(FINGERPRINT.replace("FIRST", "False"))
    used_first = env.run_json(FINGERPRINT.replace("FIRST", "True"))
    # The registry's sources differ between the two processes when the key is made ...
    assert used_first["sources_before"] == key_first["sources_before"] + 1
    assert key_first["sources_after"] == used_first["sources_after"]
    # ... the key does not.
    assert key_first["key"] == used_first["key"]
    key = key_first["key"]
    assert key["third_party"] and len(key["fingerprint"]) == 16
    assert key["codegen"][:4] == ["key-plugin", "1.0", "c = hcgt_key.first", "key-first"]
    assert [hook[3] for hook in key["hooks"]] == ["key-hook"]
    # What decides host code still counts: with the plugin's c codegen disabled, and with its cuda
    # hook disabled, two other keys (the controls that decided among them).
    off = env.run_json(FINGERPRINT.replace("FIRST", "False"), env={"TILELANG_HOSTCG_DISABLE": "key-plugin:c"})
    hooks_off = env.run_json(FINGERPRINT.replace("FIRST", "False"), env={"TILELANG_HOSTCG_DISABLE": "key-plugin:cuda"})
    assert len({key["fingerprint"], off["key"]["fingerprint"], hooks_off["key"]["fingerprint"]}) == 3
    assert off["key"]["controls"] == ["TILELANG_HOSTCG_DISABLE=key-plugin:c"]
    # With the whole plugin off nothing third-party runs: no fingerprint, TileLang's own keys.
    gone = env.run_json(FINGERPRINT.replace("FIRST", "False"), env={"TILELANG_HOSTCG_DISABLE": "key-plugin"})
    assert gone["key"]["third_party"] is False and gone["key"]["fingerprint"] is None
