"""Parity-aware BPE ("Parity-Aware Byte-Pair Encoding", Foroutan, Meister et al.,
arXiv:2508.04796, Algorithm 2): BPE's greedy loop, but each merge is the most
frequent pair *of the language that is currently the most expensive*, applied
to every language.

    V <- 256 bytes;  D_l <- parallel dev text of language l
    for m in 1 .. K:
        if m <= J:                     # hybrid: the first J merges are classical
            (a, b) <- most frequent pair of the concatenated training data
        else:
            l* <- argmax_l  |tokenize(D_l)|              # ties: lowest index
                  (window: the first l in decreasing cost whose share of the
                   last w parity choices is <= alpha / L)
                  (ratio: argmin_l  (T0_l / T_l) / (r_l / r_1), no dev set)
            (a, b) <- most frequent pair in l*'s training data
        add merge (a, b) -> ab; apply it to the training words of every language
        and to the dev words (dev costs are updated, never re-encoded)

The statistics live in the merge engine (:class:`~modtok.bpe.engine.Engine`,
per-language lazy heaps); this module is only the policy. The dev words are
*tracked* columns of the same engine: segmented by every merge and totalled per
language, in no pair statistic. So the dev set is never re-encoded (a merge
rewrites just the words, training or dev, that hold the pair), and a word in
both is rewritten once.

Variants are options of :func:`train`: ``variant`` ``"base"``, ``"window"``
(``window=w``, ``alpha``) or ``"classical"`` (every merge global, the paper's
baseline on the same data), ``hybrid=J``, ``ratios=[r_1, ..]`` (ratio mode),
``min_frequency`` with ``on_exhausted="stop"`` (the reference: the run ends
when the chosen language has no pair of count >= ``min_frequency``) or
``"skip"`` (that language is passed over at that step and the next one in cost
order is tried). When the window caps every language (possible for alpha < 1; the
reference then crashes on an empty argmax) the cap is lifted for that step: our reading.

Two modes:

- default (lossless): the project's pre-tokenizers (:mod:`modtok.text.pretokenize`,
  whitespace kept), HF-order tie-breaks (:mod:`modtok.bpe.engine`), a
  ``tokenizer.json`` that round-trips any text; ``base=`` continues
  parity-aware training on an existing model, every original id unchanged.
- ``compat="reference"``: what the reference implementation
  (cimeister/parity-aware-bpe, ``parity_aware_learn_bpe.py``) does, merge for
  merge: its pre-tokenizer (HF ``Whitespace`` then ``ByteLevel`` with a space
  before **every** pre-token, whitespace discarded: :func:`reference_pretokens`),
  ties between pairs to the lexicographically largest pair of byte-level
  strings, ``vocab_size - 256`` counts merges (its ``-s``), the stop rule, and
  its window denominator ``L + 1`` when ``hybrid > 0`` (a bug of the original
  file; ``L`` otherwise and in the default mode).

Worked example (two languages, "y" is the costlier one on the dev side, so the
first merge is y's most frequent pair although x's pair is more frequent overall):

>>> from collections import Counter
>>> train_counts = {"x": Counter({"ab": 9}), "y": Counter({"cd": 2})}
>>> dev_counts = {"x": Counter({"ab": 1}), "y": Counter({"cd": 2})}
>>> res = train(train_counts, dev_counts, 257, scheme="whitespace")
>>> [res.model.vocab[i] for i in range(256, len(res.model))], res.choices
([b'cd'], [1])
>>> res.dev_tokens.tolist()          # dev cost per language before / after
[[2, 4], [2, 2]]
"""

from __future__ import annotations

import json
import time
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import regex

from modtok import atomic
from modtok.bpe.engine import Engine
from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.bpe.standard import check_budget
from modtok.errors import (
    DataError,
    EncodingError,
    MissingDevTextError,
    ParallelCorpusError,
    ParityConfigError,
)
from modtok.evaluation.metrics import gini
from modtok.text.pretokenize import DEFAULT_SCHEME, byte_level, count_by_language

VARIANTS = ("base", "window", "classical")
GLOBAL = -1  # the "language" of a classical (concatenation) merge in ``choices``


