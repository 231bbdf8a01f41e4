#!/usr/bin/env bash
# The main job, from a checkout: the core with apache-tvm and the first-party plugins in a
# fresh virtual environment (.venv-main), the installed plugins listed, then real kernels'
# host code built through the registry (examples/quickstart.py).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-main
# pip 23 does not see an editable install with extras as providing the tilelang-hostcg
# that the plugins require: a newer pip first.
.venv-main/bin/python -m pip install -q --upgrade pip
# The plugins the examples use; the plugins pin no TVM, .[tvm] brings apache-tvm.
.venv-main/bin/python -m pip install -q -e ".[tvm]" plugins/tilelang-hostcg-cuda \
    plugins/tilelang-hostcg-rocm plugins/tilelang-hostcg-template
.venv-main/bin/tilelang-hostcg list
.venv-main/bin/python examples/quickstart.py
