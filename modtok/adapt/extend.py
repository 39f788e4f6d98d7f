"""Continued BPE on a deployed byte-level BPE, in its own ids (arms R1 and R2).

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§IV–V)
extends Llama-3 and Qwen3 by appending merges learned on Nepali text, with
the original regex (R1) or the mark-aware repair (R2), and keeps every
original token id:

    T  <- the deployed tokenizer (ids, merges, special tokens, post-processor)
    P  <- its Split regex, or the repaired one (R2)
    segment every new pre-token with T's merges (each base token one symbol)
    while fewer than K merges: add the most frequent adjacent pair (count >= 2)
    drop merges whose output holds no complete target code point, and the
    merges built on them (:mod:`modtok.adapt.filters`: §V; App. H relaxes it to byte pieces)
    new tokens get the ids after every original id, special tokens included

The merge statistics run on :class:`modtok.bpe.engine.Engine`, whose symbols
must start as the 256 bytes. So the engine works in a *private numbering*:
private id ``b`` is byte ``b``, the other base tokens follow in deployed-id
order, learned tokens after them; :class:`Extension` maps them back to
deployed ids and strings only at export. Engine ties (equal counts) are broken
by the smallest (deployed id of a, deployed id of b), learned tokens ranking
after every base token in creation order.

Two facts make the engine's segmentation the deployed encoder's (the tests
check it on FLORES): the deployed models use ``ignore_merges`` (a pre-token
that is a whole vocabulary entry is one token), and such a word has no pair,
so it is left out of the statistics; every other word is BPE by rank, the
engine's rule. After a learned merge, no original merge can fire again (its
parts are original ids; the new adjacency holds a learned id), so encoding
with "original merges, then learned merges" is what HF does with the appended
list. One difference is inherent to ``ignore_merges`` and left as in HF: a
pre-token whose bytes equal a *learned* token is one token at encode time
even where the learned merges would not reach it.

Why English ids cannot move (Proposition 1): every kept learned token holds a
complete code point of U+0900–U+097F, so neither a learned merge nor the
whole-word lookup can fire on text without one; the repaired regex cuts text
without ``\\p{M}`` exactly like the original (``llama3-deva``: text without a
Devanagari mark). ``tests/test_repair.py`` checks it on FLORES and with
hypothesis.

>>> repaired_pattern(pretokenize.pattern("llama3")) == pretokenize.pattern("llama3-marks")
True
"""

from __future__ import annotations

import copy
import functools
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from modtok import options
from modtok.adapt import hf_files, spm
from modtok.adapt.filters import LOW_KEEP, BlockFilter, any_of, filter_merges, low_keep_note
from modtok.adapt.invariance import Invariance
from modtok.artifacts import deployed
from modtok.artifacts.tokenizer_json import hf_tokenizer, merge_pair
from modtok.bpe.engine import Engine, words_from_counts
from modtok.errors import BudgetError, ConfigError, TokenizerFileError, UsageError
from modtok.progress import bar as progress_bar
from modtok.text import pretokenize  # noqa: F401 (the doctests use pretokenize)
from modtok.text.pretokenize import DEVANAGARI_MARKS, byte_level, count_by_language, from_byte_level

# The letters-only word and punctuation classes and their repairs (§V): the
# marks join the word class and leave the leading and punctuation classes.
_LETTERS_ONLY = (r"[^\r\n\p{L}\p{N}]?\p{L}+", r" ?[^\s\p{L}\p{N}]+")

ARMS = options.EXTEND_ARMS


def repaired_pattern(regex: str, marks: str = r"\p{M}") -> str:
    """The letters-only split regex ``regex`` with ``marks`` moved into the word
    class (R2: ``\\p{M}``; R2-Devanagari-only: :data:`DEVANAGARI_MARKS`).

    Works on any pattern built like Llama-3's (Llama-3, Qwen2/3, cl100k); a
    pattern without the letters-only classes is refused.

    >>> repaired_pattern(pretokenize.pattern("llama3"), DEVANAGARI_MARKS) == pretokenize.pattern("llama3-deva")
    True
    """
    word, punct = _LETTERS_ONLY
    if word not in regex or punct not in regex:
        shown = regex if len(regex) <= 60 else regex[:57] + "..."
        raise TokenizerFileError(f"the split regex {shown!r} has no letters-only word class to repair "
                                 "(use arm R1: the base's own regex)")
    return regex.replace(word, rf"[^\r\n\p{{L}}{marks}\p{{N}}]?[\p{{L}}{marks}]+").replace(
        punct, rf" ?[^\s\p{{L}}{marks}\p{{N}}]+"
    )


def mark_aware(regex: str) -> bool:
    """The regex has no letters-only word class and already holds ``\\p{M}`` (o200k,
    Qwen3.5, or a base this project already repaired): R2 has nothing to repair.

    >>> mark_aware(pretokenize.pattern("llama3-marks")), mark_aware(pretokenize.pattern("llama3"))
    (True, False)
    """
    return _LETTERS_ONLY[0] not in regex and r"\p{M}" in regex