# --------------------------------------------------------------------------
# the reference's pre-tokenizer (compat mode)

# HF ``Whitespace`` (``\w+|[^\w\s]+`` with Rust-regex Unicode classes) in the
# ``regex`` module: Python's ``\w`` splits Devanagari at vowel signs, this does
# not. Matches HF on every line of the 50 FLORES-200 dev files (golden README).
_WORD = r"\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}"
REFERENCE_PATTERN = rf"[{_WORD}]+|[^{_WORD}\p{{White_Space}}]+"
_REFERENCE = regex.compile(REFERENCE_PATTERN)


def reference_pretokens(line: str) -> list[str]:
    """The reference's pre-tokens: word and punctuation runs, whitespace dropped,
    a space before every one (``ByteLevel(add_prefix_space=True)`` after ``Whitespace``).

    >>> reference_pretokens("hello, world!")
    [' hello', ' ,', ' world', ' !']
    """
    return [" " + piece for piece in _REFERENCE.findall(line)]


def reference_lines(path) -> list[str]:
    """Lines of a text file as the reference reads them (``codecs.open``: no NFC,
    split at ``\\n``, ``\\r`` and the other ``str.splitlines`` separators)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise DataError(f"{path}: cannot read ({e.strerror})") from None
    try:
        return raw.decode("utf-8").splitlines()
    except UnicodeDecodeError as e:
        raise EncodingError(path, e.start) from None


def _reference_counts(lines: Iterable[str]) -> Counter:
    # One findall over the joined text: no piece holds whitespace, so none crosses a
    # line break, and the per-line calls cost 15% more.
    counts = Counter(_REFERENCE.findall("\n".join(lines)))
    return Counter({" " + piece: n for piece, n in counts.items()})


# --------------------------------------------------------------------------
# counting


def _check_compat(compat: str | None) -> None:
    if compat not in (None, "reference"):
        raise ParityConfigError(f"unknown compat mode {compat!r} (known: None, 'reference')")


def count_corpus(
    corpus: Mapping[str, Iterable[str]], scheme: str = DEFAULT_SCHEME, compat: str | None = None
) -> dict[str, Counter]:
    """``{lang: Counter(pre-token -> count)}`` with the scheme, or the reference's
    pre-tokenizer when ``compat="reference"``."""
    _check_compat(compat)
    if compat == "reference":
        return {lang: _reference_counts(lines) for lang, lines in corpus.items()}
    return count_by_language(corpus, scheme)


def count_dev(
    dev: Mapping[str, Sequence[str]], scheme: str = DEFAULT_SCHEME, compat: str | None = None
) -> dict[str, Counter]:
    """:func:`count_corpus` of a parallel dev set; its sides must have the same
    number of lines (line i is the same sentence in every language)."""
    sizes = {lang: len(lines) for lang, lines in dev.items()}
    if len(set(sizes.values())) > 1:
        shown = ", ".join(f"{lang}: {n}" for lang, n in sizes.items())
        raise ParallelCorpusError(f"dev sets are not parallel: different numbers of lines ({shown})")
    return count_corpus(dev, scheme, compat)


# --------------------------------------------------------------------------
# the result


@dataclass
class ParityResult:
    """A trained model and the trajectory that chose its merges.

    ``choices[m]``: the language index (in ``languages``) of merge ``m`` of this run,
    :data:`GLOBAL` (-1) for a classical merge; when the stop rule ended the run it
    holds one more entry, the exhausted language. ``dev_tokens[k, l]``: dev cost of
    language ``l`` after ``k`` merges of this run (shape (merges + 1, L); ``(0, L)``
    without a dev set); ``train_tokens`` the same on the training words in ratio mode,
    which chooses by it, else only before and after (shape (2, L)).
    ``base_merges``: merges taken over from ``base`` (ranks below it are the base's).
    In compat mode ``model.scheme`` is only a label ("whitespace"): encode with
    :meth:`tokenizer`, which carries the reference's pre-tokenizer.
    """

    model: BPEModel
    languages: list[str]
    choices: list[int]
    dev_tokens: np.ndarray
    train_tokens: np.ndarray
    stop_message: str | None
    compat: str | None
    base_merges: int = 0
    timings: dict = field(default_factory=dict)  # seconds: "engines" (set-up), "merges" (the loop)

    @property
    def merges(self) -> list[tuple[int, int]]:
        """The merges this run learned (after ``base_merges``)."""
        return self.model.merges[self.base_merges :]

    def language_merge_counts(self) -> dict[int, int]:
        """How many merges each language (or -1, global) chose."""
        n = len(self.merges)
        return dict(sorted(Counter(self.choices[:n]).items()))

    def gini_dev(self) -> float:
        """Gini of the final per-language dev cost (raw token counts)."""
        return gini(self.dev_tokens[-1])

    def merges_txt(self) -> str:
        """``#version: 0.2`` then one ``left right`` line per merge (byte-level strings),
        the reference's ``merges.txt`` (all merges of the model, base included)."""
        vocab = self.model.vocab
        lines = ["#version: 0.2"]
        lines += [f"{byte_level(vocab[a])} {byte_level(vocab[b])}" for a, b in self.model.merges]
        return "\n".join(lines) + "\n"

    def save_merges(self, path) -> Path:
        path = Path(path)
        atomic.write_text(path, self.merges_txt())
        return path

    def tokenizer_json(self) -> dict:
        """HF ``tokenizer.json``: lossless in the default mode (:mod:`modtok.bpe.export`); in
        compat mode the same ids and merges behind the reference's pre-tokenizer."""
        tj = to_tokenizer_json(self.model)
        if self.compat == "reference":
            tj["pre_tokenizer"] = {
                "type": "Sequence",
                "pretokenizers": [
                    {"type": "Whitespace"},
                    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                     "use_regex": False},
                ],
            }
        return tj

    def save(self, path) -> Path:
        """Write :meth:`tokenizer_json` atomically."""
        path = Path(path)
        atomic.write_json(path, self.tokenizer_json())
        return path

    def tokenizer(self):
        """The HF ``tokenizers.Tokenizer`` of :meth:`tokenizer_json`."""
        from tokenizers import Tokenizer

        return Tokenizer.from_str(json.dumps(self.tokenizer_json()))


