"""Which languages a notebook of this study runs on, for any data, and what it left out (issues 21, 30).

The languages *asked for* are the user's when the user gave their own training text (a
manifest: every language in it), else the notebook's *wish list* (the languages it was
written for: the pool's English, German, Nepali, ...). :func:`choose_languages` uses every
asked language the data can serve (training text, and evaluation text where some is
configured) and names each one it cannot use with the reason; a wished language the data
lacks is replaced by its same-script stand-in under the stand-in's own code
(:data:`modtok.text.data.STAND_INS`), and the list is topped up with the first other
available languages until it has ``at_least``. So a user's manifest of any three languages
runs every notebook, no language is used under another's name, and none is dropped without
a word: ``asked + added == used + left out`` (:meth:`Choice.check`).

Why a language asked for can be left out (the two cases the code knows): it is not in the
training text (a wished language on the pool or the wordfreq default), or the evaluation
text has no file for it (a user's manifest language missing from ``$MODTOK_EVAL``).

>>> c = choose_languages(["eng_Latn", "npi_Deva"], available=["deu_Latn", "eng_Latn", "hin_Deva", "rus_Cyrl"])
>>> c.used, c.left_out
(['eng_Latn', 'hin_Deva', 'deu_Latn'], {'npi_Deva': 'not in the training text (its same-script stand-in hin_Deva is used, under its own code)'})
>>> c.added["deu_Latn"]
'added to reach the 3 languages this notebook needs'
>>> choose_languages(["fra_Latn"], available=["spa_Latn", "ita_Latn", "por_Latn"]).used   # nothing wished is there
['spa_Latn', 'ita_Latn', 'por_Latn']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from modtok.errors import DataError
from modtok.text import data, eval_sets


@dataclass(frozen=True)
class Choice:
    """The languages asked for, those used (in order), each asked one left out with its reason,
    and each used one that was not asked for with why it was added."""

    asked: list[str]
    used: list[str]
    left_out: dict[str, str] = field(default_factory=dict)
    added: dict[str, str] = field(default_factory=dict)

    def check(self) -> None:
        """Raise :class:`~modtok.errors.DataError` unless every language asked for is used or left
        out (not both), and every used one was asked for or added with a reason."""
        asked, used, out, added = set(self.asked), set(self.used), set(self.left_out), set(self.added)
        if asked | added != used | out or used & out or asked & added:
            raise DataError(f"language choice does not add up: asked {self.asked}, added {sorted(added)}, "
                            f"used {self.used}, left out {sorted(out)}")

    def lines(self) -> list[str]:
        """What a notebook prints: the languages used, then one line per language left out or added.

        >>> print("\\n".join(Choice(["a_Latn", "b_Latn"], ["a_Latn"], {"b_Latn": "why"}).lines()))
        languages used (1 of 2 asked for): a_Latn
        left out: b_Latn (why)
        """
        out = [f"languages used ({len(set(self.used) & set(self.asked))} of {len(self.asked)} asked for): "
               + ", ".join(self.used)]
        out += [f"left out: {lang} ({why})" for lang, why in self.left_out.items()]
        out += [f"added: {lang} ({why})" for lang, why in self.added.items()]
        return out


def asked_languages(wish: Iterable[str]) -> list[str]:
    """The user's languages when they gave their own training text (every language of the
    manifest), else the notebook's ``wish`` list."""
    if data.training_source() == "manifest":
        return data.training_languages()
    return list(wish)


def _no_eval_reason() -> str:
    evals = eval_sets.eval_set()
    return f"no evaluation text for it in {evals.label()}" if evals is not None else "no evaluation text for it"


def choose_languages(wish: Iterable[str], at_least: int = 3, available: Sequence[str] | None = None,
                     asked: Sequence[str] | None = None, training: Sequence[str] | None = None) -> Choice:
    """The :class:`Choice` of a notebook whose wish list is ``wish``.

    ``asked`` defaults to :func:`asked_languages`, ``available`` (languages the data can serve
    now) to :func:`modtok.text.data.available_languages`, ``training`` (languages the training
    text has, to tell the two reasons apart) to :func:`modtok.text.data.training_languages`
    (``available`` when ``available`` is given). Used: the asked languages that are available,
    wish-list ones first (in wish order); a missing wished one by its stand-in; then the first
    other available languages until there are ``at_least``. Raises
    :class:`~modtok.errors.DataError` when fewer than ``at_least`` languages are available.
    """
    wish = list(dict.fromkeys(wish))
    if available is None:
        available = data.available_languages()
        training = data.training_languages() if training is None else training
    available = list(available)
    training = list(available if training is None else training)
    asked = list(dict.fromkeys(asked_languages(wish) if asked is None else asked))
    if len(available) < at_least:
        raise DataError(f"this notebook needs at least {at_least} languages; the data has "
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
        left_out[lang] = "not in the training text" if lang not in training else _no_eval_reason()
        stand_in = data.STAND_INS.get(lang, "")
        if lang in wish and stand_in in available and stand_in not in asked:
            left_out[lang] += f" (its same-script stand-in {stand_in} is used, under its own code)"
            if stand_in not in used:
                used.append(stand_in)
                added[stand_in] = f"same-script stand-in for {lang}"
    for lang in available:
        if len(used) >= at_least:
            break
        if lang not in used:
            used.append(lang)
            added[lang] = f"added to reach the {at_least} languages this notebook needs"
    choice = Choice(asked, used, left_out, added)
    choice.check()
    return choice
