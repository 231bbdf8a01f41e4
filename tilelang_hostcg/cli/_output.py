"""What the command line writes: one JSON document or :func:`~tilelang_hostcg.core._errors.shown` lines on stdout,
the rest on stderr (:func:`held_output` keeps what loading prints off stdout); its errors and exit status."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import re
import sys
import tempfile
from typing import IO, TYPE_CHECKING, Any, TextIO, TypeVar

from ..core import CLI_PROG, shown

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from ..core import Facts

__all__ = ["PROG", "describe_distribution", "describe_flags",
           "document_is", "document_stream", "err", "out", "own_stdout",
           "printed_while", "quietly", "shown", "told", "warn_all", "without_tvm_guess", "write_json",
           "write_traceback"]

PROG = CLI_PROG

_T = TypeVar("_T")
Doc = dict[str, Any]


def document_stream() -> TextIO:
    """Where the document goes: the stdout :func:`own_stdout` kept, else ``sys.stdout``."""
    document = OUTPUT.document
    return document if document is not None else sys.stdout


def own_stdout() -> None:
    """Keep stdout for the document alone, for the rest of the process: its descriptor moves to a private
    one; descriptor 1 and ``sys.stdout`` (ours) write to stderr. A closed stdout stays as it is."""
    stdout = sys.stdout
    try:
        stdout.flush()
        private = os.dup(stdout.fileno())  # not inherited by child processes
    except (AttributeError, OSError, ValueError):
        return
    try:
        os.dup2(2, 1)
    except OSError:  # no stderr either: what is not the document goes nowhere
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    document = OUTPUT.document = open(private, "w", 1 if stdout.line_buffering else -1,  # noqa: SIM115
                                      encoding=stdout.encoding, errors="backslashreplace")
    atexit.register(document.close)  # ours to close (no ResourceWarning at exit)
    sys.stdout = _stream(1, stdout)


def _stream(fd: int, like: TextIO | None) -> TextIO:
    """A text stream of ours over ``fd`` (left open when it is closed), in the encoding of ``like``."""
    return open(fd, "w", 1, encoding=getattr(like, "encoding", None) or "utf-8",
                errors="backslashreplace", closefd=False)


def document_is(path: str) -> bool:
    """Whether writing ``path`` writes stdout: a name of it (``/dev/stdout``, ...), a chain of links to
    one, or the very file stdout is (``lock -o out.json > out.json``)."""
    names = {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1", f"/proc/{os.getpid()}/fd/1"}
    current = path
    for _ in range(40):  # the kernel's own bound on a chain of links
        current = os.path.join(os.path.realpath(os.path.dirname(current) or "."),
                               os.path.basename(current))
        if current in names or os.path.normpath(current) in names:
            return True
        try:
            link = os.readlink(current)
        except OSError:
            break
        current = os.path.join(os.path.dirname(current), link)
    try:
        return os.path.samestat(os.stat(path), os.fstat(document_stream().fileno()))
    except (AttributeError, OSError, ValueError):
        return False


def out(text: str = "") -> None:
    """Write ``text`` on stdout as one line (a newline in it is shown as ``\\n``)."""
    document_stream().write(shown(text) + "\n")


def err(text: str) -> None:
    """Write ``text`` on stderr as one line (a newline in it is shown as ``\\n``)."""
    sys.stderr.write(shown(text) + "\n")


def write_json(doc: Doc) -> None:
    """Write ``doc`` as one JSON document on stdout."""
    document_stream().write(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")


def describe_distribution(item: Doc) -> str:
    """The distribution and version an entry or registration comes from."""
    name = item.get("distribution")
    return "registered in code" if name is None else f"{name} {item.get('version') or '?'}"


def describe_flags(item: Doc) -> str:
    """How an entry or registration stands to the core, as a bracketed suffix."""
    flags = {"default": "default", "core": "core", "replaces_core": "replaces core",
             "extends_core": "adds to core kind: wins only where it matches"}
    return next((f"  [{label}]" for key, label in flags.items() if item.get(key)), "")


# TVM's guess of the CUDA architecture of a target without one: no news for the CLI's own ``Target(kind)``.
# TVM's own notes where it makes a GPU target with no GPU here (a CUDA or ROCm kind): its guess of the
# architecture and of the toolkit's version, which say nothing about plugins; the commands leave them out.
_TVM_ARCH_GUESS = re.compile(
    rb"^(?:.*Warning: Unable to detect CUDA version, default to \"-(?:arch|mcpu)=sm_\d+\" instead"
    rb"|ROCm not detected, using default gfx\w+"
    rb"|.*Warning: Unable to detect ROCm version, assuming >= [\d.]+)\n",
    re.MULTILINE)


def without_tvm_guess(data: bytes) -> bytes:
    """What a process wrote (``data``), without TVM's guess of a CUDA architecture."""
    return _TVM_ARCH_GUESS.sub(b"", data)


def _flush() -> None:
    for stream in (sys.stdout, sys.__stdout__, sys.stderr, sys.__stderr__, *OUTPUT.ours):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


class _Hold:
    """The files holding stdout and stderr during one :func:`held_output`, and the frames of
    :func:`printed_while` open in it (innermost last): ``[sizes counted, bytes per file]``."""

    def __init__(self, *files: IO[bytes]) -> None:
        self.files = files
        self.frames: list[list[Any]] = []

    def sizes(self) -> tuple[int, ...]:
        _flush()
        return tuple(os.fstat(f.fileno()).st_size for f in self.files)

    def count(self, frame: list[Any]) -> tuple[int, ...]:
        """Add what was written since ``frame`` last counted to its share; the sizes now."""
        now = self.sizes()
        for n, held in enumerate(self.files):
            if now[n] > frame[0][n]:
                frame[1][n] += os.pread(held.fileno(), now[n] - frame[0][n], frame[0][n])
        frame[0] = now
        return now