# --------------------------------------------------------------------------
# the policy


def _check_options(langs, dev_counts, variant, hybrid, window, alpha, ratios, merges, on_exhausted):
    if variant not in VARIANTS:
        raise ParityConfigError(f"unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    if on_exhausted not in ("stop", "skip"):
        raise ParityConfigError(f"on_exhausted={on_exhausted!r}: expected 'stop' or 'skip'")
    if not langs:
        raise DataError("no training language")
    if not 0 <= hybrid < merges and variant != "classical":
        raise ParityConfigError(
            f"hybrid J={hybrid} must be >= 0 and below the number of merges ({merges}); "
            "J >= merges is classical BPE (variant='classical')"
        )
    if variant == "window":
        if window < 1:
            raise ParityConfigError(f"window={window}: the window must hold at least 1 merge")
        if not alpha > 0:
            raise ParityConfigError(f"alpha={alpha}: the window cap alpha/L needs alpha > 0")
    if ratios is not None:
        if len(ratios) != len(langs):
            raise ParityConfigError(
                f"{len(ratios)} ratios for {len(langs)} languages ({', '.join(langs)}): one per language"
            )
        if any(not r > 0 for r in ratios):
            raise ParityConfigError(f"ratios must be positive, got {list(ratios)}")
    elif variant != "classical":
        if dev_counts is None:
            raise MissingDevTextError("parity-aware BPE needs a parallel dev set (dev=...) or ratios=...")
        for lang in langs:
            if not sum(dev_counts.get(lang, Counter()).values()):
                raise MissingDevTextError(f"language {lang!r} has no dev text (dev mode ranks languages by it)")


class _Pairs:
    """The pair choice of one mode: HF order (engine tie-break) or the reference's
    lexicographically largest pair of byte-level strings among the tied ones."""

    def __init__(self, engine: Engine, model: BPEModel, compat: str | None):
        self.engine, self.model, self.compat = engine, model, compat
        self.strings: list[str] = [byte_level(v) for v in model.vocab] if compat else []

    def best(self, lang: str | None) -> tuple[int, int, int] | None:
        if self.compat is None:
            return self.engine.best_pair(lang)
        ties = self.engine.tied_pairs(lang)
        if not ties:
            return None
        strings = self.strings
        a, b = max(ties, key=lambda p: (strings[p[0]], strings[p[1]]))
        return a, b, self.engine.pair_count(a, b, lang)

    def added(self) -> None:
        while self.compat and len(self.strings) < len(self.model.vocab):
            self.strings.append(byte_level(self.model.vocab[len(self.strings)]))


def train(
    train_counts: Mapping[str, Counter],
    dev_counts: Mapping[str, Counter] | None,
    vocab_size: int,
    *,
    variant: str = "base",
    hybrid: int = 0,
    window: int = 100,
    alpha: float = 2.0,
    ratios: Sequence[float] | None = None,
    min_frequency: int = 2,
    on_exhausted: str | None = None,
    compat: str | None = None,
    base: BPEModel | None = None,
    scheme: str = DEFAULT_SCHEME,
    progress: bool = False,
) -> ParityResult:
    """Parity-aware BPE on ``{lang: Counter}`` training counts (language order = index
    order for ties), ranked by ``dev_counts`` (same languages; made by :func:`count_dev`
    with the same pre-tokenizer) or, with ``ratios``, by training compression.

    ``vocab_size``: tokens of the final model, bytes and ``base`` included (in compat
    mode: ``vocab_size - len(base)`` merges, the reference's ``-s``). ``hybrid=J``:
    the first J merges classical. ``on_exhausted``: ``"stop"`` (default in compat
    mode) or ``"skip"`` (default otherwise). With ``ratios`` a ``dev_counts`` is only
    tracked (``dev_tokens``), never used to choose.
    """
    _check_compat(compat)
    on_exhausted = on_exhausted or ("stop" if compat else "skip")
    langs = list(train_counts)
    model = BPEModel(base.merges if base is not None else [], base.scheme if base is not None else
                     ("whitespace" if compat else scheme))
    start_merges, start_size = len(model.merges), len(model)
    check_budget(vocab_size, start_size, "vocab_size (bytes and base model included)")
    budget = vocab_size - start_size
    if budget == 0:
        raise ParityConfigError(f"vocab_size={vocab_size} leaves no merge to learn (the start model has {start_size})")
    _check_options(langs, dev_counts, variant, hybrid, window, alpha, ratios, budget, on_exhausted)

    t0 = time.perf_counter()
    cap = vocab_size + budget + 1  # duplicates (compat) can add merges without new ids
    # One engine: the dev words are tracked columns of the training engine (segmented by
    # every merge, totalled per language, never in a pair statistic), so a merge rewrites
    # the words of both in one pass and the dev set is never re-encoded.
    engine = Engine.from_counts(
        train_counts, merges=model.merges, results=model.results, capacity=cap,
        pair_counts_per_language=True, total_best=variant == "classical" or hybrid > 0,
        tracked=None if dev_counts is None else {lang: dev_counts.get(lang, Counter()) for lang in langs},
    )
    pairs = _Pairs(engine, model, compat)

    def totals() -> np.ndarray:
        """Tokens per language of the training words in the current segmentation."""
        return engine.token_totals()

    def dev_totals() -> np.ndarray:
        """The same for the dev words: the cost that ranks the languages."""
        return engine.tracked_totals() if dev_counts is not None else np.zeros(len(langs), np.int64)

    train_len, dev_len = totals(), dev_totals()
    train_rows, dev_rows = [train_len], [dev_len]
    ratio = None if ratios is None else np.asarray(ratios, np.float64) / float(ratios[0])
    train0 = train_len.astype(np.float64)
    # Window: the last w parity-phase choices; the reference divides by L + 1
    # when J > 0 (its language columns then include the concatenation column).
    recent: deque[int] = deque(maxlen=window)
    in_window = [0] * len(langs)
    denom = len(langs) + (1 if compat and hybrid > 0 else 0)

    def most_deserving(candidates: list[int]) -> int | None:
        """The language to merge for among ``candidates`` (the languages not exhausted):
        highest dev cost (ratio mode: lowest adjusted compression), ties to the lowest
        index, in the window variant only uncapped ones; None when none is left. (Plain
        Python: on a few languages it is faster than numpy, and it runs every merge.)"""
        if ratio is not None:  # compression / normalised ratio, lowest first
            key = [-x for x in ((train0 / train_len) / ratio).tolist()]
        else:  # dev cost, highest first
            key = dev_len.tolist()
        if variant == "window":
            capped = [n / window > alpha / denom for n in in_window]
            if not all(capped):  # every language capped (alpha < 1): no cap this step
                candidates = [l for l in candidates if not capped[l]]
        return max(candidates, key=key.__getitem__) if candidates else None  # max: the first, lowest index

    t1 = time.perf_counter()
    choices: list[int] = []
    stop_message = None
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=budget, desc="parity-aware BPE", mininterval=1.0)
    learned = 0
    # Languages whose best pair is below min_frequency stay so while every merge makes a
    # new token: a new pair (x, c) occurs at most as often as the merged pair did. A merge
    # into an existing token (two paths to one string) can break that, so it clears them.
    open_langs = list(range(len(langs)))  # not exhausted, in index order
    while learned < budget:
        classical = variant == "classical" or len(choices) < hybrid
        if not classical and len(choices) == hybrid > 0:  # the hybrid phase is over
            engine.stop_total_best()
        chosen = pair = last = None
        if classical:
            top, last = pairs.best(None), GLOBAL
            if top is not None and top[2] >= min_frequency:
                chosen, pair = GLOBAL, top
        else:
            while (l := most_deserving(open_langs)) is not None:
                top = pairs.best(langs[l])
                if top is not None and top[2] >= min_frequency:
                    chosen, pair = l, top
                    break
                if on_exhausted == "stop":  # the reference: the run ends here
                    last = l
                    break
                open_langs.remove(l)  # "skip": the next language in cost order
        if pair is None:
            who = ("the concatenation" if last == GLOBAL else "any language" if last is None
                   else f"language {langs[last]!r}")
            stop_message = f"no pair has frequency >= {min_frequency} in {who} after {len(choices)} merges"
            if last is not None:
                choices.append(last)
            break
        a, b, _ = pair
        recorded = (a, b) not in model.ranks
        if recorded:
            size = len(model)
            c = model.add_merge(a, b)
            pairs.added()
            learned += 1 if compat else len(model) - size
            if len(model) == size:
                open_langs = list(range(len(langs)))
            choices.append(chosen)
            if variant == "window" and not classical:
                if len(recent) == window:
                    in_window[recent[0]] -= 1
                recent.append(chosen)
                in_window[chosen] += 1
        else:  # a pair re-formed through a duplicate string: apply its merge again
            c = model.results[model.ranks[(a, b)]]
            open_langs = list(range(len(langs)))
        engine.merge(a, b, c)
        if ratio is not None:  # only ratio mode chooses by the training cost
            train_len = totals()
        dev_len = dev_totals()
        if recorded:
            if ratio is not None:
                train_rows.append(train_len)
            dev_rows.append(dev_len)
        if bar is not None:
            bar.update(learned - bar.n)
    if bar is not None:
        bar.close()
    if ratio is None:
        train_rows.append(totals())
    timings = {"engines": t1 - t0, "merges": time.perf_counter() - t1}
    dev_tokens = np.array(dev_rows) if dev_counts is not None else np.zeros((0, len(langs)), np.int64)
    return ParityResult(model, langs, choices, dev_tokens, np.array(train_rows), stop_message,
                        compat, start_merges, timings)


def train_from_lines(
    train_lines: Mapping[str, Iterable[str]],
    dev_lines: Mapping[str, Sequence[str]] | None,
    vocab_size: int,
    *,
    scheme: str = DEFAULT_SCHEME,
    compat: str | None = None,
    base: BPEModel | None = None,
    **options,
) -> ParityResult:
    """Count training and (parallel) dev text with the mode's pre-tokenizer, then :func:`train`."""
    if base is not None:
        scheme = base.scheme
    train_counts = count_corpus(train_lines, scheme, compat)
    dev_counts = count_dev(dev_lines, scheme, compat) if dev_lines is not None else None
    return train(train_counts, dev_counts, vocab_size, compat=compat, base=base, scheme=scheme, **options)
