"""Warnings point at the user's line: the near-miss entry-point group warning, seen from a
fresh interpreter that finds a distribution advertising ``[tilelang.host_codegens]``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

USER = """\
import json, warnings
import tilelang_hostcg as hc
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    hc.resolve_host_codegen("llvm")
print(json.dumps([[str(w.message), w.filename, w.lineno] for w in caught]))
"""


def test_near_miss_group_warning_names_the_users_line(tmp_path: Path) -> None:
    site = tmp_path / "site"
    info = site / "hcgw_typo-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hcgw-typo\nVersion: 1.0\n"
                                   "Requires-Dist: tilelang-hostcg\n")
    (info / "entry_points.txt").write_text("[tilelang.host_codegens]\nllvm = hcgw_typo:CODEGEN\n")
    script = tmp_path / "user.py"
    script.write_text(USER)
    env = {**os.environ, "PYTHONPATH": str(site), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    caught = json.loads(proc.stdout.splitlines()[-1])
    near = [w for w in caught if "[tilelang.host_codegens]" in w[0]]
    assert len(near) == 1, caught
    assert near[0][1:] == [str(script), 5]  # the resolve_host_codegen line
