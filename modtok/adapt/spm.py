"""Continued BPE on a SentencePiece BPE ``.model`` (Mistral, Llama-2): new pieces, every old one kept.

SentencePiece BPE encodes a line from its characters, merging the adjacent pair whose
concatenation is the highest-scored piece (:mod:`modtok.artifacts.spm_bpe`); a character
that is no piece becomes byte pieces ``<0xNN>`` (byte fallback). Extending it:

    segment the text with the base (sentencepiece itself), byte-fallback runs read back
    as the characters they encode; words begin at a piece that begins with ``▁``
    while fewer than K merges: merge the most frequent adjacent pair (count >= min_count;
    equal counts: the smallest pair of strings)
    keep the merges whose piece holds a complete character of the target script, built
    from base pieces, kept pieces, or target characters the base lacks (§V filter)
    new pieces, after every old id: those characters, then the merges' pieces, each with
    a score below every old piece's and below the one before, so they merge last, in order

Text without a target character cannot reach a new piece, so its ids are the
base's in ``sentencepiece`` and in the HF ``tokenizer.json`` written beside the
``.model`` (:func:`invariance` checks both). There is no split regex: the arms R2 /
R2-deva have nothing to repair here.

>>> from modtok.artifacts.spm_bpe import SpmModel, BPE, NORMAL, UNKNOWN, BYTE
>>> m = SpmModel([("<unk>", 0.0, UNKNOWN), ("▁", -1.0, NORMAL), ("a", -2.0, NORMAL)]
...              + [(f"<0x{b:02X}>", 0.0, BYTE) for b in range(256)],
...              trainer={"model_type": BPE, "byte_fallback": 1, "bos_id": -1, "eos_id": -1})
>>> base = SpmBase(m)
>>> words = base.count_words(["क a", "क"])
>>> sorted(words.items())
[(('▁', 'a'), 1), (('▁', 'क'), 2)]
>>> ext = SpmExtension(base, learn(base, words, 5))
>>> ext.new_tokens()
{b'\\xe0\\xa4\\x95': 259, b'\\xe2\\x96\\x81\\xe0\\xa4\\x95': 260}
"""

from __future__ import annotations

import itertools
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from modtok import atomic
from modtok.adapt import hf_files
from modtok.adapt.filters import any_of
from modtok.adapt.invariance import Invariance
from modtok.artifacts import deployed, spm_bpe
from modtok.artifacts.tokenizer_json import hf_tokenizer, merge_pair
from modtok.bpe.reference import merge_word
from modtok.errors import TokenizerFileError
from modtok.progress import bar as progress_bar


def read_base(name_or_path: str | os.PathLike) -> tuple[spm_bpe.SpmModel, dict]:
    """The ``.model`` a base names (:func:`modtok.artifacts.deployed.spm_path`) and the HF
    ``tokenizer.json`` that encodes like it, with the post-processor of a ``tokenizer.json``
    written beside a ``tokenizer.model`` (an earlier ``extend`` or ``trim`` put the base's
    BOS/EOS template there; the ``.model`` has no place for it, and the next adaptation
    must not drop it). A Unigram ``.model`` comes with no ``tokenizer.json`` (``{}``)."""
    path = deployed.spm_path(name_or_path)
    if path is None:
        raise TokenizerFileError(f"{name_or_path}: no sentencepiece .model")
    model = spm_bpe.read(path)
    if not model.is_bpe:
        return model, {}
    tj = model.tokenizer_json()
    beside = path.parent / "tokenizer.json"
    if path.name == "tokenizer.model" and beside.is_file():
        tj["post_processor"] = deployed.load_json(beside).get("post_processor")
    return model, tj