class _Output:
    """The command line's hold on the process's standard streams (one process, one stdout)."""

    __slots__ = ("document", "holds", "ours", "told")

    def __init__(self) -> None:
        self.document: TextIO | None = None
        """The standard output, once the program keeps it for itself (:func:`own_stdout`)."""
        self.ours: list[TextIO] = []
        """The streams :func:`held_output` puts in place of ``sys.stdout`` and ``sys.stderr``."""
        self.holds: list[_Hold] = []
        """The :func:`held_output` blocks open, innermost last."""
        self.told: list[set[tuple[str, Facts]]] = []
        """Per :func:`quietly` block open (innermost last), the keys of the warnings its document tells."""


OUTPUT = _Output()  # the command line's state: the process's standard streams are one


@contextlib.contextmanager
def held_output() -> Iterator[None]:
    """Hold what is written meanwhile (``sys.stdout``, ``sys.stderr``, ``sys.__stdout__``, descriptors 1
    and 2; streams of ours meanwhile, the originals put back whatever a plugin made of them) and write it
    on stderr afterwards, but TVM's guesses of a CUDA or ROCm architecture."""
    _flush()
    saved: list[tuple[int, int]] = []
    streams = sys.stdout, sys.stderr
    with tempfile.TemporaryFile() as held_out, tempfile.TemporaryFile() as held_err:
        hold = _Hold(held_out, held_err)
        try:
            for fd, held in ((1, held_out), (2, held_err)):
                with contextlib.suppress(OSError):  # a closed descriptor stays closed
                    copy = os.dup(fd)
                    saved.append((fd, copy))
                    os.dup2(held.fileno(), fd)
            ours = [_stream(fd, like) if any(fd == s for s, _ in saved)
                    else open(os.dup(held.fileno()), "w", 1, encoding="utf-8",  # noqa: SIM115
                              errors="backslashreplace")
                    for fd, like, held in ((1, streams[0], held_out), (2, streams[1], held_err))]
            OUTPUT.ours[:] = ours
            sys.stdout, sys.stderr = ours
            OUTPUT.holds.append(hold)
            yield
        finally:
            _flush()
            if OUTPUT.holds and OUTPUT.holds[-1] is hold:
                OUTPUT.holds.pop()
            sys.stdout, sys.stderr = streams
            OUTPUT.ours.clear()
            for fd, copy in reversed(saved):
                os.dup2(copy, fd)
                os.close(copy)
            data = b"".join(without_tvm_guess(os.pread(held.fileno(), size, 0))
                            for held, size in zip(hold.files, hold.sizes(), strict=True))
            stream = getattr(sys.stderr, "buffer", None)  # the bytes as written, if it can
            if data and stream is not None:
                stream.write(data)
                stream.flush()
            elif data:
                sys.stderr.write(data.decode("utf-8", "backslashreplace"))


@contextlib.contextmanager
def printed_while(note: Callable[[bytes, bytes], None]) -> Iterator[None]:
    """Inside :func:`held_output`: ``note(stdout_bytes, stderr_bytes)`` of what the block wrote, if
    anything (not what an inner block notes; not TVM's CUDA or ROCm architecture guess). Outside, the block
    just runs."""
    if not OUTPUT.holds:
        yield
        return
    hold = OUTPUT.holds[-1]
    frame: list[Any] = [hold.count(hold.frames[-1]) if hold.frames else hold.sizes(), [b"", b""]]
    hold.frames.append(frame)
    try:
        yield
    finally:
        now = hold.count(frame)
        hold.frames.remove(frame)
        if hold.frames:
            hold.frames[-1][0] = now
        written = [without_tvm_guess(data) for data in frame[1]]
        if any(written):
            note(*written)


def write_traceback(item: Doc, wanted: bool, indent: str) -> None:
    """With ``--traceback``, the plugin's own traceback of ``item``, one escaped line each."""
    for line in (item.get("traceback") or ()) if wanted else ():
        out(indent + line)


def told(keys: Iterable[tuple[str, Facts]]) -> None:
    """The document being built tells the warnings of ``keys`` (:attr:`PluginWarning.key`: code and facts),
    in its ``warnings`` or its problems: :func:`quietly` does not tell them again."""
    if OUTPUT.told:
        OUTPUT.told[-1].update(keys)


def quietly(build: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``build(*args, **kwargs)`` inside :func:`held_output`. A plugin warning raised meanwhile (a
    misspelt control warned as TVM is imported, before the command's own capture) goes in the
    document's ``warnings``, unless the document tells it already (:func:`told`: by its code and facts,
    not its words); else it is shown as before, unless the result tells it."""
    import warnings

    from ..core import PluginWarning
    from ..registry import capture
    caught: list[PluginWarning] = []
    OUTPUT.told.append(set())
    try:
        with held_output(), capture(caught):
            result = build(*args, **kwargs)
    finally:
        known = OUTPUT.told.pop()
    untold = [warning for warning in caught if warning.key not in known]
    if isinstance(result, dict) and isinstance(result.get("warnings"), list):
        result["warnings"] += [str(warning) for warning in untold]
        return result
    for warning in untold:
        warnings.warn_explicit(warning, type(warning), PROG, 0)
    return result


def warn_all(texts: Sequence[str]) -> None:
    """Write each of ``texts`` on stderr as a warning."""
    for text in texts:
        err(f"warning: {text}")
