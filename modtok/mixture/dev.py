"""Dev fertility: each AdaptMix iteration's signal, on the same dev lines.

Fertility (tokens per whitespace word) is defined once, in
:mod:`modtok.evaluation.metrics`; a language written without spaces has no
whitespace word, so its fertility is :func:`~modtok.evaluation.metrics.pivot_fertility`:
tokens per whitespace word of the parallel line in a spaced *pivot* language
(premium × the pivot's fertility, Petrov et al. 2023), which needs parallel dev
text with a spaced language (:func:`spaceless_pivot` picks it, or refuses naming
the languages and what to do). :class:`DevSet` only makes the token totals cheap.
Every iteration measures a new tokenizer on the same dev lines, so for an HF
tokenizer whose token count of a line is the sum over its pre-tokens
(:func:`pipeline_key`) the lines are cut into pre-tokens once per pipeline
and each distinct pre-token is tokenized once: ΣT(x) = Σ_p count(p)·T(p).

>>> from tokenizers import Tokenizer, models, pre_tokenizers
>>> tok = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
>>> tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
>>> dev = DevSet({"aaa_Latn": ["a b a", "b"], "bbb_Latn": ["a  a", "b"], "ccc_Thai": ["ab", "b"]},
...              ["aaa_Latn", "bbb_Latn", "ccc_Thai"])
>>> dev.token_totals(tok)
{'aaa_Latn': 4, 'bbb_Latn': 3, 'ccc_Thai': 2}
>>> dev.fertility(tok)                     # Thai: its 2 tokens over the 4 words of aaa_Latn, the pivot
{'aaa_Latn': 1.0, 'bbb_Latn': 1.0, 'ccc_Thai': 0.5}
>>> dev.basis["ccc_Thai"]
'tokens per whitespace word of the parallel aaa_Latn dev line'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from modtok.bpe.lengths import Pieces
from modtok.bpe.model import BPEModel
from modtok.errors import MissingDevTextError, UnknownLanguageError
from modtok.evaluation import metrics


def pipeline_key(tokenizer) -> tuple[bytes, bytes] | None:
    """What an HF tokenizer's dev pre-tokens depend on — its normalizer and
    pre-tokenizer, as JSON — when its token count of a line is the sum of its
    model's token counts of the line's pre-tokens; else ``None``.

    HF ``tokenizers`` encodes a line as normalizer -> pre-tokenizer -> model,
    the model tokenizing each pre-token on its own ("The tokenization
    pipeline" of the ``tokenizers`` documentation), then the post-processor.
    The sum holds when nothing else acts: no added tokens (they are split out
    before normalisation), no post-processor, truncation or padding. Every
    tokenizer the project trains with HF or exports (:mod:`modtok.bpe.export`)
    qualifies; deployed ones with special tokens and templates do not.

    >>> from tokenizers import Tokenizer, models, pre_tokenizers
    >>> tok = Tokenizer(models.BPE())
    >>> tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    >>> pipeline_key(tok)
    (b'null', b'{"type":"WhitespaceSplit"}')
    >>> tok.add_special_tokens(["<s>"]) and pipeline_key(tok) is None
    True
    >>> trimmed, kept = Tokenizer(models.BPE()), Tokenizer(models.BPE())
    >>> trimmed.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    >>> kept.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False)
    >>> pipeline_key(trimmed) == pipeline_key(kept)            # the same pre-tokens: one cut of the dev lines
    True
    """
    from tokenizers import Tokenizer

    if not isinstance(tokenizer, Tokenizer):
        return None
    if (tokenizer.get_added_tokens_decoder() or tokenizer.post_processor is not None
            or tokenizer.truncation is not None or tokenizer.padding is not None):
        return None
    state = [part.__getstate__() if part is not None else b"null"
             for part in (tokenizer.normalizer, tokenizer.pre_tokenizer)]
    # ByteLevel's trim_offsets moves offsets, never a pre-token: HF's trainer writes true, modtok's export
    # false, and one key for both spares hf-bpe's first AdaptMix run a second cut of the dev lines (5.3 s
    # of its 45.7 s at notebook 06's explorer size, load 6.5)
    return state[0], state[1].replace(b'"trim_offsets":true', b'"trim_offsets":false')


@dataclass
class LinePieces:
    """Lines of several languages cut once into pre-tokens by an HF tokenizer's pipeline
    (:func:`pipeline_key`), each distinct pre-token kept once over all languages: line ``i``
    of ``lang`` is ``pieces[ids[lang][bounds[lang][i]:bounds[lang][i + 1]]]``. Every
    tokenizer of that pipeline then counts each line's tokens by tokenizing each distinct
    pre-token once (:meth:`line_tokens`, :meth:`totals`): what AdaptMix's dev fertility reads
    every iteration (:class:`DevSet`) and notebook 01 reads for every new joint BPE (its test
    lines, :mod:`modtok.studies.modular_tokenizers.inefficiency`).

    >>> from tokenizers import Tokenizer, models, pre_tokenizers
    >>> tok = Tokenizer(models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
    >>> tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    >>> lp = LinePieces.of(tok, {"x": ["ab ab a", "", "b"], "y": ["ab b"]})
    >>> lp.pieces.pieces, {lang: t.tolist() for lang, t in lp.line_tokens(tok).items()}
    (['ab', 'a', 'b'], {'x': [3, 0, 1], 'y': [2]})
    >>> lp.totals(tok)
    {'x': 4, 'y': 2}
    """

    pieces: Pieces
    ids: dict[str, np.ndarray]  # lang -> (n_pretokens_in_lang,) int64, every line's pre-tokens in order
    bounds: dict[str, np.ndarray]  # lang -> (n_lines + 1,) int64: line i is ids[lang][bounds[i]:bounds[i + 1]]

    @classmethod
    def of(cls, tokenizer, lines: Mapping[str, Sequence[str]]) -> LinePieces:
        from modtok.evaluation.audit import pretokens

        index: dict[str, int] = {}
        ids, bounds = {}, {}
        for lang, ls in lines.items():
            cut = [pretokens(tokenizer, line) for line in ls]
            bounds[lang] = np.zeros(len(cut) + 1, np.int64)
            np.cumsum(np.fromiter(map(len, cut), np.int64, count=len(cut)), out=bounds[lang][1:])
            ids[lang] = np.fromiter((index.setdefault(p, len(index)) for line in cut for p in line), np.int64,
                                    count=int(bounds[lang][-1]))
        return cls(Pieces(list(index)), ids, bounds)

    def lengths(self, tokenizer, langs: Sequence[str] | None = None) -> np.ndarray:
        """The token count of each distinct pre-token under ``tokenizer`` (whose
        :func:`pipeline_key` made these pieces), ``(len(pieces),)``; with ``langs``, only the
        pre-tokens of those languages are segmented (the others' entries are 0). For a plain
        BPE model (every tokenizer the BPE trainers make) all pieces are segmented in one numba
        call (:mod:`modtok.bpe.lengths`: 0.27 -> 0.17 s an iteration on 16 x 997 FLORES
        lines); any other model's ``tokenize`` — what the pipeline calls on each
        pre-token — runs once per piece (without the pipeline's per-text
        ``Encoding``: about half the CPU of ``encode_batch_fast`` on the same pre-tokens).
        ``tokenizer`` may also be a modtok :class:`~modtok.bpe.model.BPEModel` whose export's pipeline
        cut these pieces (:meth:`~modtok.bpe.lengths.Pieces.model_lengths`: no export needed)."""
        rows = None  # the pieces to segment: all, or those of langs (a mask: np.unique took 0.13 s for 31 languages)
        if langs is not None:
            used = np.zeros(len(self.pieces.pieces), bool)
            for lang in langs:
                used[self.ids[lang]] = True
            rows = np.flatnonzero(used)
        if isinstance(tokenizer, BPEModel):
            lens = self.pieces.model_lengths(tokenizer, rows)
        else:
            lens = self.pieces.lengths(tokenizer.model, rows)
            if lens is None:
                pieces = self.pieces.pieces if rows is None else [self.pieces.pieces[r] for r in rows]
                lens = np.fromiter(map(len, map(tokenizer.model.tokenize, pieces)), dtype=np.int64, count=len(pieces))
        if rows is None:
            return lens  # (n_pieces,)
        out = np.zeros(len(self.pieces.pieces), np.int64)
        out[rows] = lens
        return out

    def line_tokens(self, tokenizer, langs: Sequence[str] | None = None) -> dict[str, np.ndarray]:
        """Tokens of each line, ``{lang: (n_lines,) int64}`` (of ``langs``, default all): the
        numbers ``token_counts`` gives line by line, from :meth:`lengths` of those languages'
        pre-tokens only."""
        lens = self.lengths(tokenizer, langs)
        out = {}
        for lang in self.ids if langs is None else langs:
            running = np.concatenate([[0], np.cumsum(lens[self.ids[lang]])])  # tokens up to each pre-token
            out[lang] = running[self.bounds[lang][1:]] - running[self.bounds[lang][:-1]]
        return out

    def totals(self, tokenizer) -> dict[str, int]:
        """Σ over each language's lines of the tokens of ``tokenizer``."""
        lens = self.lengths(tokenizer)
        return {lang: int(lens[ids].sum()) for lang, ids in self.ids.items()}


PIVOT = "eng_Latn"  # the pivot of spaceless fertility when the dev text has it (Petrov et al. 2023's)
SPACED_BASIS = "tokens per whitespace word"
EXCLUDE_HINT = ("or leave them out of the mixture explicitly: `modtok adaptmix --exclude-spaceless` "
                "(library: exclude_spaceless=True), which the run then reports")


def _pivot(dev: Mapping[str, Sequence[str]], spaceless: Sequence[str], what: str) -> tuple[str | None, str | None]:
    """``(pivot, None)`` or ``(None, why there is none)``: see :func:`spaceless_pivot`."""
    spaced = [lang for lang, lines in dev.items() if lines and not metrics.written_without_spaces(lang)]
    if not spaced:
        return None, f"{what} has no language written with spaces"
    pivot = PIVOT if PIVOT in spaced else spaced[0]
    counts = {lang: len(dev.get(lang) or ()) for lang in [*spaceless, pivot]}
    if len(set(counts.values())) > 1:
        return None, f"{what} is not parallel (lines: {', '.join(f'{lang} {n}' for lang, n in counts.items())})"
    return pivot, None


def pivot_problem(dev: Mapping[str, Sequence[str]], spaceless: Sequence[str], what: str = "the dev text") -> str | None:
    """Why ``dev`` cannot measure the fertility of the ``spaceless`` languages (no spaced
    language, or not parallel), or ``None`` when it can (:func:`spaceless_pivot`).

    >>> pivot_problem({"tha_Thai": ["a", "b"], "eng_Latn": ["c"]}, ["tha_Thai"])
    'the dev text is not parallel (lines: tha_Thai 2, eng_Latn 1)'
    """
    return _pivot(dev, spaceless, what)[1]


def spaceless_pivot(dev: Mapping[str, Sequence[str]], spaceless: Sequence[str]) -> str:
    """The spaced language whose parallel dev lines measure the fertility of the
    ``spaceless`` languages (:func:`modtok.evaluation.metrics.pivot_fertility`):
    :data:`PIVOT` when ``dev`` has it, else the first language of ``dev`` written with
    spaces (``dev``'s order). Parallel means one line count (the project's check,
    :func:`modtok.evaluation.metrics.aligned`; that line i translates line i is the dev
    text's promise, as FLORES-200's). Without such a language, or when a line count
    differs, :class:`~modtok.errors.MissingDevTextError` names the languages and what to do.

    >>> spaceless_pivot({"tha_Thai": ["a"], "deu_Latn": ["b"], "eng_Latn": ["c"]}, ["tha_Thai"])
    'eng_Latn'
    >>> spaceless_pivot({"tha_Thai": ["a"], "deu_Latn": ["b"]}, ["tha_Thai"])
    'deu_Latn'
    """
    pivot, cause = _pivot(dev, spaceless, "the dev text")
    if cause is None:
        return pivot
    names, one = ", ".join(spaceless), len(spaceless) == 1
    raise MissingDevTextError(
        f"{names} {'is' if one else 'are'} written without spaces: AdaptMix measures {'its' if one else 'their'} "
        "fertility as tokens per whitespace word of the parallel line in a language written with spaces (premium × "
        f"that language's fertility, Petrov et al. 2023), but {cause}. Give parallel dev text (one translation per "
        "line, e.g. FLORES-200 dev or --dev files aligned line by line) that includes English or another spaced "
        f"language, {EXCLUDE_HINT}")


class DevSet:
    """Dev lines and the words each language's fertility divides by (counted once).

    A language written with spaces divides by its own whitespace words; one written
    without (:func:`~modtok.text.data.written_without_spaces`) by those of its parallel
    lines in :attr:`pivot` (:func:`spaceless_pivot`; ``None`` when every language has
    spaces). :attr:`basis` says which, per language.
    For an HF tokenizer whose counts are sums over pre-tokens
    (:func:`pipeline_key`) the lines are cut into pre-tokens once per pipeline
    (cached by its key), and each distinct pre-token (over all languages; ~118k
    for 16 × 997 FLORES lines, ~311k pre-tokens in all) is tokenized once by
    the model alone. The totals are identical to encoding line by line
    (``tests/test_mixture.py``); other tokenizers are encoded line by line.
    Languages are codes ``<lang>_<Script>`` (the script decides the basis).
    """

    def __init__(self, dev: Mapping[str, Sequence[str]], langs: Sequence[str]):
        self.lines, self.words, self.basis = {}, {}, {}
        spaceless = [lang for lang in langs if metrics.written_without_spaces(lang)]
        for lang in langs:
            if not list(dev.get(lang) or []):
                raise MissingDevTextError(f"{lang}: no dev text to measure fertility on")
        self.pivot = spaceless_pivot(dev, spaceless) if spaceless else None
        pivot_words = metrics.word_count(dev[self.pivot]) if spaceless else 0
        for lang in langs:
            lines = list(dev[lang])
            if lang in spaceless:
                words, self.basis[lang] = pivot_words, f"{SPACED_BASIS} of the parallel {self.pivot} dev line"
            else:
                words, self.basis[lang] = metrics.word_count(lines), SPACED_BASIS
            if words == 0:
                raise MissingDevTextError(f"{lang if lang not in spaceless else self.pivot}: "
                                          "the dev text has no whitespace word")
            self.lines[lang], self.words[lang] = lines, words
        self._pieces: dict[tuple[bytes, bytes], LinePieces] = {}

    def describe(self) -> str:
        """What each language's fertility divides by, in one line.

        >>> DevSet({"eng_Latn": ["a b"], "zho_Hans": ["你好"]}, ["eng_Latn", "zho_Hans"]).describe()
        'fertility: tokens per whitespace word; zho_Hans (written without spaces): tokens per whitespace word of the parallel eng_Latn dev line (premium × eng_Latn fertility, Petrov et al. 2023)'
        """
        spaceless = [lang for lang, b in self.basis.items() if b != SPACED_BASIS]
        out = f"fertility: {SPACED_BASIS}"
        if spaceless:
            out += (f"; {', '.join(spaceless)} (written without spaces): {SPACED_BASIS} of the parallel {self.pivot} "
                    f"dev line (premium × {self.pivot} fertility, Petrov et al. 2023)")
        return out

    @property
    def splits(self) -> int:
        """How many pre-token splits of the dev text are cached (one per pipeline seen)."""
        return len(self._pieces)

    def _langs(self, langs: Sequence[str] | None) -> list[str]:
        for lang in langs or ():
            if lang not in self.lines:
                raise UnknownLanguageError(lang, self.lines)
        return list(self.lines) if langs is None else list(langs)

    def token_totals(self, tokenizer, langs: Sequence[str] | None = None) -> dict[str, int]:
        """ΣT(x) over each language's dev lines (of ``langs``, default all)."""
        langs = self._langs(langs)
        key = pipeline_key(tokenizer)
        if key is None:
            return {lang: int(metrics.token_counts(tokenizer, self.lines[lang]).sum()) for lang in langs}
        if key not in self._pieces:
            self._pieces[key] = LinePieces.of(tokenizer, self.lines)
        totals = self._pieces[key].totals(tokenizer)
        return {lang: totals[lang] for lang in langs}

    def fertility(self, tokenizer, langs: Sequence[str] | None = None) -> dict[str, float]:
        """Each language's fertility from its token total and the words counted once:
        :func:`~modtok.evaluation.metrics.fertility_from_totals` (ΣT(x) / Σ words), or for a
        language without spaces :func:`~modtok.evaluation.metrics.pivot_fertility_from_totals`
        (ΣT(x) / Σ words of the pivot's parallel lines). (The words are not recounted: 21 ms
        an iteration on 16 × 997 FLORES lines.)"""
        return {lang: metrics.fertility_from_totals(t, self.words[lang], lang) if self.basis[lang] == SPACED_BASIS
                else metrics.pivot_fertility_from_totals(t, self.words[lang])
                for lang, t in self.token_totals(tokenizer, langs).items()}


def mean(values: Mapping[str, float]) -> float:
    """Unweighted mean over languages (the paper's average).

    >>> mean({"a": 1.0, "b": 2.0})
    1.5
    """
    return float(np.mean(list(values.values())))
