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

Variants are the fields of :class:`ParityConfig` (keywords of :func:`train`):
``variant`` ``"base"``, ``"window"`` (``window=w``, ``alpha``) or ``"classical"``
(every merge global, the paper's baseline on the same data), ``hybrid=J``,
``ratios=[r_1, ..]`` (ratio mode; :func:`ratio_targets` derives them from the bytes per
line of parallel text, as the paper does), ``min_frequency`` with ``on_exhausted="stop"``
(the reference: the run ends when the chosen language has no pair of count >=
``min_frequency``) or ``"skip"`` (that language is passed over at that step and the
next one in cost order is tried). The argmax over languages is a *chooser*
(:class:`DevCost`, :class:`CompressionRatio`, wrapped by :class:`MovingWindow`):
``choose(candidates)`` names the language, ``record(l)`` tells it which one a merge
went to. When the window caps every language (possible for alpha < 1; the
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
- ``compat="hf"``: what HF ``tokenizers``' ``ParityBpeTrainer`` (0.23.2 on) does, on
  the pre-tokens it is given (the ``scheme``'s, or the reference's from
  :func:`count_corpus` with ``compat="reference"``): the reference's pair and
  language orders and merge count, but a language without a pair of count >=
  ``min_frequency`` is skipped (it never stops), the window denominator is ``L``
  always, a window that caps every language takes the *cheapest* one (the last it
  visits), and without a dev set or ratios the languages are ranked by their training
  tokens. Checked merge for merge against the pinned wheel in
  ``tests/test_parity_hf.py`` (every variant, on the golden inputs and on UDHR with the
  reference's and the lossless pre-tokenizers). Not copied: (1) when a language is
  exhausted in the window variant, HF records it in its window, and when it is then the
  only uncapped language HF 0.23.3 never returns (its window loop cannot mask it); here
  it leaves the candidates and the cap is judged over the others; (2) HF's ``dev_iterators``
  beat its ``ratio`` when both are given; here ``ratios`` choose and a dev set is only
  tracked. HF divides a compression by ``r_l``, the reference by ``r_l / r_1``: the
  same order up to rounding (no step differed on the golden and UDHR inputs, r_1 != 1).

Why the default mode and HF's trainer part: only the tie order between
pairs of equal count. HF's ``ParityBpeTrainer`` (like the reference) takes the
lexicographically *largest* pair of byte-level strings; the default mode takes HF
``BpeTrainer``'s order, the *smallest* ``(rank[a], rank[b])`` (bytes by code point,
merged tokens by id: :mod:`modtok.bpe.engine`), so that its classical variant is
HF ``BpeTrainer`` merge for merge. On the eight bench languages (eng deu tur vie
rus ell npi tel, <= 1M characters each, 12.5 MB; FLORES-200 dev, llama3,
``min_frequency=2``) the two agree on 208 merges; merge 209 is rus_Cyrl's, whose
two best pairs tie at 5,110: ``Ð ¹`` (bytes D0 B9, "й") and ``ÑĤ ÑĮ`` ("ть"). The
default mode takes ``Ð ¹`` (byte D0 ranks below the merged token "т"), HF takes
``ÑĤ ÑĮ`` (``"ÑĤ" > "Ð"``); from there the two runs differ. With ``compat="hf"`` the
two agree on all 4,000 merges (``bench/peers.py``, bench/RESULTS.md). (An earlier count
of 414 agreeing merges was on a run whose cut of the text is not recorded; on any input the
first tied best pair whose two orders disagree parts them: ``tests/test_parity_hf.py``.)

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

import bisect
import time
from collections import Counter, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import regex

from modtok import atomic, options
from modtok.artifacts.tokenizer_json import hf_tokenizer, write_json
from modtok.bpe import kernels as K
from modtok.bpe.engine import Engine
from modtok.bpe.export import to_tokenizer_json
from modtok.bpe.model import BPEModel
from modtok.bpe.standard import BATCH, check_budget, token_strings
from modtok.errors import (
    DataError,
    EncodingError,
    MissingDevTextError,
    ParallelCorpusError,
    ParityConfigError,
)
from modtok.evaluation.metrics import aligned, byte_count, gini
from modtok.progress import bar as progress_bar
from modtok.text.corpus import decode_text
from modtok.text.pretokenize import DEFAULT_SCHEME, byte_level, count_by_language

VARIANTS = options.PARITY_VARIANTS
COMPAT_MODES = (None, *options.PARITY_COMPAT)
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
        return decode_text(raw).splitlines()
    except UnicodeDecodeError as e:
        raise EncodingError(path, e.start, e.reason) from None


def _reference_counts(lines: Iterable[str]) -> Counter:
    # One findall over the joined text: no piece holds whitespace, so none crosses a
    # line break, and the per-line calls cost 15% more.
    counts = Counter(_REFERENCE.findall("\n".join(lines)))
    return Counter({" " + piece: n for piece, n in counts.items()})


# --------------------------------------------------------------------------
# the options


def _check_compat(compat: str | None) -> None:
    if compat not in COMPAT_MODES:
        raise ParityConfigError(f"unknown compat mode {compat!r} (known: None, 'reference', 'hf')")


@dataclass(frozen=True)
class ParityConfig:
    """The options of one run, checked once when made (hashable: a run's options can
    key a cache). Module docstring for what each does; ``on_exhausted=None`` is
    ``"stop"`` with ``compat="reference"`` and ``"skip"`` otherwise (:attr:`stops`).

    >>> ParityConfig(variant="window", window=50).stops, ParityConfig(compat="reference").stops
    (False, True)
    >>> ParityConfig(compat="hf").stops
    False
    >>> ParityConfig(ratios=[1, 2]).ratios
    (1, 2)
    >>> ParityConfig(variant="window", alpha=0)
    Traceback (most recent call last):
    modtok.errors.ParityConfigError: alpha=0: the window cap alpha/L needs alpha > 0
    """

    variant: str = "base"
    hybrid: int = 0
    window: int = 100
    alpha: float = 2.0
    ratios: tuple[float, ...] | None = None
    min_frequency: int = 2
    on_exhausted: str | None = None
    compat: str | None = None

    def __post_init__(self):
        _check_compat(self.compat)
        if self.variant not in VARIANTS:
            raise ParityConfigError(f"unknown variant {self.variant!r} (known: {', '.join(VARIANTS)})")
        if self.on_exhausted not in (None, *options.PARITY_ON_EXHAUSTED):
            raise ParityConfigError(f"on_exhausted={self.on_exhausted!r}: expected one of "
                                    f"{', '.join(options.PARITY_ON_EXHAUSTED)}")
        if self.variant == "window":
            if self.window < 1:
                raise ParityConfigError(f"window={self.window}: the window must hold at least 1 merge")
            if not self.alpha > 0:
                raise ParityConfigError(f"alpha={self.alpha}: the window cap alpha/L needs alpha > 0")
        if self.ratios is not None:
            if any(not r > 0 for r in self.ratios):
                raise ParityConfigError(f"ratios must be positive, got {list(self.ratios)}")
            object.__setattr__(self, "ratios", tuple(self.ratios))

    @property
    def stops(self) -> bool:
        """Whether the run ends (rather than skips) when the chosen language is exhausted."""
        return (self.on_exhausted or ("stop" if self.compat == "reference" else "skip")) == "stop"

    def check(self, langs: Sequence[str], dev_counts: Mapping[str, Counter] | None, merges: int) -> None:
        """Refuse what this config cannot do on ``langs`` with ``merges`` to learn and
        ``dev_counts`` (the checks that need the data)."""
        if not langs:
            raise DataError("no training language")
        if not 0 <= self.hybrid < merges and self.variant != "classical":
            raise ParityConfigError(
                f"hybrid J={self.hybrid} must be >= 0 and below the number of merges ({merges}); "
                "J >= merges is classical BPE (variant='classical')"
            )
        if self.ratios is not None:
            if len(self.ratios) != len(langs):
                raise ParityConfigError(f"{len(self.ratios)} ratios for {len(langs)} languages "
                                        f"({', '.join(langs)}): one per language")
        elif self.variant != "classical":
            if dev_counts is None and self.compat == "hf":
                return  # HF ranks by training tokens then (TrainCost)
            if dev_counts is None:
                raise MissingDevTextError("parity-aware BPE needs a parallel dev set (dev=...) or ratios=...")
            for lang in langs:
                if not sum(dev_counts.get(lang, Counter()).values()):
                    raise MissingDevTextError(
                        f"language {lang!r} has no dev text (dev mode ranks languages by it)")

    def chooser(self, engine: Engine):
        """The language chooser of this config over ``engine``'s languages."""
        hf = self.compat == "hf"
        if self.ratios is not None:
            inner = CompressionRatio(engine, self.ratios)
        else:
            inner = TrainCost(engine) if engine.tracked_totals().size == 0 else DevCost(engine)
        if self.variant != "window":
            return inner
        # The reference divides by L + 1 when J > 0 (its language columns then include
        # the concatenation column); HF by L.
        denominator = len(engine.languages) + (1 if self.compat == "reference" and self.hybrid > 0 else 0)
        return MovingWindow(inner, len(engine.languages), self.window, self.alpha / denominator,
                            all_capped="cheapest" if hf else "lift")


def as_config(config: ParityConfig | None = None, **options) -> ParityConfig:
    """``config`` with ``options`` (its field names) replaced, or a new one from ``options``.

    >>> as_config(ParityConfig(variant="window"), window=20) == ParityConfig(variant="window", window=20)
    True
    """
    return ParityConfig(**options) if config is None else replace(config, **options)


# --------------------------------------------------------------------------
# the ratio variant's targets


def ratio_targets(parallel_lines: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """The ratio variant's target compression ratios, one per language (the first is 1):
    mean UTF-8 bytes per line of each language over mean bytes per line of the first
    language, on parallel lines (line i is the same sentence everywhere).

    The paper derives the ratio variant's targets "from bytes-per-line
    statistics in the parallel FLORES+ dataset" (a quotation of the paper); the formula
    itself is not in the stored material we could search (only the paper's abstract
    and first page are). The derivation used here:

    - ratio mode lifts, at each merge, the language with the lowest training
      compression T0_l / T_l relative to r_l / r_1 (reference README item 11;
      :class:`CompressionRatio`), so training keeps T0_l / T_l ≈ c · r_l, i.e. bytes per
      token of language l ≈ c · r_l (T0 counts the bytes, plus one prefix space per
      pre-token in compat mode);
    - with r_l ∝ bytes per parallel line B_l, a parallel line then costs
      B_l / (c · B_l) = 1 / c tokens in *every* language: the same parity target as the
      dev-set variants, reached from training statistics alone;
    - a public tokenizer trained with the reference's ``-r`` flag
      (huggingface.co/flexitok/bpe-parity-aware-ratio, 21 languages) lists exactly these
      numbers, rounded to two decimals, for FLORES-200 dev against English: measured
      here on our FLORES-200 dev, ell 2.183, rus 2.014, vie 1.395, fra 1.234, spa 1.214,
      deu 1.189, ita 1.183, pol 1.132, por 1.117, tur 1.117, nld 1.112, ces 1.085 — the
      card's 2.18, 2.01, 1.4, 1.23, 1.21, 1.19, 1.18, 1.13, 1.12, 1.12, 1.11, 1.09.

    Only ratios matter (the chooser divides by r_1), so normalising by the first
    language changes nothing. Read them from the dev split, never from the test lines.

    >>> ratio_targets({"eng_Latn": ["ab", "abcd"], "rus_Cyrl": ["аб", "абвг"]})
    {'eng_Latn': 1.0, 'rus_Cyrl': 2.0}
    """
    sides = aligned(parallel_lines)  # parallel: one line count (ParallelCorpusError otherwise)
    per_line = {lang: byte_count(lines) / len(lines) for lang, lines in sides.items()}
    if empty := [lang for lang, b in per_line.items() if b == 0]:
        raise DataError(f"no bytes to derive a ratio target from for {', '.join(empty)}")
    first = next(iter(per_line.values()))
    return {lang: b / first for lang, b in per_line.items()}


# --------------------------------------------------------------------------
# counting


def count_corpus(
    corpus: Mapping[str, Iterable[str]], scheme: str = DEFAULT_SCHEME, compat: str | None = None,
    workers: int = 1,
) -> dict[str, Counter]:
    """``{lang: Counter(pre-token -> count)}`` with the scheme, or the reference's
    pre-tokenizer when ``compat="reference"``; ``workers`` processes share the lines
    (:func:`~modtok.text.pretokenize.count_by_language`; default 1: a library call never
    forks behind a notebook's back).

    >>> count_corpus({"x": ["ab, ab"]}, compat="reference")
    {'x': Counter({' ab': 2, ' ,': 1})}
    """
    _check_compat(compat)
    if compat != "reference":
        return count_by_language(corpus, scheme, workers=workers)
    if workers <= 1:
        return {lang: _reference_counts(lines) for lang, lines in corpus.items()}
    counts = count_by_language(corpus, workers=workers, split=REFERENCE_PATTERN)
    return {lang: Counter({" " + piece: n for piece, n in c.items()}) for lang, c in counts.items()}


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
    With ``compat="reference"`` ``model.scheme`` is only a label ("whitespace"): encode with
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
        """Write :meth:`merges_txt` atomically."""
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
        return write_json(path, self.tokenizer_json())

    def tokenizer(self):
        """The HF ``tokenizers.Tokenizer`` of :meth:`tokenizer_json`."""
        return hf_tokenizer(self.tokenizer_json())

    def trajectory(self) -> dict:
        """What chose the merges, as JSON: ``languages``, ``language_per_merge``
        (:attr:`choices`), ``dev_tokens``, ``train_tokens`` (lists of rows) and ``stop_message``."""
        return {"languages": self.languages, "language_per_merge": self.choices,
                "dev_tokens": self.dev_tokens.tolist(), "train_tokens": self.train_tokens.tolist(),
                "stop_message": self.stop_message}

    def save_trajectory(self, path) -> Path:
        """Write :meth:`trajectory` atomically (``trajectory.json`` of ``modtok parity-bpe``)."""
        path = Path(path)
        atomic.write_json(path, self.trajectory())
        return path


# --------------------------------------------------------------------------
# the language choosers: which language the next parity merge is for
#
# Plain Python on lists: on a few languages it is faster than numpy, and it runs every merge.


def _first_max(candidates: Sequence[int], key: list) -> int | None:
    """The candidate with the largest ``key`` (ties: the first, the lowest index); None if none."""
    return max(candidates, key=key.__getitem__) if candidates else None


class DevCost:
    """Base parity-aware BPE: the language whose dev text costs the most tokens now.

    >>> from collections import Counter
    >>> eng = Engine.from_counts({"x": Counter({"ab": 1}), "y": Counter({"cd": 1})},
    ...                          tracked={"x": Counter({"ab": 1}), "y": Counter({"cde": 1})})
    >>> DevCost(eng).choose([0, 1]), DevCost(eng).choose([0])
    (1, 0)
    """

    def __init__(self, engine: Engine):
        self.engine = engine

    def choose(self, candidates: Sequence[int]) -> int | None:
        return _first_max(candidates, self.engine.tracked_totals().tolist())

    def dev_candidates(self, candidates: Sequence[int]) -> Sequence[int]:
        """The languages of which :meth:`choose` takes the costliest: all ``candidates``
        (the engine's kernel can then choose, :meth:`Engine.merge_choose`)."""
        return candidates

    def record(self, lang: int) -> None:
        """A merge went to ``lang``: nothing to remember."""


class TrainCost(DevCost):
    """Without a dev set or ratios (``compat="hf"`` only, what HF's trainer then does):
    the language whose *training* text costs the most tokens now.

    >>> from collections import Counter
    >>> eng = Engine.from_counts({"x": Counter({"ab": 3}), "y": Counter({"cde": 1})})
    >>> TrainCost(eng).choose([0, 1])
    0
    """

    def choose(self, candidates: Sequence[int]) -> int | None:
        return _first_max(candidates, self.engine.token_totals().tolist())

    def dev_candidates(self, candidates: Sequence[int]) -> None:
        """None: the choice is not by dev cost (:meth:`DevCost.dev_candidates`)."""
        return None


class CompressionRatio:
    """Ratio mode (no dev set): the language with the lowest training compression
    ``T0_l / T_l`` (tokens at the start / now) relative to its target ``r_l / r_1``."""

    def __init__(self, engine: Engine, ratios: Sequence[float]):
        self.engine = engine
        self.start = engine.token_totals().astype(np.float64)
        self.targets = np.asarray(ratios, np.float64) / float(ratios[0])

    def choose(self, candidates: Sequence[int]) -> int | None:
        adjusted = (self.start / self.engine.token_totals()) / self.targets
        return _first_max(candidates, [-x for x in adjusted.tolist()])  # lowest first

    def dev_candidates(self, candidates: Sequence[int]) -> None:
        """None: the choice is not by dev cost (:meth:`DevCost.dev_candidates`)."""
        return None

    def record(self, lang: int) -> None:
        """A merge went to ``lang``: nothing to remember."""


class MovingWindow:
    """The moving-window variant around another chooser: a language that holds more
    than ``cap`` (alpha / L) of the last ``window`` parity merges is passed over,
    unless every language is: then none is (``all_capped="lift"``, our reading; the
    reference crashes) or the one the inner chooser ranks last is taken
    (``"cheapest"``: HF, which visits them all and keeps the last).

    >>> class First:
    ...     def choose(self, candidates): return candidates[0] if candidates else None
    >>> w = MovingWindow(First(), 2, window=2, cap=0.5)
    >>> w.record(0); w.choose([0, 1]), w.record(0), w.choose([0, 1])
    (0, None, 1)
    """

    def __init__(self, inner, n_langs: int, window: int, cap: float, all_capped: str = "lift"):
        self.inner, self.window, self.cap, self.all_capped = inner, window, cap, all_capped
        self.recent: deque[int] = deque(maxlen=window)
        self.held = [0] * n_langs  # merges of each language in ``recent``

    def _uncapped(self, candidates: Sequence[int]) -> Sequence[int]:
        capped = [n / self.window > self.cap for n in self.held]
        # Over the candidates: an exhausted language that is not capped must not leave
        # the others capped (the run then ended with a false "no pair" message).
        if not all(capped[l] for l in candidates):
            return [l for l in candidates if not capped[l]]
        if self.all_capped == "lift":  # every candidate capped (alpha < 1): no cap this step
            return candidates
        rest = list(candidates)  # "cheapest": the last in the inner chooser's order
        while len(rest) > 1:
            rest.remove(self.inner.choose(rest))
        return rest

    def choose(self, candidates: Sequence[int]) -> int | None:
        return self.inner.choose(self._uncapped(candidates))

    def dev_candidates(self, candidates: Sequence[int]) -> Sequence[int] | None:
        """:meth:`DevCost.dev_candidates` of the inner chooser, after the cap."""
        return self.inner.dev_candidates(self._uncapped(candidates))

    def record(self, lang: int) -> None:
        if len(self.recent) == self.window:
            self.held[self.recent[0]] -= 1
        self.recent.append(lang)
        self.held[lang] += 1


# --------------------------------------------------------------------------
# the loop


class _Pairs:
    """The pair choice of one mode, ``None`` below ``min_frequency``: HF order (engine
    tie-break) or the reference's lexicographically largest pair of byte-level strings
    among the tied ones."""

    def __init__(self, engine: Engine, model: BPEModel, config: ParityConfig):
        self.engine, self.model = engine, model
        self.compat, self.min_frequency = config.compat, config.min_frequency
        self.strings: list[str] = [byte_level(v) for v in model.vocab] if self.compat else []
        # compat: the token ids ranked by their strings (lex[i] = rank of strings[i], all
        # distinct), the kernel's form of the tie-break (Engine.merge_choose); None otherwise
        self.sorted_strings = sorted(self.strings)
        self.lex = np.zeros(max(len(self.strings), 256), np.int64) if self.compat else None
        if self.compat:
            self.lex[np.argsort(self.strings, kind="stable")] = np.arange(len(self.strings))

    def best(self, lang: str | None) -> tuple[int, int, int] | None:
        if self.compat is None:
            top = self.engine.best_pair(lang)
        else:
            ties = self.engine.tied_pairs(lang)
            if not ties:
                return None
            strings = self.strings
            a, b = max(ties, key=lambda p: (strings[p[0]], strings[p[1]]))
            top = a, b, self.engine.pair_count(a, b, lang)
        return top if top is not None and top[2] >= self.min_frequency else None

    def merge(self, a: int, b: int, c: int, candidates: Sequence[int] | None):
        """Merge ``(a, b) -> c`` in the engine (after :meth:`added`). With ``candidates``
        (the next step is a parity step, its language the costliest of them on the dev
        side) the same kernel call answers that step too: ``(lang, pair)``, what
        :func:`_parity_pair` would return; None when it is left to :func:`_parity_pair`
        (no candidate, no pair, or one below ``min_frequency``: the stop and skip rules).

        On the parity benchmark (:mod:`modtok.bpe.kernels`, 4,000 compat merges) that call
        replaces a merge, a ties call, a hash lookup and the tie-break in Python per merge."""
        if candidates is None:
            self.engine.merge(a, b, c)
            return None
        _, lang, top = self.engine.merge_choose(a, b, c, candidates, self.lex)
        if lang is None or top is None or top[2] < self.min_frequency:
            return None
        return lang, top

    def added(self) -> None:
        while self.compat and len(self.strings) < len(self.model.vocab):
            n = len(self.strings)
            string = byte_level(self.model.vocab[n])
            self.strings.append(string)
            at = bisect.bisect_left(self.sorted_strings, string)
            self.sorted_strings.insert(at, string)
            if n == len(self.lex):
                self.lex = np.concatenate([self.lex, np.zeros(n, np.int64)])
            K.lex_insert(self.lex, n, at)


class _Costs:
    """The trajectory of costs: dev tokens per language after every merge; training
    tokens too when they choose (ratio mode), else at the start and the end. The dev costs
    are kept as blocks of rows, one per merge or per kernel run (:class:`_Runs`): 32k rows
    one by one took 26 ms to gather and stack, 8 blocks 5 ms, beside the kernel's 330 ms for
    those 32k merges (part (b) of bench/parity_bpe.py)."""

    def __init__(self, engine: Engine, dev: bool, every_merge: bool):
        self.engine, self.every_merge = engine, every_merge
        self.dev = [engine.tracked_totals()[None]] if dev else None
        self.train = [engine.token_totals()]

    def record(self) -> None:
        if self.dev is not None:
            self.dev.append(self.engine.tracked_totals()[None])
        if self.every_merge:
            self.train.append(self.engine.token_totals())

    def extend(self, dev: np.ndarray) -> None:
        """The dev costs after many merges (rows), from a kernel run (:class:`_Runs`)."""
        self.dev.append(dev)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(dev_tokens, train_tokens)`` of :class:`ParityResult`."""
        L = len(self.engine.languages)
        train = self.train if self.every_merge else [self.train[0], self.engine.token_totals()]
        dev = np.concatenate(self.dev) if self.dev is not None else np.zeros((0, L), np.int64)
        return dev, np.array(train)


class _Runs:
    """Many parity steps per kernel call (:meth:`Engine.parity_greedy`), where the kernel
    chooses exactly as a step of :func:`learn` does: the default mode (the engine's tie-break)
    with the dev-cost chooser. The compat modes (a tie-break by strings), the window and the
    ratio choosers take one step a call. A run hands back the step it cannot take (a string
    that may exist, a language without a frequent pair) and :func:`learn` takes it.

    On part (b) of bench/parity_bpe.py (8 languages, 32k, lossless; quiet machine) a run took
    1.21 s of CPU one step a call and takes 0.57-0.60 s so (standard BPE: 0.38 s); what is left
    over standard BPE is the per-language statistics and the 30k words only the dev set
    holds, which every merge segments too (bench/RESULTS.md, session 20)."""

    def __init__(self, engine: Engine, model: BPEModel, capacity: int):
        self.engine, self.model = engine, model
        self.strings = token_strings(model, capacity)
        self.out = np.empty((BATCH, 4), np.int64)
        self.costs = np.empty((BATCH, len(engine.languages)), np.int64)

    def run(self, vocab_size: int, min_frequency: int, open_langs: list[int]) -> tuple[np.ndarray, int]:
        """Merge until ``vocab_size`` tokens, a full buffer or a step for :func:`learn`; the
        model grows by the merges. Returns rows ``(a, b, c, language)`` and the tracked totals
        after each, as one array, and ``K.DONE .. K.CHECK``."""
        is_open = np.zeros(len(self.engine.languages), np.int64)
        is_open[open_langs] = 1
        n, why = self.engine.parity_greedy(self.strings, len(self.model), vocab_size, min_frequency, is_open,
                                           self.out, self.costs)
        if self.model.extend(self.out[:n, :2]) != self.out[:n, 2].tolist():
            raise AssertionError("the kernel's token ids part from the model's")  # a bug, not bad input
        return np.hstack([self.out[:n], self.costs[:n]]), why

    def added(self, a: int, b: int, c: int) -> None:
        """Token ``c``, new, was made by a step of :func:`learn`."""
        K.add_string(self.strings, a, b, c)


def _parity_pair(chooser, pairs: _Pairs, langs: list[str], open_langs: list[int], stops: bool):
    """``(l, pair)``: the chosen language among ``open_langs`` and its best pair. A
    language without a frequent pair ends the run (``stops``: ``(l, None)``) or is
    dropped from ``open_langs`` and the next one is chosen; ``(None, None)``: none left."""
    while (l := chooser.choose(open_langs)) is not None:
        pair = pairs.best(langs[l])
        if pair is not None or stops:
            return l, pair
        open_langs.remove(l)
    return None, None


def _stop_message(lang: int | None, langs: list[str], min_frequency: int, merges: int) -> str:
    who = ("the concatenation" if lang == GLOBAL else "any language" if lang is None
           else f"language {langs[lang]!r}")
    return f"no pair has frequency >= {min_frequency} in {who} after {merges} merges"


def learn(
    engine: Engine, model: BPEModel, budget: int, config: ParityConfig, progress: bool = False
) -> ParityResult:
    """Add ``budget`` tokens (compat mode: merges) to ``model`` by ``config``'s policy.

    ``engine`` holds the training words of every language with per-language pair
    counts and, if there is a dev set, its words as tracked columns in the same
    language order (:func:`train` builds it)."""
    langs = engine.languages
    pairs, chooser = _Pairs(engine, model, config), config.chooser(engine)
    dev = engine.tracked_totals().size > 0
    # ratio mode, and HF's mode without a dev set, choose by the training tokens
    costs = _Costs(engine, dev, every_merge=config.ratios is not None or (config.compat == "hf" and not dev))
    # the config's answers, read once (the loop runs every merge)
    all_classical, hybrid, stops = config.variant == "classical", config.hybrid, config.stops
    start_merges, learned, choices, stop_message = len(model.merges), 0, [], None
    # Languages whose best pair is below min_frequency stay so while every merge makes a
    # new token: a new pair (x, c) occurs at most as often as the merged pair did. A merge
    # into an existing token (two paths to one string) can break that, so it clears them.
    open_langs = list(range(len(langs)))  # not exhausted, in index order
    ahead = None  # this step's (lang, pair) when the last merge's kernel call chose it (_Pairs.merge)
    runs = (_Runs(engine, model, len(model) + budget) if config.compat is None and type(chooser) is DevCost
            else None)
    with progress_bar(total=budget, desc="parity-aware BPE", enabled=progress) as bar:
        while learned < budget:
            # 1. which pair: the most frequent overall (classical, and the hybrid's first J
            # merges), else the most frequent pair of the costliest language
            classical = all_classical or len(choices) < hybrid
            if not classical and len(choices) == hybrid > 0:  # the hybrid phase is over
                engine.stop_total_best()
            if runs is not None and not classical:  # steps 1-6 in the kernel, as long as it can
                rows, why = runs.run(len(model) + budget - learned, config.min_frequency, open_langs)
                choices += rows[:, 3].tolist()
                costs.extend(rows[:, 4:])
                learned += len(rows)
                bar.update(len(rows))
                if why in (K.DONE, K.FULL):
                    continue
            if classical:
                lang, pair = GLOBAL, pairs.best(None)
            elif ahead is not None:
                lang, pair = ahead
            else:
                lang, pair = _parity_pair(chooser, pairs, langs, open_langs, stops)
            ahead = None
            # 2. nothing to merge: stop, naming the exhausted language
            if pair is None:  # the stop rule (or nothing left): the exhausted language is the last choice
                stop_message = _stop_message(lang, langs, config.min_frequency, len(choices))
                choices += [] if lang is None else [lang]
                break
            a, b, _ = pair
            # 3. record the merge (a new token, or an existing one reached by a second path)
            if (a, b) in model.ranks:  # a pair re-formed through a duplicate string: apply its merge again
                engine.merge(a, b, model.results[model.ranks[(a, b)]])
                open_langs = list(range(len(langs)))
                continue
            size = len(model)
            c = model.add_merge(a, b)
            pairs.added()
            if len(model) == size:
                open_langs = list(range(len(langs)))
            elif runs is not None:
                runs.added(a, b, c)
            # 4. note whose merge it was (the window variant counts them)
            choices.append(lang)
            if not classical:
                chooser.record(lang)
            # 5. apply it everywhere; the kernel may pick the next language's pair in the same call
            parity_next = not all_classical and len(choices) >= hybrid and runs is None
            ahead = pairs.merge(a, b, c, chooser.dev_candidates(open_langs) if parity_next else None)
            # 6. the dev (or training) cost of every language after it: the next choice reads it
            costs.record()
            step = 1 if config.compat else len(model) - size
            learned += step
            bar.update(step)
    dev_tokens, train_tokens = costs.arrays()
    return ParityResult(model, langs, choices, dev_tokens, train_tokens, stop_message, config.compat,
                        start_merges)


def train(
    train_counts: Mapping[str, Counter],
    dev_counts: Mapping[str, Counter] | None,
    vocab_size: int,
    config: ParityConfig | None = None,
    *,
    base: BPEModel | None = None,
    scheme: str = DEFAULT_SCHEME,
    progress: bool = False,
    **options,
) -> ParityResult:
    """Parity-aware BPE on ``{lang: Counter}`` training counts (language order = index
    order for ties), ranked by ``dev_counts`` (same languages; made by :func:`count_dev`
    with the same pre-tokenizer) or, with ``ratios``, by training compression.

    ``config`` and/or ``options`` (:class:`ParityConfig` fields: ``variant``, ``hybrid``,
    ``window``, ``alpha``, ``ratios``, ``min_frequency``, ``on_exhausted``, ``compat``;
    options override the config's). ``vocab_size``: tokens of the final model, bytes and
    ``base`` included (in either compat mode: ``vocab_size - len(base)`` merges, the reference's
    ``-s``). With ``ratios`` a ``dev_counts`` is only tracked (``dev_tokens``), never
    used to choose.
    """
    config = as_config(config, **options)
    langs = list(train_counts)
    model = BPEModel(base.merges if base is not None else [], base.scheme if base is not None else
                     ("whitespace" if config.compat == "reference" else scheme))
    check_budget(vocab_size, len(model), "vocab_size (bytes and base model included)")
    budget = vocab_size - len(model)
    if budget == 0:
        raise ParityConfigError(
            f"vocab_size={vocab_size} leaves no merge to learn (the start model has {len(model)})")
    config.check(langs, dev_counts, budget)

    t0 = time.perf_counter()
    # One engine: the dev words are tracked columns of the training engine (segmented by
    # every merge, totalled per language, never in a pair statistic), so a merge rewrites
    # the words of both in one pass and the dev set is never re-encoded.
    engine = Engine.from_counts(
        train_counts, merges=model.merges, results=model.results,
        capacity=vocab_size + budget + 1,  # duplicates (compat) can add merges without new ids
        pair_counts_per_language=True, total_best=config.variant == "classical" or config.hybrid > 0,
        tracked=None if dev_counts is None else {lang: dev_counts.get(lang, Counter()) for lang in langs},
    )
    t1 = time.perf_counter()
    result = learn(engine, model, budget, config, progress)
    result.timings = {"engines": t1 - t0, "merges": time.perf_counter() - t1}
    return result


def train_from_lines(
    train_lines: Mapping[str, Iterable[str]],
    dev_lines: Mapping[str, Sequence[str]] | None,
    vocab_size: int,
    config: ParityConfig | None = None,
    *,
    scheme: str = DEFAULT_SCHEME,
    base: BPEModel | None = None,
    progress: bool = False,
    workers: int = 1,
    **options,
) -> ParityResult:
    """Count training and (parallel) dev text with the mode's pre-tokenizer (the
    training text on ``workers`` processes, :func:`count_corpus`), then :func:`train`."""
    config = as_config(config, **options)
    if base is not None:
        scheme = base.scheme
    train_counts = count_corpus(train_lines, scheme, config.compat, workers)
    dev_counts = count_dev(dev_lines, scheme, config.compat) if dev_lines is not None else None
    return train(train_counts, dev_counts, vocab_size, config, base=base, scheme=scheme, progress=progress)
