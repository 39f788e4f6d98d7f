"""Which languages a study uses, for any data, and why each other one is not used.

The one language chooser of every notebook's study. The languages *asked for* are the
user's when the user gave their own training text (a manifest: every language in it), else
the study's *wish list* (the languages its paper was written for). :func:`choose` uses
every asked language the data can serve (training text, and evaluation text where some is
configured), wish-list ones first, and names each one it cannot use with the reason; a
wished language the data lacks is replaced by its same-script stand-in under the stand-in's
own code (:data:`modtok.text.data.STAND_INS`, e.g. Nepali -> Hindi on the wordfreq default),
and the list is topped up with the data's first other languages until it has ``at_least``.
So a user's manifest of any languages runs every notebook, no language is used under
another's name, and none is dropped without a word: ``asked + added == used + left out``
(:meth:`Choice.check`). Later steps that drop a language (no corpus size, no training
text, a tokenizer that cannot be trained) call :meth:`Choice.leave_out`, so a study can
never print "left out: none" while leaving one out.

(The command line does not choose: the languages a user types are used as typed or refused,
:func:`modtok.text.data.require_languages`.)

Why a language asked for can be left out at the choice (the two cases the code knows): it
is not in the training text, or the evaluation text has no file for it.

>>> c = choose(["eng_Latn", "npi_Deva", "xho_Latn"], available=["deu_Latn", "eng_Latn", "hin_Deva", "rus_Cyrl"])
>>> c.used, c.added
(['eng_Latn', 'hin_Deva', 'deu_Latn'], {'hin_Deva': 'same-script stand-in for npi_Deva', 'deu_Latn': 'added to reach the 3 languages this study needs'})
>>> c.left_out
{'npi_Deva': 'not in the training text (its same-script stand-in hin_Deva is taken, under its own code)', 'xho_Latn': 'not in the training text'}
>>> c.unasked
['rus_Cyrl']
>>> c.leave_out("hin_Deva", "no corpus size"); c.used, c.left_out["hin_Deva"]
(['eng_Latn', 'deu_Latn'], 'no corpus size')
>>> choose(["fra_Latn"], available=["spa_Latn", "ita_Latn", "por_Latn"]).used   # nothing wished is there
['spa_Latn', 'ita_Latn', 'por_Latn']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from modtok.errors import DataError, UsageError
from modtok.text import data, eval_sets

NOT_IN_TRAINING = "not in the training text"


@dataclass
class Choice:
    """``asked``: the languages asked for; ``used``: those used, in order; ``left_out``:
    ``{language: reason}`` for each asked (or added) one not used; ``added``: ``{language:
    reason}`` for each used one that was not asked for (a stand-in, a top-up); ``unasked``:
    the data's other languages, neither asked for nor used (shown, not a reason to act)."""

    asked: list[str]
    used: list[str]
    left_out: dict[str, str] = field(default_factory=dict)
    added: dict[str, str] = field(default_factory=dict)
    unasked: list[str] = field(default_factory=list)

    def check(self) -> None:
        """Raise :class:`~modtok.errors.DataError` unless every language asked for or added
        is used or left out (not both), and no asked one is also recorded as added."""
        asked, used, out, added = set(self.asked), set(self.used), set(self.left_out), set(self.added)
        if asked | added != used | out or used & out or asked & added:
            raise DataError(f"language choice does not add up: asked {self.asked}, added {sorted(added)}, "
                            f"used {self.used}, left out {sorted(out)}")

    def leave_out(self, lang: str, reason: str) -> None:
        """Stop using ``lang`` (a used language) for ``reason`` (a stand-in or top-up stays in
        :attr:`added`, so the lines say both why it came and why it went)."""
        if lang not in self.used:
            raise UsageError(f"{lang} is not one of the languages used ({', '.join(self.used)})")
        self.used.remove(lang)
        self.left_out[lang] = reason

    def keep_only(self, keep: Iterable[str], reason: str) -> None:
        """Leave out every used language not in ``keep``, for ``reason``."""
        keep = set(keep)
        for lang in [lang for lang in self.used if lang not in keep]:
            self.leave_out(lang, reason)

    def lines(self) -> list[str]:
        """What a notebook prints: the languages used, then one line per language left out or
        added, then the data's languages not asked for.

        >>> print("\\n".join(Choice(["a_Latn", "b_Latn"], ["a_Latn"], {"b_Latn": "why"}).lines()))
        languages used (1 of 2 asked for): a_Latn
        left out: b_Latn (why)
        """
        out = [f"languages used ({len(set(self.used) & set(self.asked))} of {len(self.asked)} asked for): "
               + ", ".join(self.used)]
        out += [f"left out: {lang} ({why})" for lang, why in self.left_out.items()]
        out += [f"added: {lang} ({why})" for lang, why in self.added.items()]
        if self.unasked:
            out.append(f"in the data, not asked for: {', '.join(self.unasked)}")
        return out


