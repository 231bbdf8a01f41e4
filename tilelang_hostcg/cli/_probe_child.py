"""The process of ``check``'s probe build (:mod:`._probe_process` starts it and judges what it says): it
imports the compiler as a program of the environment does, builds the probe
(:func:`~tilelang_hostcg.clients._probe.probe`) and says on its report pipe, one JSON line each, what it
is about to do, each codegen or hook it is about to call and how that call ended (with what it wrote to
stdout and stderr meanwhile: both are files ``check`` gave it), then the result."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from ..clients import Probe, error_line, probe
from ..core import CODEGEN_GROUP, HOOK_GROUP, HostCodegenHook, PluginWarning, is_core
from ..registry import capture
from ._output import without_tvm_guess
from ._probe_process import package_folder

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..clients import Client
    from ..registry import Registration

IMPORTING = "importing the compiler"
BUILDING = "building the probe"


class Reporter:
    """Writes the report on descriptor ``fd``, a line at a time, before each step it tells of."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, event: str, **fields: Any) -> None:
        """One line: ``{"event": event, **fields}``."""
        data = (json.dumps({"event": event, **fields}) + "\n").encode()
        while data:
            data = data[os.write(self.fd, data):]

    @contextlib.contextmanager
    def calling(self, reg: Registration) -> Iterator[None]:
        """Around one call of a codegen's or hook's ``lower``: says what is called, then how it ended."""
        origin = reg.origin
        self.send("call", group=HOOK_GROUP if isinstance(reg.obj, HostCodegenHook) else CODEGEN_GROUP,
                  kind=reg.kind, name=reg.name, distribution=origin.distribution, version=origin.version,
                  entry_point=origin.entry_point, plugin=is_plugin(reg))
        before = _sizes()
        try:
            yield
        except BaseException as exc:
            self.send("raise", error=error_line(exc), **_written(before))
            raise
        self.send("return", **_written(before))


def is_plugin(reg: Registration) -> bool:
    """Whether ``reg`` is a third-party plugin's: from an entry point, not the core's, not a default."""
    return not reg.origin.in_code and not is_core(reg.origin.distribution) and not reg.default


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


def _sizes() -> tuple[int, int]:
    """How much descriptors 1 and 2 (files) hold now."""
    _flush()
    sizes = []
    for fd in (1, 2):
        try:
            sizes.append(os.fstat(fd).st_size)
        except OSError:
            sizes.append(0)
    return sizes[0], sizes[1]


def _written(before: tuple[int, int]) -> dict[str, int]:
    """``{"stdout": n, "stderr": n}``: the bytes written to descriptors 1 and 2 since ``before`` (not TVM's
    CUDA-architecture guess)."""
    now = _sizes()
    counts = []
    for fd, start, end in zip((1, 2), before, now, strict=True):
        try:
            counts.append(len(without_tvm_guess(os.pread(fd, end - start, start))) if end > start else 0)
        except OSError:  # not a file after all: the size is all there is
            counts.append(max(end - start, 0))
    return {"stdout": counts[0], "stderr": counts[1]}


def _client(reporter: Reporter) -> Client | None:
    """Import the compiler as a program does and watch the registries its builds use."""
    reporter.send("stage", stage=IMPORTING)
    from ..environment import tvm_document
    from ._client import client_for
    client = client_for(tvm_document().get("provider"))
    if client is None:
        return None
    from .. import default_registry
    for registry in {id(r): r for r in (default_registry(), getattr(client.state, "registry", None)) if r}.values():
        registry.watch_calls(reporter.calling)
    return client


def _build(reporter: Reporter, client: Client | None) -> Probe | None:
    """Build the probe."""
    if client is None:
        return None
    reporter.send("stage", stage=BUILDING)
    return probe(client)


def _shown(client: Client | None) -> str | None:
    """What the build showed of ``client``'s routes (which it missed, and who holds it), where the build
    decided; else ``None``."""
    if client is None:
        return None
    from ..clients import routing
    answer = routing(client)
    return answer.reason if answer.by_build else None


def main(fd: int) -> None:
    """Build the probe and report; then end at once (the interpreter's teardown is no part of the build)."""
    reporter = Reporter(fd)
    reporter.send("hello", package=package_folder())
    with capture([]):  # the import and activation: check's own process did the same, and told what it gave
        client = _client(reporter)
    warned: list[PluginWarning] = []
    with capture(warned):  # the build's: plugin warnings are told (in check's document), never raised
        found = _build(reporter, client)
    result = None if found is None else {
        "called": found.called, "text": found.text, "seconds": found.seconds, "hints": list(found.hints),
        "error": found.failure.error if found.failure is not None else None, "shown": _shown(client)}
    reporter.send("result", probe=result, warnings=[[str(w), w.code, list(w.facts)] for w in warned])
    _flush()
    os._exit(0)