class SpmBase:
    """A SentencePiece BPE model read for extension: ``model`` (:class:`SpmModel`), its HF
    ``json`` and ``tokenizer``, ``processor`` (sentencepiece), ``next_id`` (its piece count),
    ``id_of`` (piece -> id), ``config`` (``tokenizer_config.json`` settings), ``name``."""

    def __init__(self, model: spm_bpe.SpmModel, config: Mapping | None = None, name: str | None = None,
                 tokenizer_json: Mapping | None = None):
        if not model.is_bpe:
            raise TokenizerFileError(f"{name or 'the .model'}: a sentencepiece Unigram model; extend continues a BPE "
                                     "(a Unigram has no merge order to continue: train one with modtok modular-unigram)")
        self.model, self.config, self.name = model, dict(config or {}), name
        self.json = dict(tokenizer_json) if tokenizer_json else model.tokenizer_json()
        self.tokenizer = hf_tokenizer(self.json)
        self.processor = model.processor()
        self.next_id = len(model.pieces)
        self.id_of = {p: i for i, (p, _, _) in enumerate(model.pieces)}
        self.regex = None
        self.merges = self.json["model"]["merges"]

    @classmethod
    def load(cls, name_or_path: str | os.PathLike, model_dir: str | os.PathLike | None = None) -> SpmBase:
        """A deployed sentencepiece name (``mistral``), a ``.model`` file or a directory with a
        ``tokenizer.model`` (:func:`modtok.artifacts.deployed.spm_path`)."""
        model, tj = read_base(name_or_path)
        config = hf_files.base_config(name_or_path, tj, model_dir) if tj else {}
        return cls(model, config, str(name_or_path), tj)

    def __repr__(self) -> str:
        return f"SpmBase({self.name or '.model'}: {self.next_id} pieces, {len(self.merges)} merges)"

    def segment(self, line: str) -> list[str]:
        """The base's pieces of ``line``, byte-fallback runs read back as their characters."""
        out, pending = [], b""
        for piece in self.processor.encode(line, out_type=str):
            if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
                pending += bytes([int(piece[3:5], 16)])
                try:
                    out += list(pending.decode("utf-8"))
                    pending = b""
                except UnicodeDecodeError:
                    continue  # a character's bytes continue in the next piece
            else:
                out.append(piece)
        return out

    def count_words(self, lines: Iterable[str]) -> Counter:
        """``{word: count}``: each line's :meth:`segment`, cut before every piece that begins
        with ``▁`` (SentencePiece's word boundary)."""
        words: Counter = Counter()
        for line in lines:
            word: list[str] = []
            for piece in self.segment(line):
                if piece.startswith("▁") and word:
                    words[tuple(word)] += 1
                    word = []
                word.append(piece)
            if word:
                words[tuple(word)] += 1
        return words

    def filter(self, merges: Sequence[tuple[str, str]], keep) -> list[tuple[str, str]]:
        """The merges whose piece ``keep`` (a :class:`~modtok.adapt.filters.BlockFilter`) accepts,
        built from base pieces, kept pieces or target characters (:meth:`BlockFilter.holds`)."""
        made = set(self.id_of)
        out = []
        for a, b in merges:
            parts_ok = all(p in made or (len(p) == 1 and keep.holds(p)) for p in (a, b))
            if parts_ok and keep.keeps((a + b).encode("utf-8")):
                out.append((a, b))
                made.add(a + b)
        return out


def learn(base: SpmBase, words: Mapping[tuple[str, ...], int], merges: int, min_count: int = 2,
          progress: bool = False) -> list[tuple[str, str]]:
    """The first ``merges`` merges of continued BPE on ``words`` (:meth:`SpmBase.count_words`),
    unfiltered: the most frequent adjacent pair, equal counts broken by the smallest
    ``(left, right)``; pair counts are updated only in the words a merge touches."""
    vocab = [tuple(w) for w in words]
    freq = list(words.values())
    pairs: Counter = Counter()
    where: dict[tuple[str, str], set[int]] = defaultdict(set)
    for i, w in enumerate(vocab):
        for pair in itertools.pairwise(w):
            pairs[pair] += freq[i]
            where[pair].add(i)
    out: list[tuple[str, str]] = []
    with progress_bar(total=merges, desc="continued BPE merges", enabled=progress) as bar:
        while len(out) < merges and pairs:
            best = min(pairs, key=lambda p: (-pairs[p], p))
            if pairs[best] < min_count:
                break
            a, b = best
            for i in sorted(where.pop(best)):
                w = vocab[i]
                for pair in itertools.pairwise(w):
                    pairs[pair] -= freq[i]
                    if pairs[pair] <= 0:
                        del pairs[pair]
                vocab[i] = merged = merge_word(w, a, b, a + b)
                for pair in itertools.pairwise(merged):
                    pairs[pair] += freq[i]
                    where[pair].add(i)
            out.append(best)
            bar.update(1)
    return out


