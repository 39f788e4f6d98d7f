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
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from modtok import atomic
from modtok.adapt.filters import SCRIPT_BLOCKS, BlockFilter, filter_merges
from modtok.adapt import hf_files
from modtok.artifacts import deployed
from modtok.artifacts.tokenizer_json import hf_tokenizer, merge_pair, write_json
from modtok.bpe.engine import Engine, words_from_counts
from modtok.errors import BudgetError, ConfigError, DataError, TokenizerFileError
from modtok.progress import bar as progress_bar
from modtok.text import pretokenize  # noqa: F401 (the doctests use pretokenize)
from modtok.text.pretokenize import DEVANAGARI_MARKS, byte_level, count_by_language, from_byte_level


# The letters-only word and punctuation classes and their repairs (§V): the
# marks join the word class and leave the leading and punctuation classes.
_LETTERS_ONLY = (r"[^\r\n\p{L}\p{N}]?\p{L}+", r" ?[^\s\p{L}\p{N}]+")

ARMS = ("R1", "R2", "R2-deva")


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
        continued-BPE run (issue 23), and every run on the same base shares it."""
        order = [i for i, t in enumerate(self.token_bytes) if t is not None and len(t) > 1]
        token_bytes = tuple([bytes([b]) for b in range(256)] + [self.token_bytes[i] for i in order])
        id_of = {t: p for p, t in enumerate(token_bytes)}
        rank = np.empty(len(token_bytes), np.int64)  # tie-break by deployed id
        rank[:256] = [self.id_of[bytes([b])] for b in range(256)]
        rank[256:] = order
        merges = np.array([(id_of[a], id_of[b]) for a, b in self.merges], np.int64).reshape(-1, 2)
        results = np.array([id_of[a + b] for a, b in self.merges], np.int64)
        return Private(token_bytes, id_of, rank, merges, results)

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

    def save(self, out_dir: str | os.PathLike) -> Path:
        """Write ``tokenizer.json`` and ``tokenizer_config.json`` into ``out_dir``
        (:func:`modtok.adapt.hf_files.save`: the base's special tokens, BOS/EOS and chat
        template; ``AutoTokenizer`` loads the file as it is); returns the directory."""
        hf_files.save(out_dir, self.tokenizer_json(), self.base.config)
        return Path(out_dir)


# --------------------------------------------------------------------------
# the invariance, checked


@dataclass
class Invariance:
    """What an extension kept of its base (:func:`invariance`).

    ``ids_kept`` / ``merges_kept`` / ``specials_kept``: every original vocabulary
    entry at its id, the original merges as the first ones in their order, the
    added tokens unchanged; ``probes``: ``{name: (lines compared, lines with
    identical ids, lines skipped)}``, a line being skipped when it holds a
    character of the target block or (repaired regex) a combining mark;
    ``examples``: the first line of each probe whose ids moved.
    """

    ids_kept: bool
    merges_kept: bool
    specials_kept: bool
    probes: dict[str, tuple[int, int, int]]
    examples: dict[str, str]

    @property
    def ok(self) -> bool:
        return self.ids_kept and self.merges_kept and self.specials_kept and all(
            same == n for n, same, _ in self.probes.values())

    def lines(self) -> list[str]:
        """The report, one line per check."""
        yes = {True: "kept", False: "CHANGED"}
        out = [f"original ids {yes[self.ids_kept]}, original merges {yes[self.merges_kept]}, special tokens "
               + yes[self.specials_kept]]
        for name, (n, same, skipped) in self.probes.items():
            out.append(f"{name}: {same}/{n} lines with identical ids"
                       + (f" ({skipped} line{'s' * (skipped > 1)} with marks or the target script skipped)"
                          if skipped else ""))
            if name in self.examples:
                out.append(f"  first changed line: {self.examples[name][:120]!r}")
        return out


def neutral_lines(ext: Extension, lines: Iterable[str], script: str = "Deva") -> list[str]:
    """The ``lines`` Proposition 1 speaks of: without a character of ``script``'s block
    (:data:`SCRIPT_BLOCKS`) and, when ``ext``'s regex is not the base's, without a
    combining mark (``\\p{M}``; a superset of R2-deva's Devanagari marks).

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.export import to_tokenizer_json
    >>> base = Base(to_tokenizer_json(BPEModel([], scheme="llama3")))
    >>> r2 = Extension(base, [], arm_pattern(base.regex, "R2"))
    >>> neutral_lines(r2, ["Hello", "नमस्ते", "cafe\u0301", "Привет"])
    ['Hello', 'Привет']
    """
    import regex as re

    if script not in SCRIPT_BLOCKS:
        raise DataError(f"no Unicode block for script {script!r} (known: {', '.join(SCRIPT_BLOCKS)})")
    lo, hi = SCRIPT_BLOCKS[script]
    marks = r"\p{M}" if ext.regex != ext.base.regex else ""
    moved = re.compile(f"[{chr(lo)}-{chr(hi)}{marks}]").search
    return [line for line in lines if not moved(line)]


def invariance(ext: Extension, probes: Mapping[str, Sequence[str]], script: str = "Deva", tokenizer=None) -> Invariance:
    """Check ``ext`` against its base: ids, merges and special tokens kept, and every
    probe line without a character of ``script``'s block (and, when the regex was
    repaired, without a combining mark: Proposition 1's condition) encoded to the
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