def arm_pattern(regex: str, arm: str) -> str:
    """The split regex of an arm: R1 keeps ``regex``, R2 / R2-deva repair it; on a
    :func:`mark_aware` regex R2 and R2-deva keep it too (an extension of an extension
    runs with the same arm as the first)."""
    if arm not in ARMS:
        raise ConfigError(f"arm_pattern: unknown arm {arm!r} (known: {', '.join(ARMS)})")
    if arm == "R1" or mark_aware(regex):
        return regex
    return repaired_pattern(regex, r"\p{M}" if arm == "R2" else DEVANAGARI_MARKS)


# --------------------------------------------------------------------------
# the deployed tokenizer as base


@dataclass(frozen=True)
class Private:
    """A base in private ids: id ``b`` is byte ``b``, the other base tokens follow in
    deployed-id order (``rank`` holds each one's deployed id, the engine's tie-break);
    ``merges`` (M, 2) and ``results`` (M,) are the base's merges in these ids."""

    token_bytes: tuple[bytes, ...]
    id_of: dict[bytes, int]
    rank: np.ndarray
    merges: np.ndarray
    results: np.ndarray


class Base:
    """A deployed byte-level BPE as ``tokenizer.json`` dict, read for extension.

    ``token_bytes[i]`` are the bytes of deployed id ``i`` (``None`` for special
    tokens and gaps); ``regex`` is the Split regex; ``next_id`` the first id
    after every original one (special tokens included); ``config`` the
    ``tokenizer_config.json`` settings known for it (:func:`base_config`: special
    tokens, BOS/EOS, chat template), which :meth:`Extension.save` carries over;
    ``name`` what it was loaded from (for ``repr``).
    """

    def __init__(self, tokenizer_json: Mapping, config: Mapping | None = None, name: str | None = None):
        self.json = copy.deepcopy(dict(tokenizer_json))
        self.config = dict(config or {})
        self.name = name
        self._tokenizer = None  # built on first use (a big JSON)
        model = self.json.get("model") or {}
        if model.get("type") != "BPE":
            raise TokenizerFileError(f"model type {model.get('type')!r} is not a BPE")
        if model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise TokenizerFileError("a BPE with subword prefixes/suffixes is not byte-level")
        self.split, self.regex = _split_step(self.json)
        special = {t["id"] for t in self.json.get("added_tokens") or []}
        vocab = model["vocab"]
        self.next_id = max(list(vocab.values()) + list(special)) + 1
        self.token_bytes: list[bytes | None] = [None] * self.next_id
        try:
            for s, i in vocab.items():
                if i not in special:
                    self.token_bytes[i] = from_byte_level(s)
        except KeyError as e:
            raise TokenizerFileError(f"token {s!r} has a character {e} outside the byte-level alphabet") from None
        self.id_of = {t: i for i, t in enumerate(self.token_bytes) if t is not None}
        missing = [b for b in range(256) if bytes([b]) not in self.id_of]
        if missing:
            raise TokenizerFileError(f"byte {missing[0]:#04x} has no token: not a byte-level BPE")
        self.merges = [tuple(from_byte_level(p) for p in merge_pair(m)) for m in model["merges"]]

    @classmethod
    def load(cls, name_or_path: str | os.PathLike, model_dir: str | os.PathLike | None = None) -> Base:
        """A deployed name (``modtok.artifacts.deployed.DEPLOYED``), a ``tokenizer.json``
        file or a directory holding one (:func:`modtok.artifacts.deployed.load_json`),
        with the ``tokenizer_config.json`` settings
        :func:`modtok.adapt.hf_files.base_config` finds for it (and in ``model_dir``, a
        model directory already checked to hold this tokenizer). A JSON file that is
        not a ``tokenizers`` file, or one of another model type, is a
        :class:`TokenizerFileError` that says so."""
        tj = deployed.load_json(name_or_path)
        check_bpe_json(tj, str(name_or_path))
        return cls(tj, hf_files.base_config(name_or_path, tj, model_dir), str(name_or_path))

    def __repr__(self) -> str:
        return f"Base({self.name or 'tokenizer.json'}: {self.next_id} ids, {len(self.merges)} merges)"

    @functools.cached_property
    def private(self) -> Private:
        """The base in the engine's private numbering (:class:`Private`), built on first
        use and kept: for Llama-3's 280k merges it is 0.3 s, a third of a 1.6 MB
        continued-BPE run, and every run on the same base shares it."""
        order = [i for i, t in enumerate(self.token_bytes) if t is not None and len(t) > 1]
        token_bytes = tuple([bytes([b]) for b in range(256)] + [self.token_bytes[i] for i in order])
        id_of = {t: p for p, t in enumerate(token_bytes)}
        rank = np.empty(len(token_bytes), np.int64)  # tie-break by deployed id
        rank[:256] = [self.id_of[bytes([b])] for b in range(256)]
        rank[256:] = order
        merges = np.array([(id_of[a], id_of[b]) for a, b in self.merges], np.int64).reshape(-1, 2)
        results = np.array([id_of[a + b] for a, b in self.merges], np.int64)
        return Private(token_bytes, id_of, rank, merges, results)

    def filter(self, merges: Sequence[tuple[bytes, bytes]], keep: BlockFilter) -> list[tuple[bytes, bytes]]:
        """The ``merges`` whose token ``keep`` accepts, and those built on them
        (:func:`modtok.adapt.filters.filter_merges`; the same call as
        :meth:`modtok.adapt.spm.SpmBase.filter`)."""
        return filter_merges(merges, keep.keeps, set(self.id_of))

    def normalize(self, lines: Iterable[str]) -> list[str]:
        """Lines through the tokenizer's normalizer (Qwen: NFC), as HF encodes them."""
        if not self.json.get("normalizer"):
            return list(lines)
        norm = self.tokenizer.normalizer
        return [norm.normalize_str(line) for line in lines]

    @property
    def tokenizer(self):
        """The base as an HF ``tokenizers.Tokenizer`` (built once: a big JSON)."""
        if self._tokenizer is None:
            self._tokenizer = hf_tokenizer(self.json)
        return self._tokenizer


