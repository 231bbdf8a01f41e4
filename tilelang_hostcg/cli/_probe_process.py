"""``check``'s probe build in a process of its own, so that no plugin can end ``check``, hang it or make it
pass: the same interpreter, environment and controls (:mod:`._probe_child` runs
:func:`~tilelang_hostcg.clients._probe.probe` there). The child says, one JSON line each on a pipe of its
own, what it is about to do and call, how each call ended and what the probe build showed; this module
judges only that report, the child's exit status and the time bound (:func:`judge`). A child that ends
early, runs past the bound or reports what is no report is a failed probe, never a pass."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from ..clients import ENDED, GARBLED, PRINTED, RAISED, TIMED_OUT, Probe, ProbeFailure, Running, takes_probe
from ..core import Facts, InputError, Origin, cut, shown, warn_plugin, warning_class
from ..diagnosis import uninstall
from ..discovery import ENV_DISABLE, ENV_PROBE_TIMEOUT, PROBE_TIMEOUT_DEFAULT, probe_timeout_error
from ..environment import tvm_document
from ._client import client_document, client_for
from ._output import without_tvm_guess
from ._report import Doc

if TYPE_CHECKING:
    from ..clients import Client
    from ..discovery import Controls

ProbeRun = Callable[["Client"], "Probe | None"]  # a client's probe build, run somewhere

FLAG = "--probe-timeout"
# ``-c`` puts the working directory first on ``sys.path`` (as ``''``); no program of the environment has it
# there (``python -m tilelang_hostcg`` takes it off too), so the child takes it off before it imports anything.
_BOOT = ("import sys\nif sys.path[:1] == ['']:\n    del sys.path[0]\n"
         "from tilelang_hostcg.cli._probe_child import main\nmain(int(sys.argv[1]))\n")
_REPORT_LIMIT = 1 << 20  # bytes: a report is a few lines; more is not one
STARTING = "starting its process"
_DEFAULT = "the default"


def package_folder() -> str:
    """The folder of the ``tilelang_hostcg`` package this module belongs to."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Bound(NamedTuple):
    """The time bound of the probe build: ``seconds``, and where it was ``given`` (the flag, the variable
    or the default)."""

    seconds: float
    given: str

    def describe(self) -> str:
        """``120 s (the default bound; ...)``, ``300 s (the bound --probe-timeout gives)``."""
        if self.given == _DEFAULT:
            return f"{self.seconds:g} s (the default bound; {FLAG} SECONDS or {ENV_PROBE_TIMEOUT} change it)"
        return f"{self.seconds:g} s (the bound {self.given} gives)"


DEFAULT_BOUND = Bound(PROBE_TIMEOUT_DEFAULT, _DEFAULT)


def probe_bound(flag: str | None, environ: Mapping[str, str] | None = None) -> Bound:
    """The bound ``check`` uses: ``--probe-timeout``, else ``TILELANG_HOSTCG_PROBE_TIMEOUT``, else the default.
    A value that is no bound (the variable's too, even where the flag is given) raises :class:`InputError`."""
    variable = (os.environ if environ is None else environ).get(ENV_PROBE_TIMEOUT)
    for value, given in ((variable, ENV_PROBE_TIMEOUT), (flag, FLAG)):
        error = None if value is None else probe_timeout_error(value, given)
        if error is not None:
            raise InputError(error)
    if flag is not None:
        return Bound(float(flag), FLAG)
    return DEFAULT_BOUND if variable is None else Bound(float(variable), ENV_PROBE_TIMEOUT)


def isolated_probe(bound: Bound = DEFAULT_BOUND) -> Probe:
    """Run the probe build in a child interpreter within ``bound`` and judge its report. What the child
    writes to stdout or stderr is written to stderr here afterwards (never into a document)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            lines, status, timed_out = _run_child(out, err, bound)
        except OSError as exc:
            return _failed(ProbeFailure(ENDED, f"its process could not start ({type(exc).__name__}: {exc})",
                                        stage=STARTING))
        finally:
            _pass_on(out, err)
    found = judge(lines, status, timed_out, bound)
    for text, code, facts in found.warnings:  # as if given here: the command's capture takes them
        warn_plugin(text, warning_class(code), facts=facts)
    return found


def _run_child(out: IO[bytes], err: IO[bytes], bound: Bound) -> tuple[list[bytes], int | None, bool]:
    """Start the child, read its report until it ends or the bound passes (then end it and what it
    started); the report's lines, its exit status and whether it ran past the bound."""
    if not sys.executable:
        raise OSError("this interpreter does not know its own executable (sys.executable is empty)")
    flags: Callable[[], list[str]] = getattr(subprocess, "_args_from_interpreter_flags", list)  # -W, -X, -E, -s...
    read_end, write_end = os.pipe()
    try:
        proc = subprocess.Popen([sys.executable, *flags(), "-c", _BOOT, str(write_end)], stdin=subprocess.DEVNULL,
                                stdout=out, stderr=err, pass_fds=(write_end,), start_new_session=True)
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    deadline = time.monotonic() + bound.seconds
    data, timed_out = bytearray(), False
    try:
        while len(data) <= _REPORT_LIMIT:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_end], [], [], min(left, 0.05))
            if ready:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    break
                data += chunk
            elif proc.poll() is not None and not select.select([read_end], [], [], 0)[0]:
                break  # ended; what it started may hold the pipe open
        if not timed_out:
            try:
                proc.wait(max(deadline - time.monotonic(), 0.0))
            except subprocess.TimeoutExpired:
                timed_out = True
    finally:
        os.close(read_end)
        with contextlib.suppress(OSError):  # the child and whatever it started
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return bytes(data).splitlines(), None if timed_out else proc.returncode, timed_out


