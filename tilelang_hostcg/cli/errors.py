"""The command line's name and errors: :class:`CliError` (one line on stderr, with its exit
status) and :class:`UsageError` (bad arguments or input, exit 2)."""

from __future__ import annotations

__all__ = ["PROG", "CliError", "UsageError"]

PROG = "tilelang-hostcg"


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