def check_bpe_json(tj, where: str) -> None:
    """Refuse, with the reason, a JSON that is not a ``tokenizers`` BPE file.

    >>> check_bpe_json({"model": {"type": "Unigram", "vocab": [["a", -1.0]]}}, "x.json")
    Traceback (most recent call last):
    ...
    modtok.errors.TokenizerFileError: x.json: a Unigram tokenizer.json; extend and trim continue or cut a byte-level BPE ...
    """
    model = tj.get("model") if isinstance(tj, Mapping) else None
    if not isinstance(model, Mapping) or not isinstance(model.get("vocab"), (Mapping, list)):
        keys = ", ".join(list(tj)[:5]) if isinstance(tj, Mapping) else type(tj).__name__
        raise TokenizerFileError(f"{where}: not a tokenizers tokenizer.json (no model with a vocabulary; "
                                 f"it holds {keys})")
    if model.get("type") != "BPE":
        raise TokenizerFileError(
            f"{where}: a {model.get('type')} tokenizer.json; extend and trim continue or cut a byte-level BPE "
            "(merges in rank order); a Unigram has no merges to continue (train one with modtok modular-unigram)")


def _split_step(tj: dict) -> tuple[dict, str]:
    """The one ``Split`` step of a ``Sequence[Split, ByteLevel(use_regex=False)]``
    pre-tokenizer (the shape of every deployed byte-level BPE here) and its regex."""
    pre = tj.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers") if pre.get("type") == "Sequence" else [pre]
    kinds = [s.get("type") for s in steps]
    if kinds != ["Split", "ByteLevel"] or steps[1].get("use_regex"):
        raise TokenizerFileError(
            f"pre-tokenizer {kinds} is not Split + ByteLevel(use_regex=False): cannot swap its regex"
        )
    regex = (steps[0].get("pattern") or {}).get("Regex")
    if regex is None:
        raise TokenizerFileError("the Split step has no regex pattern")
    return steps[0], regex



# --------------------------------------------------------------------------
# continued BPE


@dataclass(repr=False)
class Extension:
    """A deployed tokenizer plus learned merges; new ids follow ``base.next_id``.

    ``merges``: learned (left bytes, right bytes) in rank order, after the
    filter; ``regex``: the split regex to export (R1: the base's own).
    Its ``repr`` is one line (the merge list of a real run is ~35 kB):

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.export import to_tokenizer_json
    >>> base = Base(to_tokenizer_json(BPEModel([(0xE0, 0xA4)], scheme="llama3")))
    >>> Extension(base, [("क".encode()[:2], b"\\x95")], base.regex)
    Extension(Base(tokenizer.json: 257 ids, 1 merges) + 1 merges, new ids 257..257, base regex)
    """

    base: Base
    merges: list[tuple[bytes, bytes]]
    regex: str

    def __repr__(self) -> str:
        new = self.new_tokens()
        ids = f"new ids {self.base.next_id}..{self.base.next_id + len(new) - 1}" if new else "no new id"
        regex = "base regex" if self.regex == self.base.regex else "repaired regex"
        return f"Extension({self.base!r} + {len(self.merges)} merges, {ids}, {regex})"

    def new_tokens(self) -> dict[bytes, int]:
        """Bytes -> deployed id of every learned token that is not an original one."""
        out: dict[bytes, int] = {}
        for a, b in self.merges:
            t = a + b
            if t not in self.base.id_of and t not in out:
                out[t] = self.base.next_id + len(out)
        return out

    def tokenizer_json(self) -> dict:
        """The base ``tokenizer.json`` with the learned vocabulary and merges appended
        and the Split regex swapped; every other field (special tokens, normalizer,
        post-processor, decoder) is kept as it was."""
        # a deep copy of everything but the model's big vocabulary and merge list,
        # which are copied one level (a merge pair is never changed, only appended):
        # deep-copying Llama-3's 280k merge pairs took 1.7 s per extension
        tj = {key: copy.deepcopy(value) for key, value in self.base.json.items() if key != "model"}
        model = tj["model"] = {key: copy.copy(value) for key, value in self.base.json["model"].items()}
        _split_step(tj)[0]["pattern"] = {"Regex": self.regex}
        # HF renumbers an added token that is not in the model vocabulary to
        # len(vocab) + k when it loads the file, which would put Llama-3's
        # specials onto the learned ids: pinning them in the vocabulary keeps
        # their ids (as modtok.artifacts.deployed does for the converted tokenizers).
        for added in tj.get("added_tokens") or []:
            model["vocab"].setdefault(added["content"], added["id"])
        for t, i in self.new_tokens().items():
            model["vocab"][byte_level(t)] = i
        as_list = not model["merges"] or not isinstance(model["merges"][0], str)
        for a, b in self.merges:
            pair = [byte_level(a), byte_level(b)]
            model["merges"].append(pair if as_list else " ".join(pair))
        return tj

    def tokenizer(self):
        """The extended tokenizer as an HF ``tokenizers.Tokenizer``."""
        return hf_tokenizer(self.tokenizer_json())

    def as_base(self) -> Base:
        """This extension as the base of the next language's run (the merges of each
        language continue from the tokens of the ones before it)."""
        return Base(self.tokenizer_json(), self.base.config, self.base.name)

    def save(self, out_dir: str | os.PathLike) -> Path:
        """Write ``tokenizer.json`` and ``tokenizer_config.json`` into ``out_dir``
        (:func:`modtok.adapt.hf_files.save`: the base's special tokens, BOS/EOS and chat
        template; ``AutoTokenizer`` loads the file as it is); returns the directory."""
        hf_files.save(out_dir, self.tokenizer_json(), self.base.config)
        return Path(out_dir)