class SpmExtension:
    """A SentencePiece BPE base plus learned merges: the new pieces (:meth:`new_pieces`)
    follow ``base.next_id``; :meth:`model` is the extended ``.model``."""

    def __init__(self, base: SpmBase, merges: Sequence[tuple[str, str]]):
        self.base, self.merges, self.regex = base, list(merges), None

    def __repr__(self) -> str:
        new = self.new_pieces()
        ids = f"new ids {self.base.next_id}..{self.base.next_id + len(new) - 1}" if new else "no new id"
        return f"SpmExtension({self.base!r} + {len(self.merges)} merges, {ids})"

    def new_pieces(self) -> list[str]:
        """New pieces in id order: the characters the merges use that the base lacks (first
        use first), then each merge's piece."""
        known, chars, made = set(self.base.id_of), [], []
        for a, b in self.merges:
            chars += [p for p in (a, b) if p not in known and len(p) == 1 and p not in chars]
            if a + b not in known and a + b not in made:
                made.append(a + b)
        return chars + made

    def new_tokens(self) -> dict[bytes, int]:
        """UTF-8 of every new piece -> its id."""
        return {p.encode("utf-8"): self.base.next_id + k for k, p in enumerate(self.new_pieces())}

    def model(self) -> spm_bpe.SpmModel:
        """The extended model: the base's pieces, then the new ones, each scored below every
        old piece and below the one before (so merged last, in this order)."""
        import numpy as np

        # each score the next float32 below the one before: a .model stores float32, and at
        # Mistral's lowest score (-1e9, its whitespace-run pieces) "minus 1" is the same float
        score = np.float32(min(s for _, s, t in self.base.model.pieces if t == spm_bpe.NORMAL))
        new = []
        for p in self.new_pieces():
            score = np.nextafter(score, np.float32(-np.inf))
            new.append((p, float(score), spm_bpe.NORMAL))
        return self.base.model.with_pieces(self.base.model.pieces + new)

    def tokenizer_json(self) -> dict:
        """The extended model's ``tokenizer.json``, with the base's post-processor (BOS/EOS)."""
        return self._json(self.model())

    def _json(self, model: spm_bpe.SpmModel) -> dict:
        return {**model.tokenizer_json(), "post_processor": self.base.json.get("post_processor")}

    def tokenizer(self):
        return hf_tokenizer(self.tokenizer_json())

    def as_base(self) -> SpmBase:
        """This extension as the base of the next language's run."""
        return SpmBase(self.model(), self.base.config, self.base.name)

    def constituents(self, token: bytes) -> list[int]:
        """Old ids of a new piece: the base's own encoding of its text (byte pieces for a
        character the base lacks)."""
        return [t.id for t in self.base.tokenizer.model.tokenize(token.decode("utf-8"))]

    def save(self, out_dir: str | os.PathLike) -> Path:
        """``tokenizer.model`` (the extended :meth:`model`), ``tokenizer.json`` and
        ``tokenizer_config.json`` (:func:`modtok.adapt.hf_files.save`)."""
        out = Path(out_dir)
        model = self.model()
        hf_files.save(out, self._json(model), self.base.config)
        atomic.write_bytes(out / "tokenizer.model", model.serialize())
        return out


class SentencePiece:
    """:class:`modtok.adapt.extend.Continuation` of a SentencePiece BPE :class:`SpmBase`: words
    cut at ``▁`` from sentencepiece's own segmentation (no split regex: an arm has nothing to
    change), learned here (:func:`learn`), checked in ``sentencepiece`` and HF ``tokenizers``."""

    checks = "invariance (sentencepiece and tokenizer.json)"

    def __init__(self, name: str | os.PathLike, tokenizer_json: Mapping, config_dir, arm: str):
        # the .model read again (``tokenizer_json`` is :meth:`read`'s, built from it), now with
        # the settings of ``config_dir``
        self.base, self.arm = SpmBase.load(name, config_dir), arm

    @staticmethod
    def read(name: str | os.PathLike) -> dict:
        return SpmBase.load(name).json

    def describe(self) -> str:
        return f"{self.base!r} (sentencepiece BPE: no split regex, arm {self.arm} has nothing to change)"

    def learn(self, current: SpmBase, lines, merges, min_count, progress, workers) -> list[tuple[str, str]]:
        return learn(current, current.count_words(lines), merges, min_count, progress)

    def extension(self, merges) -> SpmExtension:
        return SpmExtension(self.base, merges)

    def invariance(self, ext: SpmExtension, probes, scripts) -> Invariance:
        return invariance(ext, probes, scripts)


def invariance(ext: SpmExtension, probes: Mapping[str, Sequence[str]], scripts: Sequence[str]) -> Invariance:
    """:class:`~modtok.adapt.invariance.Invariance` of an extended ``.model``: old pieces at their
    ids with their scores, the old merges first in the ``tokenizer.json``, the control pieces
    kept, and every probe line without a character of ``scripts`` encoded to the
    same ids by ``sentencepiece`` *and* by the HF tokenizer (a line counts only when both agree)."""
    model = ext.model()
    n = ext.base.next_id
    ids_kept = model.pieces[:n] == ext.base.model.pieces
    tj = ext._json(model)
    merges_kept = [merge_pair(m) for m in tj["model"]["merges"][: len(ext.base.merges)]] == \
        [merge_pair(m) for m in ext.base.merges]
    specials_kept = tj["added_tokens"] == ext.base.json["added_tokens"]
    moved = any_of(scripts).search
    sp, hf = model.processor(), hf_tokenizer(tj)
    report, examples = {}, {}
    for name, lines in probes.items():
        kept = [line for line in lines if not moved(line)]
        same = [ext.base.processor.encode(line) == sp.encode(line)
                == ext.base.tokenizer.encode(line, add_special_tokens=False).ids
                == hf.encode(line, add_special_tokens=False).ids for line in kept]
        report[name] = (len(kept), sum(same), len(lines) - len(kept))
        if not all(same):
            examples[name] = kept[same.index(False)]
    return Invariance(ids_kept, merges_kept, specials_kept, report, examples)
