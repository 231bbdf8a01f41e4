"""The ``tilelang-hostcg`` command line (also ``python -m tilelang_hostcg``).

The commands only format what :mod:`tilelang_hostcg._report` returns. ``--json``
prints exactly one JSON document on stdout (``"schema": 1``, see ``docs/cli.md``).

Exit status: 0 ok; 1 ``check`` found a problem, or ``explain`` found nothing that
resolves; 2 usage error (bad arguments, a target TVM cannot parse, an unknown kind or
one of the wrong sort, a device kind given as host, a ``--host`` for a host target,
an unreadable lock file, a lock file that could not be written, an output path that
cannot take it) or no usable TVM (none installed, or it cannot be imported) —
reported as one line on stderr, never a traceback, and with ``--json`` also as one
JSON document on stdout (``"ok": false``, ``"error"``). Names are printed with
``errors="backslashreplace"``, so no terminal encoding can make a command fail, and
bytes of the command line or a path that are not UTF-8 show as ``\\xNN``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TypeVar

from ._names import CODEGEN_GROUP, CORE_DISTRIBUTION, HOOK_GROUP

__all__ = ["CliError", "UsageError", "main"]

PROG = "tilelang-hostcg"
_DISTRIBUTION = CORE_DISTRIBUTION
_T = TypeVar("_T")
Doc = dict[str, Any]


class CliError(Exception):
    """An error the command line reports as one line on stderr; ``exit_code`` is its status."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None, prog: str = PROG,
                 ) -> None:
        super().__init__(message)
        self.prog = prog
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CliError):
    """Bad arguments or unusable input given by the user (exit status 2)."""

    exit_code = 2


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are :class:`UsageError` (one line, exit 2)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')", prog=self.prog)


class _MainParser(_Parser):
    """The top-level parser: its help ends with where the documentation is."""

    def format_help(self) -> str:
        return super().format_help() + "\n" + _documentation() + "\n"


def _documentation() -> str:
    """Where the documentation is, from the installed metadata's ``Project-URL``s."""
    urls: list[str] = []
    try:
        from importlib.metadata import metadata

        urls = metadata(_DISTRIBUTION).get_all("Project-URL") or []
    except Exception:  # a source checkout without metadata: name the files instead
        urls = []
    lines = [f"  {label.strip()}: {url.strip()}" for label, _, url in
             (item.partition(",") for item in urls) if url.strip()]
    if not lines:
        return ("Documentation: docs/cli.md (the command line, its exit status and JSON "
                "documents) in the tilelang-hostcg source distribution and repository "
                "(`pip download --no-deps --no-binary :all: tilelang-hostcg` fetches it).")
    return ("Documentation (the command line, its exit status and JSON documents are in "
            "docs/cli.md):\n" + "\n".join(lines))


# ---------------------------------------------------------------------- output helpers
_SURROGATE_REPR = re.compile(r"(?<!\\)\\udc([89a-f][0-9a-f])")


def _shown(text: str) -> str:
    """``text`` for the terminal: bytes that were not UTF-8 (surrogate escapes, raw or as
    written by ``repr``) become ``\\xNN``, as the library shows environment values."""
    text = _SURROGATE_REPR.sub(r"\\x\1", text)
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")


def _out(text: str = "") -> None:
    sys.stdout.write(_shown(text) + "\n")


def _err(text: str) -> None:
    sys.stderr.write(_shown(text) + "\n")


def _json(doc: Doc) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")


def _dist(item: Doc) -> str:
    if item.get("distribution") is None:
        return "registered in code"
    return f"{item['distribution']} {item.get('version') or '?'}"


def _flags(item: Doc) -> str:
    if item.get("core"):
        return "  [core]"
    if item.get("replaces_core"):
        return "  [replaces core]"
    if item.get("extends_core"):
        return "  [overrides/extends core]"
    return ""


def _state(entry: Doc) -> str:
    state = str(entry["state"])
    if entry.get("error"):
        return f"{state}: {entry['error']['type']}: {entry['error']['message']}"
    if entry.get("reason"):
        return f"{state}: {entry['reason']}"
    return state


