"""Which languages a notebook of this study runs on, for any data (issue 21).

A notebook names a *wish list* (the languages it was written for: the pool's
English, German, Nepali, ...); :func:`choose_languages` keeps those the data has
(a missing one replaced by its same-script stand-in under the stand-in's own
code, :func:`modtok.text.data.pick_languages`), then tops the list up with the
first other available languages until it has ``at_least`` of them. So a user's
manifest of any three languages runs every notebook, and no language is ever
used under another's name.

>>> choose_languages(["eng_Latn", "npi_Deva"], available=["deu_Latn", "eng_Latn", "hin_Deva", "rus_Cyrl"])
['eng_Latn', 'hin_Deva', 'deu_Latn']
>>> choose_languages(["fra_Latn"], available=["spa_Latn", "ita_Latn", "por_Latn"])   # nothing wished is there
['spa_Latn', 'ita_Latn', 'por_Latn']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from modtok.errors import DataError
from modtok.text import data


def choose_languages(wish: Iterable[str], at_least: int = 3, available: Sequence[str] | None = None) -> list[str]:
    """The languages of ``wish`` that ``available`` (default: :func:`modtok.text.data.available_languages`)
    has, in wish order (a same-script stand-in of :data:`modtok.text.data.STAND_INS` under its own
    code for a missing one), then the first other available languages until there are ``at_least``.
    Raises :class:`~modtok.errors.DataError` when fewer than ``at_least`` languages are available."""
    available = list(data.available_languages() if available is None else available)
    if len(available) < at_least:
        raise DataError(f"this notebook needs at least {at_least} languages; the data has "
                        f"{len(available)}: {', '.join(available) or 'none'}")
    chosen: list[str] = []
    for asked in wish:
        lang = asked if asked in available else data.STAND_INS.get(asked, "")
        if lang in available and lang not in chosen:
            chosen.append(lang)
    chosen += [lang for lang in available if lang not in chosen][:max(0, at_least - len(chosen))]
    return chosen
