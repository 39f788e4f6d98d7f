"""Dev fertility: each AdaptMix iteration's signal, on the same dev lines.

Fertility (tokens per whitespace word, NaN for a script written without
spaces) is defined once, in :func:`modtok.evaluation.metrics.fertility_from_counts`;
:class:`DevSet` only makes the token totals it is applied to cheap. Every
iteration measures a new tokenizer on the same dev lines, so for an HF
tokenizer whose token count of a line is the sum over its pre-tokens
(:func:`pipeline_key`) the lines are cut into pre-tokens once per pipeline
and each distinct pre-token is tokenized once: ΣT(x) = Σ_p count(p)·T(p).

>>> from tokenizers import Tokenizer, models, pre_tokenizers
>>> tok = Tokenizer(models.WordLevel({"a": 0, "b": 1, "[UNK]": 2}, unk_token="[UNK]"))
>>> tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
>>> dev = DevSet({"aaa_Latn": ["a b a", "b"], "bbb_Latn": ["a  a"], "ccc_Thai": ["ab"]},
...              ["aaa_Latn", "bbb_Latn", "ccc_Thai"])
>>> dev.token_totals(tok)
{'aaa_Latn': 4, 'bbb_Latn': 2, 'ccc_Thai': 1}
>>> dev.fertility(tok)                     # Thai is written without spaces: undefined
{'aaa_Latn': 1.0, 'bbb_Latn': 1.0, 'ccc_Thai': nan}
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from modtok.bpe.lengths import Pieces
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
    """
    from tokenizers import Tokenizer

    if not isinstance(tokenizer, Tokenizer):
        return None
    if (tokenizer.get_added_tokens_decoder() or tokenizer.post_processor is not None
            or tokenizer.truncation is not None or tokenizer.padding is not None):
        return None
    state = [part.__getstate__() if part is not None else b"null"
             for part in (tokenizer.normalizer, tokenizer.pre_tokenizer)]
    return state[0], state[1]


@dataclass
class _DevPieces:
    """The dev text of every language as distinct pre-tokens (over all
    languages): language ``lang`` has ``counts[lang][i]`` times the pre-token
    ``pieces[ids[lang][i]]``."""

    pieces: Pieces
    ids: dict[str, np.ndarray]  # lang -> (n_distinct_in_lang,) int64
    counts: dict[str, np.ndarray]  # lang -> (n_distinct_in_lang,) int64

    @classmethod
    def of(cls, tokenizer, lines: Mapping[str, Sequence[str]]) -> _DevPieces:
        from modtok.evaluation.audit import pretokens

        index: dict[str, int] = {}
        ids, counts = {}, {}
        for lang, ls in lines.items():
            c = Counter(p for line in ls for p in pretokens(tokenizer, line))
            ids[lang] = np.fromiter((index.setdefault(p, len(index)) for p in c), dtype=np.int64, count=len(c))
            counts[lang] = np.fromiter(c.values(), dtype=np.int64, count=len(c))
        return cls(Pieces(list(index)), ids, counts)

    def totals(self, tokenizer) -> dict[str, int]:
        """Σ over each language's lines of the tokens of ``tokenizer`` (whose
        :func:`pipeline_key` made these pieces): the token count of each distinct
        pre-token, weighted by the counts. For a plain BPE model (every tokenizer
        the BPE trainers make) all pieces are segmented in one numba call
        (:mod:`modtok.bpe.lengths`: 0.27 -> 0.17 s an iteration on 16 x 997 FLORES
        lines); any other model's ``tokenize`` — what the pipeline calls on each
        pre-token — runs once per piece (without the pipeline's per-text
        ``Encoding``: about half the CPU of ``encode_batch_fast`` on the same pre-tokens)."""
        lens = self.pieces.lengths(tokenizer.model)  # (n_pieces,)
        if lens is None:
            pieces = self.pieces.pieces
            lens = np.fromiter(map(len, map(tokenizer.model.tokenize, pieces)), dtype=np.int64, count=len(pieces))
        return {lang: int(lens[ids] @ self.counts[lang]) for lang, ids in self.ids.items()}


class DevSet:
    """Dev lines and their whitespace-word counts (counted once).

    For an HF tokenizer whose counts are sums over pre-tokens
    (:func:`pipeline_key`) the lines are cut into pre-tokens once per pipeline
    (cached by its key), and each distinct pre-token (over all languages; ~118k
    for 16 × 997 FLORES lines, ~311k pre-tokens in all) is tokenized once by
    the model alone. The totals are identical to encoding line by line
    (``tests/test_mixture.py``); other tokenizers are encoded line by line.
    Languages are codes ``<lang>_<Script>`` (the script decides whether
    fertility is defined).
    """

    def __init__(self, dev: Mapping[str, Sequence[str]], langs: Sequence[str]):
        self.lines, self.words = {}, {}
        for lang in langs:
            lines = list(dev.get(lang) or [])
            if not lines:
                raise MissingDevTextError(f"{lang}: no dev text to measure fertility on")
            words = metrics.word_count(lines)
            if words == 0:
                raise MissingDevTextError(f"{lang}: the dev text has no whitespace word")
            self.lines[lang], self.words[lang] = lines, words
        self._pieces: dict[tuple[bytes, bytes], _DevPieces] = {}

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
            self._pieces[key] = _DevPieces.of(tokenizer, self.lines)
        totals = self._pieces[key].totals(tokenizer)
        return {lang: totals[lang] for lang in langs}

    def fertility(self, tokenizer, langs: Sequence[str] | None = None) -> dict[str, float]:
        """Each language's fertility (:func:`modtok.evaluation.metrics.fertility_from_totals`
        of its token total and its words, counted once): ΣT(x) / Σ words, NaN for a script
        without spaces. (The words are not recounted: 21 ms an iteration on 16 × 997 FLORES lines.)"""
        return {lang: metrics.fertility_from_totals(t, self.words[lang], lang)
                for lang, t in self.token_totals(tokenizer, langs).items()}


def mean(values: Mapping[str, float]) -> float:
    """Unweighted mean over languages (the paper's average).

    >>> mean({"a": 1.0, "b": 2.0})
    1.5
    """
    return float(np.mean(list(values.values())))
