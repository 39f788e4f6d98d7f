"""Which languages a study uses, and why each other one is not used.

A notebook asks for a wish list (a paper's languages); the data has languages of its
own. :func:`choose` takes the languages of the list that the data has (a missing one
replaced by its same-script stand-in under the stand-in's own code, as
:func:`modtok.text.data.pick_languages` does), or every language of the data when fewer
than ``min_langs`` of the list are there (a user's corpus need not have the paper's
languages). The :class:`Choice` it returns accounts for every language asked for: used,
stood in for, or left out with the reason; later steps that drop a language (no corpus
size, no dev text, no spaces to count words by) call :meth:`Choice.leave_out`, so the
study can never print "left out: none" while leaving one out.

>>> c = choose(["eng_Latn", "npi_Deva", "xho_Latn"], ["eng_Latn", "hin_Deva", "deu_Latn"],
...            min_langs=1, stand_ins={"npi_Deva": "hin_Deva"})
>>> c.langs, c.stand_ins, c.left_out
(['eng_Latn', 'hin_Deva'], {'npi_Deva': 'hin_Deva'}, {'xho_Latn': 'not in the data'})
>>> c.unasked
['deu_Latn']
>>> c.leave_out("hin_Deva", "no corpus size"); c.langs, c.left_out["npi_Deva"]
(['eng_Latn'], 'its stand-in hin_Deva: no corpus size')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from modtok.errors import UsageError

NOT_IN_DATA = "not in the data"
NO_EVAL = "no evaluation text for it"


@dataclass
class Choice:
    """``asked``: the wish list; ``langs``: the languages used, in order; ``stand_ins``:
    ``{asked: used instead}``; ``left_out``: ``{asked (or the data's, when every language
    of the data was taken): reason}``; ``unasked``: languages the data has that were not
    asked for and are not used (only when the wish list was served)."""

    asked: list[str]
    langs: list[str]
    stand_ins: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    unasked: list[str] = field(default_factory=list)

    def leave_out(self, lang: str, reason: str) -> None:
        """Stop using ``lang`` (a used language), recording ``reason`` under the code
        that was asked for (a stand-in's under the language it stood in for)."""
        if lang not in self.langs:
            raise UsageError(f"{lang} is not one of the languages used ({', '.join(self.langs)})")
        self.langs.remove(lang)
        stood_for = [a for a, used in self.stand_ins.items() if used == lang]
        for a in stood_for:
            del self.stand_ins[a]
            self.left_out[a] = f"its stand-in {lang}: {reason}"
        if lang in self.asked or not stood_for:
            self.left_out[lang] = reason

    def keep_only(self, keep: Iterable[str], reason: str) -> None:
        """Leave out every used language not in ``keep``, for ``reason``."""
        keep = set(keep)
        for lang in [lang for lang in self.langs if lang not in keep]:
            self.leave_out(lang, reason)

    def accounted(self) -> bool:
        """Every language asked for is used, stood in for by a used one, or left out."""
        used = set(self.langs)
        return all(a in used or self.stand_ins.get(a) in used or a in self.left_out for a in self.asked)

    def lines(self) -> list[str]:
        """What a notebook prints: the languages used, stand-ins, left out (with reasons),
        and the data's languages not asked for."""
        out = [f"used ({len(self.langs)}): {', '.join(self.langs)}"]
        if self.stand_ins:
            out.append("stand-ins: " + ", ".join(f"{a} -> {b}" for a, b in self.stand_ins.items()))
        out.append("left out: " + ("; ".join(f"{a} ({why})" for a, why in self.left_out.items()) or "none"))
        if self.unasked:
            out.append(f"in the data, not asked for: {', '.join(self.unasked)}")
        return out


def choose(preferred: Sequence[str], available: Sequence[str], trained: Sequence[str] = (), *,
           min_langs: int = 3, stand_ins: Mapping[str, str] | None = None) -> Choice:
    """The languages of ``preferred`` in ``available`` (the languages with training and
    evaluation text; ``trained``: those with training text, to say why one without
    evaluation text is left out), or all of ``available`` when fewer than ``min_langs``
    of ``preferred`` are served. ``stand_ins``: same-script replacements (default
    :data:`modtok.text.data.STAND_INS`)."""
    if stand_ins is None:
        from modtok.text.data import STAND_INS as stand_ins
    have, trained = list(available), set(trained)

    def why(lang: str) -> str:
        return NO_EVAL if lang in trained else NOT_IN_DATA

    used, subs, left = [], {}, {}
    for lang in preferred:
        if lang in have:
            chosen = lang
        elif stand_ins.get(lang) in have:
            chosen = subs[lang] = stand_ins[lang]
        else:
            left[lang] = why(lang)
            continue
        if chosen not in used:
            used.append(chosen)
    if len(used) >= min(min_langs, len(preferred)):
        return Choice(list(preferred), used, subs, left, [lang for lang in have if lang not in used])
    return Choice(list(preferred), have, {}, {lang: why(lang) for lang in preferred if lang not in have})