def _quietly(build: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Call ``build`` with whatever it prints (TVM and plugins print, e.g. "ROCm not
    detected") sent to stderr, so that stdout holds only the command's output."""
    sys.stdout.flush()
    with contextlib.redirect_stdout(sys.stderr):
        return build(*args, **kwargs)


def _warn_all(texts: Sequence[str]) -> None:
    for text in texts:
        _err(f"warning: {text}")


# ---------------------------------------------------------------------- list
def _cmd_list(args: argparse.Namespace) -> int:
    from ._report import list_document

    if args.load:  # plugins that import TVM get the TVM in use (TileLang's needs tilelang first)
        from ._tvm import TVMNotFoundError, import_tvm

        with contextlib.suppress(TVMNotFoundError):  # the document says what is wrong
            _quietly(import_tvm)
    doc = _quietly(list_document, load=args.load)
    if args.json:
        _json(doc)
        return 0
    _out(f"TVM in use: {doc['tvm']['describe']}")
    for title, key, noun in (("Host codegens", "codegens", "codegen"),
                             ("Host codegen hooks", "hooks", "hook")):
        group = CODEGEN_GROUP if key == "codegens" else HOOK_GROUP
        _out(f"{title} (entry-point group {group}):")
        if not doc[key]:
            _out("  (none)")
        for kind in doc[key]:
            _out(f"  {kind['kind']}" + ("  [overrides/extends core]" if kind["extends_core"]
                                         else ""))
            for entry in kind["entry_points"]:
                _out(f"    {_dist(entry)}  {entry['entry_point']}  {_state(entry)}"
                     f"{_flags(entry)}")
            for reg in kind["registrations"] or ():
                _out(f"      {noun} {reg['name']!r} priority {reg['priority']}  from "
                     f"{_dist(reg)}{_flags(reg)}")
    for dup in doc["duplicates"]:
        locations = dup["locations"]
        _err(f"warning: distribution {dup['distribution']!r} is installed {len(locations)} "
             f"times: {locations[0]} (used), " + ", ".join(locations[1:]))
    _warn_all(doc["warnings"])
    _note_tilelang(doc)
    return 0


def _note_tilelang(doc: Doc) -> None:
    """Say on stderr when the TVM in use is a TileLang the integration does not support:
    the answers are then for :func:`tilelang_hostcg.build` with its TVM."""
    tvm = doc.get("tvm") or {}
    if tvm.get("provider") != "tilelang":
        return
    from ._tilelang_gate import SUPPORTED, UnsupportedTileLangError, mode_of

    version = str(tvm.get("provider_version") or "?")
    try:
        mode_of(version)
    except UnsupportedTileLangError:
        _err(f"note: TileLang {version} is not supported by tilelang_hostcg.tilelang "
             f"(tilelang{SUPPORTED}); these answers are for tilelang_hostcg.build() with its "
             "TVM, and TileLang's own compiler does not use the plugins")


def _required(values: Sequence[str], option: str) -> list[str]:
    """``values`` of a repeatable, comma-separated option; one that names no kind is a
    usage error (``--require ,`` would otherwise pass while requiring nothing)."""
    from ._checks import split_kinds

    for value in values:
        if not split_kinds([value]):
            raise UsageError(f"{option} {value!r} names no kind; give a kind name such as "
                             f"{'llvm' if option == '--require' else 'cuda'} (see '{PROG} check "
                             "--help')", prog=f"{PROG} check")
    return list(values)


# ---------------------------------------------------------------------- check
def _cmd_check(args: argparse.Namespace) -> int:
    from ._checks import check_document

    _required(args.require, "--require")
    _required(args.require_hook, "--require-hook")
    doc = _quietly(check_document, require=args.require, require_hooks=args.require_hook,
                   lock=args.lock, strict=args.strict)
    if args.json:
        _json(doc)
        return 0 if doc["ok"] else 1
    _note_tilelang(doc)
    kinds = doc["kinds"]
    _out(f"TVM in use: {doc['tvm']['describe']}")
    _out(f"Checked {len(doc['distributions'])} distribution(s); host kinds: "
         f"{', '.join(kinds['codegens']) or '(none)'}; hook kinds: "
         f"{', '.join(kinds['hooks']) or '(none)'}"
         + (f"; lock file: {doc['lock']}" if doc["lock"] else ""))
    for problem in doc["problems"]:
        _out(f"{problem['severity']} [{problem['code']}] {problem['message']}")
    errors, warnings = doc["summary"]["errors"], doc["summary"]["warnings"]
    if doc["ok"]:
        _out("check passed" + (f" with {warnings} warning(s)" if warnings else ""))
        return 0
    _out(f"check failed: {errors} error(s), {warnings} warning(s)")
    return 1


# ---------------------------------------------------------------------- lock
def _cmd_lock(args: argparse.Namespace) -> int:
    from ._lockfile import write_lock
    from ._report import format_lock, lock_document

    doc, notes = _quietly(lock_document)
    text = format_lock(doc)
    _warn_all(notes)
    if args.output in (None, "-") or _is_stdout(args.output):
        sys.stdout.write(text)
        return 0
    written = write_lock(args.output, text)  # a regular file: atomic, the old one intact
    summary = (f"{len(doc['distributions'])} distribution(s), {len(doc['codegens'])} codegen(s), "
               f"{len(doc['hooks'])} hook(s)")
    if written == "replaced":
        _out(f"Wrote {args.output}: {summary}")
    else:  # a device or FIFO: written through, never replaced; stdout may be what it is
        _err(f"Wrote {args.output} (written through, not replaced): {summary}")
    return 0


def _is_stdout(path: str) -> bool:
    """Whether ``path`` names this process's standard output (``/dev/stdout``,
    ``/dev/fd/1``, ``/proc/self/fd/1``): written to as stdout, as shells do."""
    return os.path.normpath(path) in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


# ---------------------------------------------------------------------- explain
def _cmd_explain(args: argparse.Namespace) -> int:
    from ._explain import explain_document

    for value, what in ((args.target, "TARGET"), (args.host, "--host")):
        if value is not None and _undecodable(value):
            raise UsageError(f"{what} {_shown(repr(value))} is not valid UTF-8 text; give a kind "
                             "name such as 'llvm' or TVM's JSON form", prog=f"{PROG} explain")
    if args.host is not None:
        _host_needs_device_target(args.target, args.host)
    doc = _quietly(explain_document, args.target, host=args.host)
    if args.json:
        _json(doc)
        return 0 if doc["codegen"] is not None else 1
    _out(f"tvm:      {doc['tvm']['describe']}")
    _out(f"target:   {json.dumps(doc['target'], separators=(',', ':'))}")
    where = {"target": "the target is a host target",
             "target.host": "the target's host",
             "tvm-default": "TVM's default host; give another with --host"}[doc["host_from"]]
    _out(f"host:     {json.dumps(doc['host'], separators=(',', ':'))}  ({where})")
    chosen = doc["codegen"]
    if chosen is not None:
        _out(f"codegen:  {chosen['name']!r} from {_dist(chosen)}"
             + (f" ({chosen['entry_point']})" if chosen.get("entry_point") else ""))
    else:
        error = doc["error"]
        _out(f"codegen:  none resolves: {error['type']}: {error['message']}")
    _out()
    _out(f"Host codegens for kind {doc['host_kind']!r}:")
    if not doc["candidates"]:
        _out("  (none registered)")
    for cand in doc["candidates"]:
        mark = "*" if cand["selected"] else "-"
        if cand["name"] is None:
            _out(f"  {mark} ({cand['state']}) {_dist(cand)} ({cand['entry_point']})  "
                 f"{cand['reason']}")
        else:
            _out(f"  {mark} {cand['name']!r} priority {cand['priority']}  {_dist(cand)}  "
                 f"{cand['reason']}")
    if doc["hook_kind"] is not None:
        _out()
        _out(f"Hooks for device kind {doc['hook_kind']!r}, in the order they run:")
        if not doc["hooks"]:
            _out("  (none registered)")
        for hook in doc["hooks"]:
            mark = f"{hook['order']}." if hook["applies"] else "-"
            label = (f"{hook['name']!r} priority {hook['priority']}" if hook["name"] is not None
                     else f"({hook['state']}) ({hook['entry_point']})")
            _out(f"  {mark} {label}  {_dist(hook)}  {hook['reason']}")
    if doc["controls"]:
        _out()
        _out("Controls that touched the answer:")
        for control in doc["controls"]:
            _out(f"  {control['variable']}={control['item']}: {control['effect']}")
    _warn_all(doc["warnings"])
    _note_tilelang(doc)
    return 0 if chosen is not None else 1


def _undecodable(text: str) -> bool:
    """Whether ``text`` holds bytes that were not UTF-8 (surrogate escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _host_needs_device_target(target: str, host: str) -> None:
    """``--host`` serves a device TARGET only: a host target is its own host, so a
    ``--host`` beside it would be ignored; say so (exit 2) instead."""
    from ._targets import is_host_target, parse_target

    parsed = _quietly(parse_target, target)
    if is_host_target(parsed):
        kind = parsed.kind.name
        raise UsageError(
            f"--host {host!r} given for {kind!r}, a host target: a host target builds its own "
            f"host code, so --host applies only to a device TARGET (e.g. `explain cuda --host "
            f"{host}`); to see how {host!r} resolves, run `explain {host}`",
            prog=f"{PROG} explain")


# ---------------------------------------------------------------------- cache
def _cache_function(name: str) -> Callable[[], Any]:
    from . import _cache

    func = getattr(_cache, name, None)
    if func is None:
        raise CliError(f"this tilelang-hostcg has no discovery cache to manage ({name} is "
                       "missing); upgrade tilelang-hostcg")
    return func  # type: ignore[no-any-return]


def _cmd_cache_info(args: argparse.Namespace) -> int:
    info = dict(_quietly(_cache_function("cache_info")))
    if args.json:
        from ._report import SCHEMA

        _json({"schema": SCHEMA, "command": "cache info", "cache": info})
        return 0
    _mapping(info, "")
    return 0


def _mapping(info: Any, indent: str) -> None:
    width = max((len(str(k)) for k in info), default=0)
    for key, value in info.items():
        label = f"{indent}{str(key) + ':':<{width + 1}}"
        if isinstance(value, dict):
            _out(label.rstrip())
            _mapping(value, indent + "  ")
        elif isinstance(value, (list, tuple)):
            _out(f"{label} " + (", ".join(map(str, value)) if value else "(none)"))
        else:
            _out(f"{label} {value}")


def _cmd_cache_clear(args: argparse.Namespace) -> int:
    try:
        removed = [str(p) for p in _quietly(_cache_function("clear_cache"))]
    except OSError as exc:  # the folder is a link or not private: refused, nothing removed
        raise CliError(str(exc), exit_code=getattr(exc, "exit_code", 1)) from None
    if args.json:
        from ._report import SCHEMA

        _json({"schema": SCHEMA, "command": "cache clear", "removed": removed})
        return 0
    for path in removed:
        _out(f"removed {path}")
    _out(f"Cleared the discovery cache ({len(removed)} file(s) removed)")
    return 0


# ---------------------------------------------------------------------- parser
def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = _MainParser(
        prog=PROG,
        description="Inspect, check and pin the installed TileLang host-codegen plugins.",
        epilog="Exit status: 0 ok, 1 check failed (explain: nothing resolves), 2 usage error "
               "or no usable TVM. --json may come before or after the command.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--json", action="store_true", default=False,
                        help="print one JSON document (for list, check, explain and cache)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("list", help="every advertised kind and its entry points",
                       description="List every advertised host-codegen and hook kind with its "
                                   "entry points. Reads metadata only unless --load is given.")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print one JSON document")
    p.add_argument("--load", action="store_true",
                   help="import the plugins and show each codegen's and hook's name and priority")
    p.set_defaults(handler=_cmd_list)

    p = sub.add_parser("check", help="load every plugin and report every problem",
                       description="Load every advertised plugin and report every problem; "
                                   "exit 1 if there is any.")
    p.add_argument("--require", action="append", default=[], metavar="KIND",
                   help="a host kind that must have a codegen (repeatable, or comma-separated)")
    p.add_argument("--require-hook", action="append", default=[], metavar="KIND",
                   help="a device kind that must have a hook (repeatable, or comma-separated)")
    p.add_argument("--lock", metavar="FILE", help="fail when the installed set differs from FILE")
    p.add_argument("--strict", action="store_true", help="treat warnings as failures")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print one JSON document")
    p.set_defaults(handler=_cmd_check)

    p = sub.add_parser("lock", help="write the installed plugin set as a lock file",
                       description="Write the installed plugin set (distributions, versions, "
                                   "entry points, codegen and hook names) for `check --lock`.")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")
    p.set_defaults(handler=_cmd_lock)

    p = sub.add_parser("explain", help="why a target resolves to its codegen and hooks",
                       description="Show the codegen a target resolves to, the hooks that apply "
                                   "in order, and why every other candidate was passed over.")
    p.add_argument("target", metavar="TARGET",
                   help="a target kind name (llvm, cuda, ...) or TVM's JSON form")
    p.add_argument("--host", metavar="HOST", help="the host target of a device TARGET")
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print one JSON document")
    p.set_defaults(handler=_cmd_explain)

    p = sub.add_parser("cache", help="inspect or clear the discovery cache",
                       description="Inspect or clear the persistent discovery cache.")
    cache = p.add_subparsers(dest="cache_command", metavar="ACTION")
    c = cache.add_parser("info", help="where the cache is and what it holds")
    c.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print one JSON document")
    c.set_defaults(handler=_cmd_cache_info)
    c = cache.add_parser("clear", help="delete the cache files")
    c.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print one JSON document")
    c.set_defaults(handler=_cmd_cache_clear)
    p.set_defaults(handler=None)
    return parser


def _dispatch(args: argparse.Namespace) -> int:
    from ._errors import TargetParseError
    from ._inputs import InputError
    from ._tvm import TVMNotFoundError

    try:
        return int(args.handler(args))
    except (InputError, TargetParseError) as exc:
        raise UsageError(str(exc)) from None
    except TVMNotFoundError as exc:
        raise CliError(str(exc), exit_code=2) from None
    except Exception as exc:
        from .tilelang import UnsupportedTileLangError

        if isinstance(exc, UnsupportedTileLangError):  # a path that needed the integration
            raise CliError(str(exc), exit_code=2) from None
        raise


_COMMANDS = ("list", "check", "lock", "explain", "cache")


def _command_of(argv: Sequence[str]) -> str | None:
    """The command named in ``argv`` (``"cache info"`` for a cache action), or ``None``."""
    words = [a for a in argv if not a.startswith("-")]
    if not words or words[0] not in _COMMANDS:
        return None
    if words[0] == "cache" and len(words) > 1 and words[1] in ("info", "clear"):
        return f"cache {words[1]}"
    return words[0]


def _wants_json(argv: Sequence[str]) -> bool:
    return "--json" in argv[:argv.index("--")] if "--" in argv else "--json" in argv


def _error_document(argv: Sequence[str], exc: CliError) -> Doc:
    from . import __version__
    from ._report import SCHEMA

    return {"schema": SCHEMA, "command": _command_of(argv), "version": __version__, "ok": False,
            "error": {"type": type(exc).__name__, "message": _shown(str(exc)),
                      "exit_code": exc.exit_code}}


def _safe_streams() -> None:
    """Never fail on a name the terminal's encoding cannot show (``LANG=C``,
    ``PYTHONIOENCODING=ascii``): write such characters as backslash escapes."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    _safe_streams()
    args_list = list(argv) if argv is not None else sys.argv[1:]
    parser = _parser()
    try:
        try:
            args = parser.parse_args(args_list)
        except SystemExit as exc:  # --help and --version print and exit 0
            return exc.code if isinstance(exc.code, int) else 0
        if args.command is None:
            raise UsageError("missing command: choose one of list, check, lock, explain, cache "
                             f"(see '{PROG} --help')")
        if args.handler is None:
            raise UsageError(f"missing action: choose info or clear (see '{PROG} cache --help')",
                             prog=f"{PROG} cache")
        status = _dispatch(args)
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except CliError as exc:
        if _wants_json(args_list):
            _json(_error_document(args_list, exc))
        _err(f"{exc.prog}: error: {exc}")
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly, as other Unix tools do.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