# --------------------------------------------------------------------------
# the invariance, checked


def neutral_lines(ext: Extension, lines: Iterable[str], script: str | Sequence[str] = "Deva") -> list[str]:
    """The ``lines`` Proposition 1 speaks of: without a character of ``script`` (an ISO
    15924 code, or several; :func:`modtok.adapt.filters.any_of`) and, when ``ext``'s regex is
    not the base's, without a combining mark (``\\p{M}``; a superset of R2-deva's
    Devanagari marks).

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.export import to_tokenizer_json
    >>> base = Base(to_tokenizer_json(BPEModel([], scheme="llama3")))
    >>> r2 = Extension(base, [], arm_pattern(base.regex, "R2"))
    >>> neutral_lines(r2, ["Hello", "नमस्ते", "cafe\u0301", "Привет"])
    ['Hello', 'Привет']
    """
    scripts = [script] if isinstance(script, str) else list(script)
    moved = any_of(scripts, r"\p{M}" if ext.regex != ext.base.regex else "").search
    return [line for line in lines if not moved(line)]


def invariance(ext: Extension, probes: Mapping[str, Sequence[str]], script: str | Sequence[str] = "Deva",
               tokenizer=None) -> Invariance:
    """Check ``ext`` against its base: ids, merges and special tokens kept, and every
    probe line without a character of ``script`` (or of several scripts; and, when the
    regex was repaired, without a combining mark: Proposition 1's condition) encoded to the
    same ids (``add_special_tokens=False``). ``tokenizer``: ``ext.tokenizer()`` if
    already built.
    """
    tj = ext.tokenizer_json()
    base_model, model = ext.base.json["model"], tj["model"]
    vocab = model["vocab"]
    ids_kept = all(vocab.get(s) == i for s, i in base_model["vocab"].items())
    n = len(base_model["merges"])
    merges_kept = [merge_pair(m) for m in model["merges"][:n]] == [merge_pair(m) for m in base_model["merges"]]
    specials_kept = tj.get("added_tokens") == ext.base.json.get("added_tokens")
    tok = tokenizer if tokenizer is not None else ext.tokenizer()
    report, examples = {}, {}
    for name, lines in probes.items():
        kept = neutral_lines(ext, lines, script)
        old = ext.base.tokenizer.encode_batch(kept, add_special_tokens=False)
        new = tok.encode_batch(kept, add_special_tokens=False)
        same = [a.ids == b.ids for a, b in zip(old, new)]
        report[name] = (len(kept), sum(same), len(lines) - len(kept))
        if not all(same):
            examples[name] = kept[same.index(False)]
    return Invariance(ids_kept, merges_kept, specials_kept, report, examples)


def count_words(base: Base, lines: Iterable[str], regex: str, workers: int = 1) -> Counter:
    """Pre-token counts of ``lines`` as the extended tokenizer will see them:
    the base's normalizer, then ``regex`` (the ``regex`` module; HF's Onig
    agrees on these patterns, which the tests check); ``workers`` processes
    share big inputs (:func:`modtok.text.pretokenize.count_by_language`)."""
    return count_by_language({"": base.normalize(lines)}, workers=workers, split=regex)[""]


def extend(
    base: Base,
    counts: Counter | Mapping[str, Counter],
    merges: int,
    arm: str = "R1",
    keep=None,
    min_count: int = 2,
    progress: bool = False,
) -> Extension:
    """Continued BPE on ``base``: learn ``merges`` merges on pre-token ``counts``
    (made with ``arm_pattern(base.regex, arm)``, e.g. by :func:`count_words`),
    stop early when no pair occurs ``min_count`` times, then keep what ``keep``
    accepts (a :class:`BlockFilter`; default the strict Devanagari filter;
    ``keep=False`` keeps everything, which breaks English invariance).
    ``progress`` shows a bar over the merges.
    """
    return sweep(base, counts, [merges], arm, keep, min_count, progress)[merges]


