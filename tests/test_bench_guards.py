"""The benchmark's guards follow one rule: a figure whose measured spread holds the limit
is "within noise", said as such; otherwise PASS at or under the limit, MISS over it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("hostcg_bench", BENCHMARKS / "bench.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.path.remove(str(BENCHMARKS))


@pytest.mark.parametrize(("figure", "samples", "verdict"), [
    (1.009, [0.992, 0.998, 1.004, 1.009, 1.011, 1.015, 1.02], "NOISE"),  # under, spread holds 1.01
    (1.033, [0.99, 1.0, 1.03, 1.033, 1.04, 1.05], "NOISE"),  # over, and so does its spread
    (1.033, [1.006, 1.02, 1.03, 1.033, 1.04, 1.05], "MISS"),  # over, and its spread is too
    (0.992, [0.97, 0.98, 0.99, 0.992, 1.0], "PASS"),
    (1.10, [1.05, 1.08, 1.1, 1.12, 1.2], "MISS"),
    (1.0, [1.0], "PASS"),  # one sample: no spread, judged by the figure alone
    (1.02, [1.02], "MISS"),
])
def test_one_rule_for_every_guard(bench, figure, samples, verdict):
    assert bench._verdict(figure, 1.01, samples)[0] == verdict


def test_a_guard_prints_its_spread_and_says_within_noise(bench, monkeypatch):
    monkeypatch.setattr(bench, "TARGETS", [])
    bench._guard("compile", 1.009, 1.01, [0.992, 0.998, 1.004, 1.009, 1.011, 1.015, 1.02])
    bench._guard("build", 0.992, 1.02, [0.97, 0.98, 0.99, 0.992, 1.0])
    bench._guard("start-up", 0.2, 0.5, [0.1, 0.2, 0.3], unit=" ms", holds=False, broken="it imported tvm")
    (name, verdict, detail), build, startup = bench.TARGETS
    assert (name, verdict) == ("compile", "NOISE")
    assert "1.009x (target <= 1.01x; spread 1.001-1.013x (quartiles of 7): within noise" in detail
    assert build[1] == "PASS" and "spread 0.980-0.992x" in build[2]
    assert startup[1] == "MISS" and "it imported tvm" in startup[2]  # a condition beside the figure