def _pass_on(*files: IO[bytes]) -> None:
    """Write what the child wrote (``files``) to our stderr, as it was written, but TVM's CUDA-architecture guess."""
    for held in files:
        held.seek(0)
        data = without_tvm_guess(held.read())
        stream = getattr(sys.stderr, "buffer", None)
        if data and stream is not None:
            stream.write(data)
            stream.flush()
        elif data:
            sys.stderr.write(data.decode("utf-8", "backslashreplace"))


# What each line of the report holds: its event and the type of each field.
_OPTIONAL = (str, type(None))
_Kinds = type | tuple[type, ...]
_EVENTS: dict[str, dict[str, _Kinds]] = {
    "hello": {"package": str},
    "stage": {"stage": str},
    "call": {"group": str, "kind": str, "name": str, "distribution": _OPTIONAL, "version": _OPTIONAL,
             "entry_point": _OPTIONAL, "plugin": bool},
    "return": {"stdout": int, "stderr": int},
    "raise": {"error": str, "stdout": int, "stderr": int},
    "result": {"probe": (dict, type(None)), "warnings": list},
}
_RESULT: dict[str, _Kinds] = {"called": (bool, type(None)), "text": str, "seconds": (int, float), "hints": list,
                              "error": _OPTIONAL}


def _fits(value: object, expected: _Kinds) -> bool:
    """Whether ``value`` is of ``expected`` (a ``bool`` only where ``bool`` is expected, never as a number)."""
    kinds = expected if isinstance(expected, tuple) else (expected,)
    return isinstance(value, kinds) and (bool in kinds or not isinstance(value, bool))


def _event(line: bytes) -> dict[str, Any] | None:
    """One line of the report as its event, or ``None`` where it is none."""
    try:
        event: object = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("event"), str):
        return None
    fields = _EVENTS.get(event["event"])
    if fields is None or not all(_fits(event.get(k), t) for k, t in fields.items()):
        return None
    found = event.get("probe")
    if isinstance(found, dict) and not all(_fits(found.get(k), t) for k, t in _RESULT.items()):
        return None
    told = event.get("warnings", [])
    if not all(isinstance(w, list) and len(w) == 3 and _fits(w[0], str) and _fits(w[1], str)
               and isinstance(w[2], list) and all(_fits(f, _OPTIONAL) for f in w[2]) for w in told):
        return None
    return event


