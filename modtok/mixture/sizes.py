"""The baseline mixtures: uniform (UniMix), natural (published sizes, with a
temperature), and skewed (the EnHiMix analog); and the paper's 16 languages.

Each is a :data:`modtok.mixture.update.Mixture` (shares summing to 1) that
AdaptMix starts from or is compared with; the sampler draws any of them
(:meth:`modtok.mixture.pool.TextPool.sample`).

>>> natural(["hin_Deva", "asm_Beng"])["asm_Beng"] == 32.6 / (1860.0 + 32.6)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from modtok.errors import DataError, MixtureError
from modtok.mixture.update import Mixture, normalise


def uniform(langs: Sequence[str]) -> Mixture:
    """UniMix: every language the same share.

    >>> uniform(["a", "b"])
    {'a': 0.5, 'b': 0.5}
    """
    langs = list(langs)
    if not langs:
        raise MixtureError("uniform mixture of no language")
    return {lang: 1.0 / len(langs) for lang in langs}


# Published per-language sizes (millions of whitespace tokens) of IndicCorp, the
# AI4Bharat web/news corpus of Kakwani et al. 2020 ("IndicNLPSuite", Findings of
# EMNLP 2020), as listed in its download table: AI4Bharat/indicnlp.ai4bharat.org,
# content/pages/indicnlp-corpus.md ("Tokens" column; English is Indian-English news).
# IndicCorp v1 has 12 of the paper's 16 languages. For Maithili, Nepali, Sanskrit
# and Sindhi we found no per-language figure in a source we could check (the
# Sangraha dataset card's statistics table was only partly readable), so none is
# given here: ``natural(..., missing="floor")`` makes that explicit.
INDICCORP_TOKENS_M: dict[str, float] = {
    "asm_Beng": 32.6, "ben_Beng": 836.0, "eng_Latn": 1220.0, "guj_Gujr": 719.0,
    "hin_Deva": 1860.0, "kan_Knda": 713.0, "mal_Mlym": 767.0, "mar_Deva": 551.0,
    "ory_Orya": 107.0, "pan_Guru": 773.0, "tam_Taml": 582.0, "tel_Telu": 674.0,
}

# The 16 languages of the AdaptMix paper (all in the pool and in FLORES-200).
PAPER_LANGUAGES = [
    "asm_Beng", "ben_Beng", "eng_Latn", "guj_Gujr", "hin_Deva", "kan_Knda", "mai_Deva", "mal_Mlym",
    "mar_Deva", "npi_Deva", "ory_Orya", "pan_Guru", "san_Deva", "snd_Arab", "tam_Taml", "tel_Telu",
]


def missing_sizes(langs: Sequence[str], sizes: Mapping[str, float] = INDICCORP_TOKENS_M) -> list[str]:
    """The languages of ``langs`` without a published size in ``sizes``."""
    return [lang for lang in langs if lang not in sizes]


def natural(
    langs: Sequence[str],
    sizes: Mapping[str, float] = INDICCORP_TOKENS_M,
    tau: float = 1.0,
    missing: str = "error",
) -> Mixture:
    """Shares ∝ size_l^(1/τ): the natural resource distribution (τ = 1) or its
    temperature-smoothed version (τ = 3.3 in "Parity-Aware Byte-Pair Encoding").

    ``missing="error"`` refuses a language without a size; ``missing="floor"``
    gives it the smallest size among ``langs`` that have one (a stated
    stand-in for "low-resource, figure unknown", not a published number).

    >>> natural(["a", "b"], {"a": 3.0, "b": 1.0})
    {'a': 0.75, 'b': 0.25}
    >>> {l: round(s, 3) for l, s in natural(["a", "b", "c"], {"a": 4.0, "b": 1.0}, tau=2.0, missing="floor").items()}
    {'a': 0.5, 'b': 0.25, 'c': 0.25}
    """
    if not (isinstance(tau, (int, float)) and tau > 0):
        raise MixtureError(f"temperature tau must be > 0, got {tau!r}")
    if missing not in ("error", "floor"):
        raise MixtureError(f"missing must be 'error' or 'floor', got {missing!r}")
    langs = list(langs)
    absent = missing_sizes(langs, sizes)
    known = [sizes[lang] for lang in langs if lang in sizes]
    if absent and (missing == "error" or not known):
        raise DataError(f"no published corpus size for {', '.join(absent)} (pass sizes=... or missing='floor')")
    floor = min(known) if known else 0.0
    return normalise({lang: float(sizes.get(lang, floor)) ** (1.0 / tau) for lang in langs}, "natural mixture")


def skewed(langs: Sequence[str], favoured: Sequence[str] = ("eng_Latn", "hin_Deva"), share: float = 0.5) -> Mixture:
    """The EnHiMix analog: the ``favoured`` languages split ``share`` of the
    budget equally, the others split the rest equally.

    >>> skewed(["eng_Latn", "hin_Deva", "tam_Taml", "tel_Telu"])
    {'eng_Latn': 0.25, 'hin_Deva': 0.25, 'tam_Taml': 0.25, 'tel_Telu': 0.25}
    >>> skewed(["eng_Latn", "hin_Deva", "a", "b", "c", "d"], share=0.6)["eng_Latn"]
    0.3
    """
    langs = list(langs)
    fav = [lang for lang in langs if lang in set(favoured)]
    rest = [lang for lang in langs if lang not in set(favoured)]
    if not fav:
        raise MixtureError(f"none of the favoured languages {list(favoured)} is in the mixture")
    if not 0.0 < share < 1.0 and rest:
        raise MixtureError(f"favoured share must be in (0, 1), got {share!r}")
    if not rest:
        return uniform(langs)
    return {lang: (share / len(fav) if lang in fav else (1.0 - share) / len(rest)) for lang in langs}