def sweep(
    base: Base,
    counts: Counter | Mapping[str, Counter],
    ks: Iterable[int],
    arm: str = "R1",
    keep=None,
    min_count: int = 2,
    progress: bool = False,
) -> dict[int, Extension]:
    """:func:`extend` at every K of ``ks`` from one run: continued BPE is greedy,
    so the run to K is the first K merges of the run to max(ks); each prefix is
    filtered on its own."""
    ks = sorted(set(ks))
    if not ks or ks[0] < 0:
        raise BudgetError(f"merge counts {ks} must be non-negative (and at least one)")
    regex = arm_pattern(base.regex, arm)
    if keep is None:
        keep = BlockFilter()
    learned = learn(base, counts, ks[-1], min_count, progress)
    out = {}
    for k in ks:
        merges = learned[:k] if keep is False else filter_merges(learned[:k], keep.keeps, set(base.id_of))
        out[k] = Extension(base, merges, regex)
    return out


def learn(base: Base, counts: Counter | Mapping[str, Counter], merges: int, min_count: int = 2,
          progress: bool = False) -> list[tuple[bytes, bytes]]:
    """The first ``merges`` merges of continued BPE on ``base``, unfiltered, as byte pairs
    (``progress``: a bar over the merges)."""
    counts = {"all": counts} if isinstance(counts, Counter) else dict(counts)
    langs, words, wc = words_from_counts(counts)
    # a word that is one base token (ignore_merges) has no pair: leave it out
    keep = [i for i, w in enumerate(words) if w not in base.id_of]
    words, wc = [words[i] for i in keep], wc[keep]
    priv = base.private
    priv_bytes, new_of = list(priv.token_bytes), {}  # learned tokens are appended to a copy
    # learned private ids start at len(priv.token_bytes) >= every deployed id, so their
    # engine rank (= id) orders them after all base tokens, in creation order
    engine = Engine(words, wc, languages=langs, merges=priv.merges, results=priv.results, rank=priv.rank,
                    capacity=len(priv_bytes) + merges + 1)
    out: list[tuple[bytes, bytes]] = []
    with progress_bar(total=merges, desc="continued BPE merges", enabled=progress) as bar:
        while len(out) < merges:
            best = engine.best_pair()
            if best is None or best[2] < min_count:
                break
            a, b, _ = best
            t = priv_bytes[a] + priv_bytes[b]
            c = priv.id_of.get(t, new_of.get(t))
            if c is None:
                c = new_of[t] = len(priv_bytes)
                priv_bytes.append(t)
            engine.merge(a, b, c)
            out.append((priv_bytes[a], priv_bytes[b]))
            bar.update(1)
    return out


# --------------------------------------------------------------------------
# the whole of `modtok extend`, as one call

PROBE_LANGS = ("eng_Latn", "rus_Cyrl")  # the invariance's default probe: evaluation devtest, no Indic mark
PROBE_LINES = 4  # lines of each probe text whose ids and logits the saved directory is checked on
HOLD_OUT = 50  # every HOLD_OUT-th training line is held out: invariance probe text, never counted
HELD_OUT_MAX = 2000  # ... at most this many per language


@dataclass
class ExtendRun:
    """What :func:`run` did: the ``extension``, per language what was read and learned
    (``languages``), the ``invariance`` report, the class ``AutoTokenizer`` built from
    the saved directory, the model's rows and logit changes (``model``, ``None`` without
    one), the directory written (``out``) and what the caller must be told (``notes``: a
    strict filter that kept few merges, with what the relaxed one keeps)."""

    extension: Extension
    languages: dict[str, dict]
    invariance: Invariance
    tokenizer_class: str
    model: dict | None
    out: Path
    notes: list[str]


def texts_of(langs: Sequence[str], manifest: str | None = None,
             text: Sequence[str] | None = None) -> dict[str, object]:
    """``{lang: its text}`` for :func:`run` from ``modtok extend``'s flags: the ``manifest``
    for every language, or the ``text`` files: all of them for one language, else one per
    language in ``langs`` order (any other count is refused).

    >>> texts_of(["npi_Deva"], text=["a.txt", "b.txt"]), texts_of(["npi_Deva", "mar_Deva"], text=["n", "m"])
    ({'npi_Deva': ['a.txt', 'b.txt']}, {'npi_Deva': 'n', 'mar_Deva': 'm'})
    """
    if manifest:
        return {lang: manifest for lang in langs}
    if len(langs) == 1:
        return {langs[0]: text}
    if len(text) == len(langs):
        return dict(zip(langs, text))
    raise UsageError(f"{len(langs)} languages need one --text file each, in --lang order "
                     f"({len(text)} given), or a --manifest")


def probe_text(files: Sequence[str] | None = None, eval: str | os.PathLike | None = None
               ) -> tuple[dict[str, list[str]], str]:
    """``({name: lines}, source)`` of the invariance's probe text: ``files`` (any format
    :mod:`modtok.text.corpus` reads), else :data:`PROBE_LANGS` of the evaluation text
    (``eval``, ``$MODTOK_EVAL`` or FLORES-200 devtest)."""
    from modtok.text import data
    from modtok.text.eval_sets import eval_set

    if files:
        return {f: data.open_corpus(f, lang="probe").lines() for f in files}, "--probe " + " ".join(files)
    evals = eval_set(eval)
    langs = [lang for lang in PROBE_LANGS if evals is not None and lang in evals.languages()]
    if not langs:
        where = evals.label() if evals is not None else "no evaluation text is configured and it"
        raise ConfigError(f"no probe text for the invariance check: {where} has neither "
                          f"{' nor '.join(PROBE_LANGS)}; give --probe FILE... (or --eval DIR)")
    return {f"{evals.label()} {lang}": lines for lang, lines in evals.load(langs).items()}, \
        f"{evals.label()}: {', '.join(langs)}"