def asked_languages(wish: Iterable[str]) -> list[str]:
    """The user's languages when they gave their own training text (every language of the
    manifest), else the study's ``wish`` list."""
    if data.training_source() == "manifest":
        return data.training_languages()
    return list(wish)


def _no_eval_reason() -> str:
    evals = eval_sets.eval_set()
    return f"no evaluation text for it in {evals.label()}" if evals is not None else "no evaluation text for it"


def choose(wish: Iterable[str], at_least: int = 3, *, fewest: int | None = None,
           available: Sequence[str] | None = None, asked: Sequence[str] | None = None,
           training: Sequence[str] | None = None) -> Choice:
    """The :class:`Choice` of a study whose wish list is ``wish``.

    ``asked`` defaults to :func:`asked_languages`, ``available`` (languages the data can serve
    now) to :func:`modtok.text.data.available_languages`, ``training`` (languages the training
    text has, to tell the two reasons apart) to :func:`modtok.text.data.training_languages`
    (``available`` when ``available`` is given). Used: the asked languages that are available,
    wish-list ones first (in wish order); a missing wished one by its stand-in; then the first
    other available languages until there are ``at_least`` (as many as the data has). Raises
    :class:`~modtok.errors.DataError` when the data has fewer than ``fewest`` (default
    ``at_least``) languages.
    """
    wish = list(dict.fromkeys(wish))
    if available is None:
        available = data.available_languages()
        training = data.training_languages() if training is None else training
    available = list(available)
    training = list(available if training is None else training)
    asked = list(dict.fromkeys(asked_languages(wish) if asked is None else asked))
    fewest = at_least if fewest is None else fewest
    if len(available) < fewest:
        raise DataError(f"this study needs at least {fewest} languages; the data has "
                        f"{len(available)}: {', '.join(available) or 'none'}")
    order = [lang for lang in wish if lang in asked] + [lang for lang in asked if lang not in wish]
    used: list[str] = []
    left_out: dict[str, str] = {}
    added: dict[str, str] = {}
    for lang in order:
        if lang in available:
            if lang not in used:
                used.append(lang)
            continue
        left_out[lang] = NOT_IN_TRAINING if lang not in training else _no_eval_reason()
        stand_in = data.STAND_INS.get(lang, "")
        if lang in wish and stand_in in available and stand_in not in asked:
            left_out[lang] += f" (its same-script stand-in {stand_in} is taken, under its own code)"
            if stand_in not in used:
                used.append(stand_in)
                added[stand_in] = f"same-script stand-in for {lang}"
    for lang in available:
        if len(used) >= at_least:
            break
        if lang not in used:
            used.append(lang)
            added[lang] = f"added to reach the {at_least} languages this study needs"
    choice = Choice(asked, used, left_out, added, [lang for lang in available if lang not in used + asked])
    choice.check()
    return choice
