"""The ``TILELANG_HOSTCG_*`` environment controls; one that cannot take effect is a :class:`ControlProblem`."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL, is_on, is_understood

from ..core import (
    CODEGEN_GROUP,
    CORE_DISTRIBUTION,
    CORE_ENTRY_POINTS,
    cut,
    is_core,
    normalize_name,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..diagnosis import Finding

PREFIX = "TILELANG_HOSTCG_"
ENV_AUTOLOAD_OFF = "TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD"
ENV_DISABLE = "TILELANG_HOSTCG_DISABLE"
ENV_ONLY = "TILELANG_HOSTCG_ONLY"
ENV_PREFER = "TILELANG_HOSTCG_PREFER"
ENV_PROBE_TIMEOUT = "TILELANG_HOSTCG_PROBE_TIMEOUT"
KNOWN_VARIABLES = (ENV_AUTOLOAD_OFF, ENV_AUTO_INSTALL, ENV_DISABLE, ENV_ONLY, ENV_PREFER, ENV_PROBE_TIMEOUT)
PROBE_TIMEOUT_DEFAULT = 120.0  # seconds; docs/cli.md says why
PROBE_TIMEOUT_LIMIT = 86400.0  # a day: a bound, not a way round one
RESERVED_PREFIX = "TILELANG_HOSTCG_TEST_"  # the project's own tests' variables: never judged


class Advertised(Protocol):
    """What the controls read of an installed entry point (discovery's ``AdvertisedEntryPoint``)."""

    @property
    def group(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def distribution(self) -> str: ...


@dataclass(frozen=True, slots=True)
class ControlProblem:
    """A ``TILELANG_HOSTCG_*`` ``item`` of ``variable`` that cannot do what it says, as facts: what is wrong
    with it (``problem``) and the ``details`` that word it (:mod:`..diagnosis` words it: :attr:`message`)."""

    variable: str
    item: str
    problem: str
    """What is wrong: ``not-understood``, ``not-a-bound``, ``no-control``, ``malformed``, ``not-utf8``,
    ``no-distribution``, ``no-kind``, ``no-host-kind`` or ``no-codegen-name``."""
    details: tuple[tuple[str, str | None], ...] = ()
    """The facts that word it, by name (what stays as it was, the nearest name, what there is instead)."""

    @classmethod
    def of(cls, variable: str, item: str, problem: str, **details: str | None) -> ControlProblem:
        """The ``problem`` of ``variable``'s ``item``, worded by ``details``."""
        return cls(variable, item, problem, tuple(details.items()))

    @property
    def finding(self) -> Finding:
        """The problem as a finding (a ``control`` warning), known by its variable and item."""
        from ..core import ControlPluginWarning  # a warning's class: only where one is given
        from ..diagnosis import Finding  # a finding's words: only where one is given
        return Finding.of(ControlPluginWarning, self.variable, wording=("problem", *(name for name, _ in self.details)),
                          variable=self.variable, item=self.item, problem=self.problem, **dict(self.details))

    @property
    def message(self) -> str:
        """The problem in words, with what to do (:mod:`..diagnosis`'s)."""
        from ..diagnosis import words  # a finding's words: only where one is given
        return words(self.finding)


def _not_understood(variable: str, value: str | None, stays_on: str, off: str) -> ControlProblem | None:
    """An on/off value that is neither on nor off (any case, spaces around): the default stays (``stays_on``:
    ``autoload`` or ``activation``; ``off``: the value that turns it off)."""
    if value is None or is_understood(value):
        return None
    return ControlProblem.of(variable, value, "not-understood", stays_on=stays_on, off=off)


def _bound_problem(value: str, given: str) -> ControlProblem | None:
    """``value`` (from ``given``: the variable or the ``check`` flag) where it is no time bound for ``check``'s
    probe build, else ``None``: a bound is a number of seconds above 0, at most a day."""
    try:
        seconds = float(value.strip())
    except ValueError:
        seconds = float("nan")
    if 0 < seconds <= PROBE_TIMEOUT_LIMIT:  # also false for nan
        return None
    return ControlProblem.of(given, value, "not-a-bound", limit=f"{PROBE_TIMEOUT_LIMIT:g}",
                             default=f"{PROBE_TIMEOUT_DEFAULT:g}")


def probe_timeout_error(value: str, given: str) -> str | None:
    """Why ``value`` (from ``given``: the variable or the ``check`` flag) is no time bound for ``check``'s probe
    build, else ``None``: a bound is a number of seconds above 0, at most a day."""
    problem = _bound_problem(value, given)
    if problem is None:
        return None
    from ..diagnosis import no_time_bound  # a finding's words: only where one is given
    return no_time_bound(problem.finding)


def probe_timeout_problem(value: str | None) -> ControlProblem | None:
    """The problem with ``TILELANG_HOSTCG_PROBE_TIMEOUT=value``; ``check`` refuses to run with it."""
    return None if value is None else _bound_problem(value, ENV_PROBE_TIMEOUT)


def auto_install_problem(value: str | None) -> ControlProblem | None:
    """The problem with ``TILELANG_HOSTCG_AUTO_INSTALL=value`` when it is not understood."""
    return _not_understood(ENV_AUTO_INSTALL, value, "activation", "0")


_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")  # PEP 508
_KIND = re.compile(r"[A-Za-z0-9_.-]+")


def is_utf8_text(text: str) -> bool:
    """Whether ``text`` holds no bytes that were not UTF-8 (no surrogate escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (a misspelling's likely meaning), or ``None``."""
    import difflib  # measured: about 1 ms, and only a problem needs it
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return close[0] if close else None


def warn_control_problems(problems: Iterable[ControlProblem]) -> None:
    """Warn once per process about each problem (by its variable and item), at the user's line."""
    for problem in problems:
        from ..diagnosis import warn  # a finding's words: only where one is given
        warn(problem.finding, once=True)


@dataclass(frozen=True, slots=True)
class Controls:
    """The plugin controls: ``disable`` (``dist`` or ``dist:kind``), ``only`` (``None``: all), ``prefer``."""

    autoload: bool = True
    disable: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
    prefer: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[ControlProblem, ...] = field(default=(), compare=False)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Controls:
        """Read the ``TILELANG_HOSTCG_*`` variables; what cannot be used becomes a warned ``problem``."""
        env = os.environ if environ is None else environ
        value = env.get(ENV_AUTOLOAD_OFF)
        problems = [p for p in (_not_understood(ENV_AUTOLOAD_OFF, value, "autoload", "1"),
                                auto_install_problem(env.get(ENV_AUTO_INSTALL)),
                                probe_timeout_problem(env.get(ENV_PROBE_TIMEOUT))) if p is not None]
        disable = frozenset(normalize_name(dist) + sep + kind for dist, sep, kind in (
            item.partition(":") for item in _items(ENV_DISABLE, env, problems) or ()))
        only_items = _items(ENV_ONLY, env, problems)
        only = None if only_items is None else frozenset(map(normalize_name, only_items))
        prefer = {kind.strip(): name.strip() for kind, _, name in (
            item.partition("=") for item in _items(ENV_PREFER, env, problems) or ())}
        problems += [ControlProblem.of(variable, cut(env[variable], 40), "no-control",
                                       guess=closest(variable, KNOWN_VARIABLES), controls=", ".join(KNOWN_VARIABLES))
                     for variable in sorted(env) if variable.startswith(PREFIX)
                     and variable not in KNOWN_VARIABLES and not variable.startswith(RESERVED_PREFIX)]
        warn_control_problems(problems)
        return cls(autoload=not is_on(value), disable=disable, only=only,
                   prefer=prefer, problems=tuple(problems))

    def skip_control(self, distribution: str, kind: str) -> tuple[str, str] | None:
        """The control that skips this entry point, as ``(variable, item)``, or ``None``."""
        dist = normalize_name(distribution)
        if not is_core(dist):
            if not self.autoload:
                return ENV_AUTOLOAD_OFF, "1"
            if self.only is not None and dist not in self.only:
                return ENV_ONLY, ",".join(sorted(self.only))
        if dist in self.disable:
            return ENV_DISABLE, dist
        if not self.disable:
            return None
        from ..environment import kind_spellings  # the kinds' names: only where something is disabled
        for spelling in kind_spellings(kind):  # dist:hip and dist:rocm name one kind
            if f"{dist}:{spelling}" in self.disable:
                return ENV_DISABLE, f"{dist}:{spelling}"
        return None

    def suggest(self, variable: str, item: str) -> str:
        """``VARIABLE=VALUE`` adding ``item`` to what these controls set (``PREFER``: replacing its kind's)."""
        if variable == ENV_PREFER:
            kind = item.partition("=")[0]
            items = [f"{k}={v}" for k, v in sorted(self.prefer.items()) if k != kind] + [item]
        else:
            have = self.disable if variable == ENV_DISABLE else self.only or frozenset()
            dist, sep, kind = item.partition(":")
            new = f"{normalize_name(dist)}:{kind}" if sep else normalize_name(dist)
            items = sorted(have) + ([] if new in have else [new])
        return f"{variable}={','.join(items)}"

    def skip_reason(self, distribution: str, kind: str) -> str | None:
        """Why the controls skip this entry point, or ``None`` when they let it load."""
        control = self.skip_control(distribution, kind)
        if control is None:
            return None
        variable, item = control
        if variable == ENV_AUTOLOAD_OFF:
            return f"plugin autoload is off ({ENV_AUTOLOAD_OFF}=1)"
        if variable == ENV_ONLY:
            return (f"not in {ENV_ONLY} (to use it: "
                    f"{self.suggest(ENV_ONLY, normalize_name(distribution))})")
        return f"disabled by {ENV_DISABLE}={item}"

    def unknown_names(self, entry_points: Iterable[Advertised]) -> list[ControlProblem]:
        """Items of ``DISABLE``, ``ONLY`` and ``PREFER`` naming what no installed entry point advertises."""
        if not (self.disable or self.only or self.prefer):
            return []
        from ..environment import kind_spellings  # the kinds' names: only where a control names one
        entries = list(entry_points)
        kinds_of: dict[str, set[str]] = {CORE_DISTRIBUTION: set()}
        for ep in entries:
            kinds_of.setdefault(normalize_name(ep.distribution), set()).update(kind_spellings(ep.name))
        kinds_of[CORE_DISTRIBUTION].update(name for _, name, _ in CORE_ENTRY_POINTS)
        problems: list[ControlProblem] = []
        for item in sorted(self.disable):
            dist, sep, kind = item.partition(":")
            if dist not in kinds_of:
                problems.append(_no_distribution(ENV_DISABLE, item, dist, kinds_of))
            elif sep and kind not in kinds_of[dist]:
                problems.append(ControlProblem.of(ENV_DISABLE, item, "no-kind", distribution=dist, kind=kind,
                                                  guess=closest(kind, kinds_of[dist]),
                                                  advertised=", ".join(sorted(kinds_of[dist])) or None))
        problems += [_no_distribution(ENV_ONLY, d, d, kinds_of) for d in sorted(self.only or ()) if d not in kinds_of]
        codegen_kinds = {k for ep in entries if ep.group == CODEGEN_GROUP
                         for k in kind_spellings(ep.name)} | set(kinds_of[CORE_DISTRIBUTION])
        return problems + [ControlProblem.of(ENV_PREFER, f"{kind}={name}", "no-host-kind", kind=kind,
                                             guess=closest(kind, codegen_kinds))
                           for kind, name in sorted(self.prefer.items()) if kind not in codegen_kinds]

    def unknown_preference(self, kind: str, names: Iterable[str]) -> ControlProblem | None:
        """The problem with ``PREFER`` for ``kind`` when none of its codegens (``names``) is so called."""
        wanted, present = self.prefer.get(kind), set(names)
        if wanted is None or wanted in present:
            return None
        return ControlProblem.of(ENV_PREFER, f"{kind}={wanted}", "no-codegen-name", kind=kind, name=wanted,
                                 guess=closest(wanted, present),
                                 codegens=", ".join(repr(n) for n in sorted(present)) or None)


def _no_distribution(variable: str, item: str, dist: str,
                     kinds_of: Mapping[str, Iterable[str]]) -> ControlProblem:
    return ControlProblem.of(variable, item, "no-distribution", distribution=dist, guess=closest(dist, kinds_of))


# What an item of each list variable must look like, and the name of that shape (the advice when it does not).
_SHAPES = {
    ENV_DISABLE: (re.compile(rf"{_NAME.pattern}(?::{_KIND.pattern})?"), "distribution-or-kind"),
    ENV_ONLY: (_NAME, "distribution"),
    ENV_PREFER: (re.compile(r"[^=]+=.+", re.S), "kind=codegen"),
}


def _items(variable: str, env: Mapping[str, str], problems: list[ControlProblem]) -> list[str] | None:
    """The well-formed UTF-8 items of a list variable (``None`` when unset); the others become problems."""
    value = env.get(variable)
    if value is None:
        return None
    shape, named = _SHAPES[variable]
    raw = value.split(",") if variable == ENV_PREFER else value.replace(",", " ").split()
    items = []
    for item in filter(None, (part.strip() for part in raw)):
        if not is_utf8_text(item):  # a UTF-8 name read under an ASCII locale (LC_ALL=C)?
            with contextlib.suppress(UnicodeError):
                item = os.fsencode(item).decode("utf-8")
        utf8 = is_utf8_text(item)
        if utf8 and shape.fullmatch(item):
            items.append(item)
            continue
        problems.append(ControlProblem.of(variable, item, "malformed", shape=named) if utf8 else
                        ControlProblem.of(variable, item, "not-utf8"))
    return items
