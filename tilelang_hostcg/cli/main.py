"""The ``tilelang-hostcg`` command line. Exit status (``docs/cli.md``): 0 ok; 1 ``check`` found a
problem or ``explain`` nothing that resolves; 2 a usage error or no usable TVM (one line on
stderr, and with ``--json`` one JSON document on stdout)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from .. import __version__
from ..core import (
    CORE_DISTRIBUTION,
    CliError,
    InputError,
    TargetParseError,
    TVMNotFoundError,
    UnsupportedTileLangError,
    UsageError,
)
from ._commands import cmd_check, cmd_explain, cmd_list, cmd_lock
from ._output import PROG, document_stream, err, own_stdout, shown, write_json

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]

_COMMANDS = {"list": cmd_list, "check": cmd_check, "lock": cmd_lock, "explain": cmd_explain}


class _Parser(argparse.ArgumentParser):
    """Errors are :class:`UsageError`; help and version are the document; help ends with the documentation."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')", prog=self.prog)

    def _print_message(self, message: str, file: Any = None) -> None:
        super()._print_message(message, document_stream() if file in (None, sys.stdout) else file)

    def format_help(self) -> str:
        from importlib.metadata import PackageNotFoundError, metadata
        urls: list[str] = []
        with contextlib.suppress(PackageNotFoundError):
            urls = [f"  {label.strip()}: {url.strip()}" for label, _, url in
                    (u.partition(",") for u in metadata(CORE_DISTRIBUTION).get_all("Project-URL") or [])
                    if url.strip()]
        docs = ("Documentation (the command line, its exit status and JSON documents are in docs/cli.md):\n"
                + "\n".join(urls) if urls else
                "Documentation: docs/cli.md (the command line, its exit status and JSON documents) in the "
                "tilelang-hostcg repository and source distribution (a checkout has it; once the package is "
                "published, `pip download --no-deps --no-binary :all: tilelang-hostcg` fetches it).")
        return f"{super().format_help()}\n{docs}\n"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Inspect, check and pin the installed host-codegen plugins of "
                     "TileLang and Apache TVM (tilelang-hostcg).",
                     epilog="Exit status: 0 ok, 1 check failed (explain: nothing resolves), 2 usage error or "
                     "no usable TVM. --json may come before or after the command.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--json", action="store_true", default=False,
                        help="print one JSON document (for list, check and explain)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    as_json, as_traceback = _Parser(add_help=False), _Parser(add_help=False)
    as_json.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print one JSON document")
    as_traceback.add_argument("--traceback", action="store_true", help="show a failed plugin's own traceback")
    both = [as_json, as_traceback]

    p = sub.add_parser("list", parents=both, help="every advertised kind and its entry points",
                       description="List every advertised host-codegen and hook kind with its entry points. "
                                   "Reads metadata only unless --load is given.")
    p.add_argument("--load", action="store_true",
                   help="import the plugins and show each codegen's and hook's name and priority")

    p = sub.add_parser("check", parents=both, help="load every plugin and report every problem",
                       description="Load every advertised plugin and report every problem; exit 1 if there is any.")
    p.add_argument("--require", action="append", default=[], metavar="KIND",
                   help="a host kind that must have a codegen (repeatable, or comma-separated)")
    p.add_argument("--require-hook", action="append", default=[], metavar="KIND",
                   help="a device kind that must have a hook (repeatable, or comma-separated)")
    p.add_argument("--lock", metavar="FILE", help="fail when the installed set differs from FILE")
    p.add_argument("--strict", action="store_true", help="treat warnings as failures")
    p.add_argument("--probe-timeout", metavar="SECONDS",
                   help="the time bound of the probe build, which runs in a process of its own (default 120; "
                        "also TILELANG_HOSTCG_PROBE_TIMEOUT)")

    p = sub.add_parser("lock", help="write the installed plugin set as a lock file",
                       description="Write the installed plugin set (distributions, versions, entry points, "
                                   "codegen and hook names) for `check --lock`.")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE (default: stdout)")

    p = sub.add_parser("explain", parents=both, help="why a target resolves to its codegen and hooks",
                       description="Show the codegen a target resolves to, the hooks that apply in order, "
                                   "and why every other candidate was passed over.")
    p.add_argument("target", metavar="TARGET", help="a target kind name (llvm, cuda, ...) or TVM's JSON form")
    p.add_argument("--host", metavar="HOST", help="the host target of a device TARGET")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv``; returns the exit status. Without ``argv`` it runs as the
    program: ``sys.argv[1:]``, with stdout kept for the command's document (plugins' prints go to stderr)."""
    for stream in (sys.stdout, sys.stderr):  # a name the terminal cannot show is escaped, never fatal
        with contextlib.suppress(ValueError, OSError, AttributeError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if argv is None:
        own_stdout()
    args_list = list(argv) if argv is not None else sys.argv[1:]
    try:
        try:
            args = _parser().parse_args(args_list)
        except SystemExit as exc:  # --help and --version print and exit 0
            return exc.code if isinstance(exc.code, int) else 0
        if args.command is None:
            raise UsageError(f"missing command: choose one of {', '.join(_COMMANDS)} (see '{PROG} --help')")
        try:
            status = int(_COMMANDS[args.command](args))
        except (InputError, TargetParseError) as exc:
            raise UsageError(str(exc)) from None
        except (TVMNotFoundError, UnsupportedTileLangError) as exc:
            raise CliError(str(exc), exit_code=2) from None
        document_stream().flush()  # a closed pipe shows here, not at interpreter exit
        return status
    except CliError as exc:
        if "--json" in _options(args_list):
            from ._report import SCHEMA

            command = next((a for a in args_list if not a.startswith("-")), None)
            error = {"type": type(exc).__name__, "message": shown(str(exc)), "exit_code": exc.exit_code}
            write_json({"schema": SCHEMA, "command": command if command in _COMMANDS else None,
                        "version": __version__, "ok": False, "error": error})
        err(f"{exc.prog}: error: {exc}")
        return exc.exit_code
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly, as other tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), document_stream().fileno())
        return 1


def _options(args: list[str]) -> list[str]:
    """The arguments before ``--``: after it, even ``--json`` is a value."""
    if "--" in args:
        return args[:args.index("--")]
    return args