FILTERS = options.EXTEND_FILTERS


def _filter_for(kind: str, script: str):
    """The merge filter ``kind`` of ``script`` (``False``: none). The script is checked for
    every kind, ``none`` too (the invariance needs its characters): an unknown code is
    refused here, before any text is read."""
    if kind not in FILTERS:
        raise ConfigError(f"unknown merge filter {kind!r} ({', '.join(FILTERS)})")
    keep = BlockFilter.for_script(script, relaxed=kind == "relaxed")
    return False if kind == "none" else keep


@dataclass(frozen=True)
class ExtendOptions:
    """What ``modtok extend`` is asked (:func:`run` reads the fields; the command line builds
    them from its flags, and ``run.json``'s ``args`` is their ``asdict``). ``texts``: ``{lang:
    a manifest path or text files}`` (:func:`texts_of`); ``merges``: per language."""

    base: str
    out: str
    texts: dict[str, object]
    merges: int
    arm: str = "R2"
    filter: str = "strict"
    min_count: int = 2
    max_chars: int | None = None
    probe_files: list[str] | None = None
    eval: str | None = None
    model: str | None = None
    logit_tol: float = 1e-4
    pad_to_multiple_of: int | None = None
    any_script: bool = False


@runtime_checkable
class Continuation(Protocol):
    """A base of one kind as :func:`run`'s phases use it: :class:`ByteLevel` (a byte-level BPE
    ``tokenizer.json``, :class:`Base`) or :class:`modtok.adapt.spm.SentencePiece` (a
    SentencePiece BPE ``.model``, :class:`~modtok.adapt.spm.SpmBase`). ``read(name)`` gives the
    ``tokenizer.json`` a model directory is checked against, before the base is built with
    that directory's settings (``kind(name, tokenizer_json, config_dir, arm)``); ``base`` is
    the base loaded, ``checks`` names what :meth:`invariance` compares.

    Both bases have ``filter(merges, keep)`` and ``next_id``, both extensions ``as_base()``,
    ``save(dir)``, ``new_tokens()``, ``regex`` and ``base``; what differs is here (the
    tests check that both kinds have every member).
    """

    base: Base | spm.SpmBase
    checks: str

    @staticmethod
    def read(name: str | os.PathLike) -> dict:
        """The base's ``tokenizer.json`` (refused with the reason when it is not of this kind)."""

    def describe(self) -> str:
        """The base and what the arm does to it, for the log."""

    def learn(self, current, lines: Sequence[str], merges: int, min_count: int, progress: bool,
              workers: int) -> list:
        """The first ``merges`` merges of continued BPE on ``current`` (the base, or the
        extension so far as a base) over ``lines``, unfiltered."""

    def extension(self, merges: Sequence) -> Extension | spm.SpmExtension:
        """:attr:`base` plus ``merges``."""

    def invariance(self, ext, probes: Mapping[str, Sequence[str]], scripts: Sequence[str]) -> Invariance:
        """``ext`` checked against :attr:`base` on the ``probes`` without ``scripts``."""


class ByteLevel:
    """:class:`Continuation` of a byte-level BPE :class:`Base`: counted with the arm's
    split regex (:func:`arm_pattern`), learned on the engine, checked in HF ``tokenizers``."""

    checks = "invariance"

    def __init__(self, name: str | os.PathLike, tokenizer_json: Mapping, config_dir, arm: str):
        self.base = Base(tokenizer_json, hf_files.base_config(name, tokenizer_json, config_dir), str(name))
        self.arm, self.regex = arm, arm_pattern(self.base.regex, arm)

    @staticmethod
    def read(name: str | os.PathLike) -> dict:
        tj = deployed.load_json(name)
        check_bpe_json(tj, str(name))
        return tj

    def describe(self) -> str:
        regex = "base regex" if self.regex == self.base.regex else "repaired regex"
        return f"{self.base!r}; arm {self.arm} ({regex})"

    def learn(self, current: Base, lines, merges, min_count, progress, workers) -> list[tuple[bytes, bytes]]:
        # counted with the first base's normalizer: every later base's is a copy of it, and
        # one base builds its HF tokenizer (a big JSON) once
        return learn(current, count_words(self.base, lines, self.regex, workers=workers), merges, min_count,
                     progress)

    def extension(self, merges) -> Extension:
        return Extension(self.base, list(merges), self.regex)

    def invariance(self, ext: Extension, probes, scripts) -> Invariance:
        return invariance(ext, probes, scripts, tokenizer=ext.tokenizer())


def kind_of(name: str | os.PathLike) -> type[Continuation]:
    """The :class:`Continuation` of the base ``name`` names: a SentencePiece ``.model``
    (:func:`modtok.artifacts.deployed.spm_path`) or a byte-level ``tokenizer.json``."""
    return ByteLevel if deployed.spm_path(name) is None else spm.SentencePiece


