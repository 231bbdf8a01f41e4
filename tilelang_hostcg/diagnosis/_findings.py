"""A finding as data: what was found (its warning class, whose ``code`` names it), the facts by name,
and where it came from; :func:`warn` words it (:mod:`._words`) and gives it as that warning."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import ActivationFailedPluginWarning, PluginWarning, at_import, warn_once, warn_plugin

if TYPE_CHECKING:
    from ..core import Facts

Fact = str | None


@dataclass(frozen=True, slots=True)
class Finding:
    """What a layer found: ``category`` (a :class:`PluginWarning` class: its ``code``), ``facts`` (plain
    values by name, in the order that identifies the finding) and ``source`` (the part of the package,
    or the compiler, it came from). Its words are :func:`._words.words`'s alone."""

    category: type[PluginWarning]
    facts: tuple[tuple[str, Fact], ...]
    source: str
    wording: tuple[str, ...] = ()
    """Facts that only word it (what a state says now) and do not tell it from another: not in :attr:`key`."""

    @classmethod
    def of(cls, category: type[PluginWarning], source: str, *, wording: tuple[str, ...] = (),
           **facts: Fact) -> Finding:
        """A finding of ``category`` from ``source`` about ``facts`` (``wording``: the names of those that
        only word it)."""
        return cls(category, tuple(facts.items()), source, wording)

    @property
    def code(self) -> str:
        """Its code: its warning class's."""
        return self.category.code

    @property
    def key(self) -> Facts:
        """The facts' values: with :attr:`code`, what the finding is (a warning given once is keyed by them)."""
        return tuple(value for name, value in self.facts if name not in self.wording)

    def __getitem__(self, name: str) -> Fact:
        return dict(self.facts)[name]


def warn(finding: Finding, *, once: bool = False, shown: bool = False) -> str:
    """Give ``finding`` as its warning at the user's line, worded by :mod:`._words`; ``once``: once per
    process for its code and facts; ``shown``: shown, never raised, where the filters make warnings errors
    (where no code can catch it: an import, or a build already done). Returns its words."""
    from ._words import words
    message = words(finding)
    if once:
        warn_once(message, finding.category, facts=finding.key)
    elif shown:
        with at_import():
            warn_plugin(message, finding.category, facts=finding.key)
    else:
        warn_plugin(message, finding.category, facts=finding.key)
    return message


def warn_activation_failed(compiler: str, exc: BaseException) -> str:
    """Activation of the ``compiler`` integration failed with ``exc``: the one warning (shown, never
    raised, also under ``-W error``) of both clients and the start-up hook; its words."""
    try:
        cause = f"{type(exc).__name__}: {exc}"
    except Exception:  # an exception that cannot be printed
        cause = type(exc).__name__
    from ._words import words
    finding = Finding.of(ActivationFailedPluginWarning, compiler, compiler=compiler, cause=cause)
    message = words(finding)
    with suppress(Exception), at_import():  # never fail the import
        warn_plugin(message, finding.category, facts=finding.key)
    return message