class _Report:
    """What the report said so far: the calls open now (innermost last), the last chain of calls that
    raised (innermost first), calls of a plugin that printed, the stage, the result."""

    def __init__(self) -> None:
        self.open: list[Running] = []
        self.raised: list[Running] = []
        self.printed: list[tuple[Running, int, int]] = []
        self.stage = STARTING
        self.package: str | None = None
        self.result: dict[str, Any] | None = None
        self.done = False
        self.calls = 0
        self.warnings: tuple[tuple[str, str, Facts], ...] = ()

    def take(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "hello":
            self.package = event["package"]
        elif kind == "stage":
            self.stage = event["stage"]
        elif kind == "call":
            origin = Origin(event["distribution"], event["version"], event["group"], event["entry_point"])
            self.open.append(Running(event["group"], event["kind"], event["name"], origin, event["plugin"]))
            self.calls += 1
            self.raised = []
        elif kind in ("return", "raise") and self.open:
            running = self.open.pop()
            if kind == "raise":
                self.raised.append(running)
            else:
                self.raised = []
            if running.plugin and (event["stdout"] or event["stderr"]):
                self.printed.append((running, event["stdout"], event["stderr"]))
        elif kind == "result":
            self.result, self.done = event["probe"], True
            self.warnings = tuple((text, code, tuple(facts)) for text, code, facts in event["warnings"])


def judge(lines: list[bytes], status: int | None, timed_out: bool, bound: Bound) -> Probe:
    """The probe the child's report shows: its result where it reported one, ended well and nothing of a
    plugin raised, hung, ended it or printed in the build; else the failure, naming the codegen or hook."""
    report = _Report()
    for line in lines:
        event = _event(line)
        if event is None:
            return _failed(ProbeFailure(GARBLED, "its process reported what is no probe report: "
                                        f"{shown(cut(line.decode('utf-8', 'replace'), 120), 160)}",
                                        report.open[-1] if report.open else None, report.stage))
        if report.done:
            break
        report.take(event)
    running, reached = (report.open[-1] if report.open else None), (True if report.calls else None)
    if timed_out:
        return _failed(ProbeFailure(TIMED_OUT, f"it did not finish within {bound.describe()}", running, report.stage),
                       reached)
    if not report.done or status != 0:
        return _failed(ProbeFailure(ENDED, f"its process ended ({_status_text(status)}) before it reported (a plugin "
                                    "calling os._exit, a crash; its output is on stderr)", running, report.stage),
                       reached)
    ours = package_folder()
    if report.package is not None and os.path.normcase(report.package) != os.path.normcase(ours):
        return _failed(ProbeFailure(GARBLED, f"its process imported tilelang-hostcg from {report.package}, not from "
                                    f"{ours}: it would not show this installation's route"))
    found = report.result
    if found is None:
        return _failed(ProbeFailure(ENDED, "its process had no probe build to run: the integration was not installed "
                                    "there (its activation at the compiler's import did not run)", stage=report.stage))
    shown_there = found.get("shown")
    probe = Probe(found["called"], found["text"], float(found["seconds"]), tuple(map(str, found["hints"])),
                  warnings=report.warnings, shown=str(shown_there) if shown_there is not None else None)
    if found["error"] is not None:
        raised = report.raised[0] if report.raised else None
        stage = report.stage if probe.called else f"{report.stage}, before it reached the route"
        failure = ProbeFailure(RAISED, found["error"], raised, stage)
        return probe._replace(text=failure_text(failure), failure=failure)
    if report.printed:
        running, stdout, stderr = report.printed[0]
        streams = " and ".join(f"{n} bytes to {name}" for n, name in ((stdout, "stdout"), (stderr, "stderr")) if n)
        failure = ProbeFailure(PRINTED, f"it wrote {streams} while it ran (shown on stderr); in a user's program "
                               "that lands in the program's own output", running)
        return probe._replace(text=failure_text(failure), failure=failure)
    return probe


def _status_text(status: int | None) -> str:
    if status is not None and status < 0:
        with contextlib.suppress(ValueError):
            return f"signal {signal.Signals(-status).name}"
    return f"exit status {status}"


def failure_text(failure: ProbeFailure) -> str:
    """What failed, in one phrase: ``the probe build failed in codegen 'x' for kind 'c' (...): ...``."""
    if failure.running is not None:
        where = f" in {failure.running.describe()}"
    elif failure.stage is not None:
        where = f" while {failure.stage} (no codegen or hook was running)"
    else:
        where = ""
    return f"the probe build failed{where}: {failure.error}"


def _failed(failure: ProbeFailure, called: bool | None = None) -> Probe:
    return Probe(called, failure_text(failure), failure=failure)


def failure_fix(failure: ProbeFailure, controls: Controls) -> str:
    """What to do about a failed probe build."""
    running = failure.running
    if running is None or not running.plugin:
        return "Whether the installed plugins are used is not proven; what the build wrote is on stderr"
    dist = running.origin.distribution or "?"
    what = ("Its codegens and hooks must not write to stdout or stderr" if failure.how == PRINTED
            else "A user's builds of this kind meet the same")
    return (f"{what}: fix or upgrade {dist!r}, or skip it with {controls.suggest(ENV_DISABLE, dist)} (or uninstall "
            f"it: `{uninstall(dist)}`)")


def isolated(bound: Bound = DEFAULT_BOUND) -> ProbeRun:
    """The probe build of ``check``: in a process of its own within ``bound``, for a client that has one here."""
    return lambda client: isolated_probe(bound) if takes_probe(client) else None


def probed_client(run: ProbeRun | None) -> tuple[Doc, Probe | None]:
    """The client document after ``run`` (the client's probe build; ``None``: none), and the probe."""
    tvm = tvm_document()
    client = client_for(tvm.get("provider"))
    found = run(client) if client is not None and run is not None else None
    return client_document(tvm, found), found