def run(options: ExtendOptions, *, force: bool = False, inputs: Iterable = (), workers: int = 1,
        progress: bool = False, log=None) -> ExtendRun:
    """``modtok extend`` as ``options`` asks (:class:`ExtendOptions`; below, its fields by
    name): continued BPE on ``base`` for each language of ``texts``
    (``{lang: a manifest path or text files}``, any format :mod:`modtok.text.corpus`
    reads), checked before anything is written, saved through
    :func:`modtok.outputs.output_dir` into ``out`` (``force``: over an earlier extend).

    Phases (each reported to ``log``, a callable taking one line, and on a bar with ``progress``):

    1. ``base``: :meth:`Base.load`; ``merges`` (per language) must be at least 1 (``-K 0``
       would learn nothing and change only the regex: refused, it is no extension);
    2. ``model``: with ``model``, the directory is checked before any training
       (:func:`modtok.adapt.hf_model.check_model_dir`: local, rows covering the base, a
       tokenizer inside it equal to the base) and loaded;
    3. ``text``: each language's text, its script checked as every reader of this project
       checks it (:mod:`modtok.text.scripts`: at least half of each file's sampled letters
       in the language code's script, Japanese with kana, Chinese in the code's own standard,
       unless ``any_script``); every :data:`HOLD_OUT`-th line
       is held out;
    4. ``learn``: languages in the order given, each with ``merges`` merges on top of the
       base and the languages before it, filtered by its own script's characters (``filter``:
       strict, relaxed (App. H) or none; :class:`~modtok.adapt.filters.BlockFilter.for_script`:
       Unicode's ``Script_Extensions`` of the code's ISO 15924 script, any script). When the
       strict filter keeps fewer than :data:`~modtok.adapt.filters.LOW_KEEP` of the learned
       merges, the relaxed one is run on the same merges and ``notes`` says what it keeps;
    5. ``check``: :func:`invariance` on the probe text (:func:`probe_text` of
       ``probe_files`` / ``eval``) and on each language's held-out lines without any of
       the scripts (nothing is written when a line moved);
    6. ``save``: ``tokenizer.json`` + ``tokenizer_config.json`` (and the grown model:
       :func:`modtok.adapt.hf_model.resize_causal_lm`, padding kept); the written
       directory is loaded back with ``AutoTokenizer`` (its ids equal ``tokenizer.json``'s
       on probe and target lines) and ``AutoModelForCausalLM`` (its logits over the real
       original ids within ``logit_tol`` of the original model's), else nothing is written.
    """
    from modtok.adapt import hf_model
    from modtok.outputs import output_dir
    from modtok.text import data
    from modtok.text.scripts import script_share

    say = log or (lambda line: None)
    o = options
    base, out, texts, merges, arm, filter, min_count, model = (o.base, o.out, o.texts, o.merges, o.arm, o.filter,
                                                               o.min_count, o.model)
    phases = ["base", "model", "text", "learn", "check", "save"]
    if not texts:
        raise ConfigError("extend needs the text of at least one language")
    if merges < 1:
        raise BudgetError(f"-K {merges}: continued BPE needs at least one merge per language (with -K 0 nothing "
                          "is learned and only the regex would change, which is not an extension)")
    scripts = {lang: data.script_of(lang) for lang in texts}
    keeps = {lang: _filter_for(filter, s) for lang, s in scripts.items()}
    with output_dir(out, command="extend", args=asdict(options), force=force, inputs=inputs) as written, \
            progress_bar(total=len(phases), desc="extend", enabled=progress) as bar:

        def phase(name: str) -> None:
            bar.set_postfix_str(name, refresh=False)
            if name != phases[0]:
                bar.update(1)

        # 1. base: its kind (a sentencepiece .model or a byte-level tokenizer.json) and its file
        phase("base")
        probes, probe_source = probe_text(o.probe_files, o.eval)
        kind = kind_of(base)
        base_tj = kind.read(base)
        # 2. model: the directory checked against the base before any work (its tokenizer
        # settings are the base's when it holds the same tokenizer)
        checked = None
        if model is not None:
            phase("model")
            checked = hf_model.check_model_dir(model, base_tj)
        config_dir = checked.path if checked and checked.tokenizer_checked else None
        continuation = kind(base, base_tj, config_dir, arm)
        b = continuation.base
        say(f"base: {continuation.describe()}, filter {filter}")
        lm = None
        if checked is not None:
            say(f"model: {checked.path} ({checked.model_type}, {checked.rows:,} rows)"
                + "".join(f"; {note}" for note in checked.notes))
            lm = hf_model.load_causal_lm(checked.path)  # before the long work: a bad directory fails fast

        # 3. text: each language's lines, its script share said, every HOLD_OUT-th line held out
        phase("text")
        train, held, report = {}, {}, {}
        for lang, spec in texts.items():
            corpus = data.open_corpus(spec, lang=lang, max_chars=o.max_chars, any_script=o.any_script)
            lines = corpus.lines()
            share = script_share("\n".join(lines), scripts[lang])
            report[lang] = {"lines": corpus.n_units, "chars": corpus.chars, "script": scripts[lang],
                            "script_share": None if share is None else round(share, 4)}
            say(f"text: {lang}, {corpus.n_units:,} lines, {corpus.chars:,} chars; "
                + ("no letter" if share is None else f"{share:.1%} of its letters in {scripts[lang]}")
                + (f"; {data.cut_note(lang, corpus.cut)}" if corpus.cut else ""))
            if corpus.cut:
                report[lang]["cut"] = list(corpus.cut)
            train[lang] = [line for i, line in enumerate(lines) if i % HOLD_OUT != HOLD_OUT - 1]
            held[lang] = [line for i, line in enumerate(lines) if i % HOLD_OUT == HOLD_OUT - 1][:HELD_OUT_MAX]
            report[lang]["held_out"] = len(held[lang])

        # 4. learn: each language on top of the base and the languages before it, filtered by its script
        phase("learn")
        current, learned_all, notes = b, [], []
        for lang in texts:
            learned = continuation.learn(current, train[lang], merges, min_count, progress, workers)
            kept = learned if keeps[lang] is False else current.filter(learned, keeps[lang])
            learned_all += kept
            report[lang].update(merges_learned=len(learned), merges_kept=len(kept))
            line = f"learned: {lang}, {len(learned):,} merges, {len(kept):,} kept by the filter"
            if filter == "strict" and len(kept) < LOW_KEEP * len(learned):  # say what App. H would keep
                relaxed = len(current.filter(learned, BlockFilter.for_script(scripts[lang], relaxed=True)))
                report[lang]["merges_kept_relaxed"] = relaxed
                notes.append(low_keep_note(lang, scripts[lang], len(learned), len(kept), relaxed))
                line += f" (--filter relaxed would keep {relaxed:,})"
            say(line)
            if lang != list(texts)[-1]:  # the next language continues from this one's tokens
                current = continuation.extension(learned_all).as_base()
        ext = continuation.extension(learned_all)
        say(repr(ext))

        # 5. check: text without the target scripts (and, with a repaired regex, marks) keeps its ids
        phase("check")
        all_scripts = sorted(set(scripts.values()))
        probe_text_all = {**probes, **{f"held-out {lang} text": lines for lang, lines in held.items()}}
        inv = continuation.invariance(ext, probe_text_all, all_scripts)
        say(f"{continuation.checks}, probe text {probe_source} and the held-out training lines:")
        for line in inv.lines():
            say("  " + line)
        if not any(n for n, _, _ in inv.probes.values()):  # e.g. a Latin target with English probe text
            free_of = "/".join(all_scripts) + " characters" + (" and marks" if ext.regex != b.regex else "")
            raise ConfigError(f"no probe or held-out line is free of {free_of}: the invariance was not checked, "
                              "nothing written; give --probe FILE with text in another script")
        if not inv.ok:
            raise ConfigError("the extension changes the base's ids or merges, or the ids of probe text without "
                              f"marks or {'/'.join(all_scripts)} characters: not saved, nothing written")

        # 6. save: the tokenizer (and the grown model), loaded back and checked, else nothing is written
        phase("save")
        ext.save(written.path)
        neutral = [line for lines in probe_text_all.values()
                   for line in neutral_lines(ext, lines, all_scripts)[:PROBE_LINES]]
        target = [line for lang in texts for line in held[lang][:PROBE_LINES] or train[lang][:PROBE_LINES]]
        model_report = None
        if lm is not None:
            from tokenizers import Tokenizer

            saved_tok = Tokenizer.from_file(str(written.path / "tokenizer.json"))  # BOS/EOS as AutoTokenizer adds them
            at_ids = [e.ids[:64] for e in saved_tok.encode_batch(neutral)]
            if not at_ids:
                raise ConfigError("no probe line without the target scripts to check the model's logits on: give "
                                  "--probe FILE (e.g. English text)")
            before = hf_model.logits(lm, at_ids, b.next_id)
            resized = hf_model.resize_causal_lm(lm, ext, at_ids, o.pad_to_multiple_of)
            say(f"model: {resized.rows_before:,} -> {resized.rows_after:,} rows ({'tied' if resized.tied else 'untied'}"
                f" embeddings, new rows the mean of their constituents); logits over the {b.next_id:,} original ids "
                f"on {len(at_ids)} probe lines: max |change| {resized.max_logit_change:.3g}")
            if not resized.max_logit_change <= o.logit_tol:
                raise ConfigError(f"the resized model's logits moved by {resized.max_logit_change:.3g} "
                                  f"(> {o.logit_tol:g}) on mark-free text: nothing written")
            saved = hf_model.save_checked(resized.model, written.path, at_ids, before, b.next_id, o.logit_tol,
                                          "the extended model")
            model_report = {"path": str(checked.path), "model_type": checked.model_type,
                            "rows_before": resized.rows_before, "rows_after": resized.rows_after,
                            "tied": resized.tied, "max_logit_change": resized.max_logit_change,
                            "max_logit_change_reloaded": saved}
        name, n = hf_files.check_loads(written.path, neutral + target)
        say(f"AutoTokenizer loads it as {name}: ids equal tokenizer.json's on {n} probe and target lines"
            + ("; AutoModelForCausalLM loads it with the same logits" if lm is not None else ""))
        bar.update(1)
        written.record(base=str(base), probe_text=probe_source, arm=arm, filter=filter, merges_per_language=merges, languages=report,
                       new_tokens=len(ext.new_tokens()), invariance={k: list(v) for k, v in inv.probes.items()},
                       auto_tokenizer=name, model=model_report)
    return ExtendRun(ext, report, inv, name, model_report, Path(out), notes)
