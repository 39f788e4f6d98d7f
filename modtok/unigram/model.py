"""A byte-fallback Unigram model: pieces, scores, piece types; encode and export.

The layout is sentencepiece's: piece types (``NORMAL``, ``UNKNOWN``, ``CONTROL``,
``BYTE``, ...) as in ``sentencepiece_model.proto``, one ``<unk>``, the 256 byte
pieces ``<0x00>`` ... ``<0xFF>``, and normal pieces whose score is a
log-probability. Only normal pieces are lattice edges; the others score 0.

Normalisation is sentencepiece's identity rule with its whitespace handling:
every space becomes ``▁`` (U+2581) and one ``▁`` is prepended
(``add_dummy_prefix``); nothing else changes (no NFKC, extra spaces kept).

>>> normalize("Hello  world")
'▁Hello▁▁world'

A *restricted* model (a subtokenizer) is a boolean mask over ids: normal pieces
outside it are not edges. :meth:`UnigramModel.encode` is the reference encoder
(the compiled lattice of :mod:`modtok.unigram.lattice`); the exports reproduce it:

- :meth:`UnigramModel.tokenizer_json`: an HF ``tokenizers`` Unigram model with
  ``byte_fallback``; normaliser ``Prepend("▁")`` + ``Replace(" ", "▁")`` (the
  whole line is one lattice, exactly like sentencepiece; a ``Metaspace``
  pre-tokenizer would cut at every ``▁`` and forbid whitespace-only pieces such
  as ``▁▁``); decoder: byte fallback, ``▁`` -> space, strip the dummy space.
  Restrict it with :func:`modtok.artifacts.tokenizer_json.restrict` (or ``ModularTokenizer``).
- :meth:`UnigramModel.sentencepiece_proto`: a ``.model`` where pieces outside
  the mask are typed ``UNUSED`` (sentencepiece skips them), so ids stay global.

Known limits of the formats (not of the model): a ``▁`` in the input decodes
to a space in both formats (as in sentencepiece); HF ``tokenizers`` also
matches the *literal* text of a byte piece such as ``<0x41>`` (it puts every
vocabulary entry in its trie), so such text is the only input whose HF encoding
differs from the reference and does not decode back.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

import numpy as np

from modtok import atomic
from modtok.artifacts.spm_bpe import BYTE, CONTROL, NORMAL, UNIGRAM, UNKNOWN, UNUSED, SpmModel
from modtok.errors import MissingByteFallbackError, TokenizerFileError
from modtok.unigram import lattice

SPACE = "\u2581"  # ▁, sentencepiece's whitespace meta symbol
BYTE_PIECES = [f"<0x{b:02X}>" for b in range(256)]


SCORE_QUANTUM = 2.0**-8  # see quantize_scores


def quantize_scores(scores) -> np.ndarray:
    """Scores rounded to multiples of 2^-8 nats.

    Then every path score up to 2^15 nats in magnitude is computed *exactly* in
    float32 (sentencepiece) and float64 (HF, the reference), so exact ties --
    common: ``cc + c`` vs ``c + cc`` -- are broken by the documented rule in all
    three, never by rounding. The change of at most 2^-9 nats per piece is far
    below the gaps that decide real segmentations.

    >>> quantize_scores([-1.2345, -0.001]).tolist()
    [-1.234375, -0.0]
    """
    return np.round(np.asarray(scores, dtype=np.float64) / SCORE_QUANTUM) * SCORE_QUANTUM


def normalize(text: str) -> str:
    """sentencepiece identity normalisation: ``▁`` for spaces, one ``▁`` prepended
    (the empty string stays empty, as in sentencepiece and HF)."""
    return SPACE + text.replace(" ", SPACE) if text else ""


class UnigramModel:
    """Pieces (``list[str]``), scores (float64 log-probabilities for normal
    pieces, 0 for the others) and sentencepiece piece types (int8).

    Raises :class:`MissingByteFallbackError` without exactly one ``<unk>`` and
    the 256 byte pieces, :class:`TokenizerFileError` on duplicate or empty
    normal pieces or non-finite scores.
    """

    def __init__(self, pieces: Sequence[str], scores, types):
        self.notes: list[str] = []  # what training had to change, in words (modtok.unigram.train)
        self.pieces = list(pieces)
        self.scores = np.asarray(scores, dtype=np.float64).copy()
        self.types = np.asarray(types, dtype=np.int8).copy()
        if not (len(self.pieces) == len(self.scores) == len(self.types)):
            raise TokenizerFileError("pieces, scores and types differ in length")
        unk = np.flatnonzero(self.types == UNKNOWN)
        if len(unk) != 1:
            raise MissingByteFallbackError(f"a byte-fallback model needs exactly one <unk> piece, found {len(unk)}")
        self.unk_id = int(unk[0])
        index = {p: i for i, p in enumerate(self.pieces)}
        missing = [p for p in BYTE_PIECES if p not in index or self.types[index[p]] != BYTE]
        if missing:
            raise MissingByteFallbackError(
                f"no byte fallback: {len(missing)} of the 256 byte pieces are missing "
                f"(e.g. {missing[0]!r}); train sentencepiece with byte_fallback=True"
            )
        self.byte_ids = np.array([index[p] for p in BYTE_PIECES], dtype=np.int32)
        if len(index) != len(self.pieces):
            seen = set()
            dup = next(p for p in self.pieces if p in seen or seen.add(p))
            raise TokenizerFileError(f"piece {dup!r} occurs more than once")
        normal = self.types == NORMAL
        if not np.isfinite(self.scores[normal]).all():
            raise TokenizerFileError("a normal piece has a non-finite score")
        if any(not self.pieces[i] for i in np.flatnonzero(normal)):
            raise TokenizerFileError("a normal piece is the empty string")
        self.scores[~normal] = 0.0
        self.index = index

    def __len__(self) -> int:
        return len(self.pieces)

    def __repr__(self) -> str:
        return f"UnigramModel({len(self)} pieces, {len(self.normal_ids)} normal)"

    @cached_property
    def normal_ids(self) -> np.ndarray:
        return np.flatnonzero(self.types == NORMAL)

    @cached_property
    def base_ids(self) -> np.ndarray:
        """Ids of every non-normal piece (unk, controls, bytes): in every sub-vocabulary."""
        return np.flatnonzero(self.types != NORMAL)

    @cached_property
    def trie(self) -> lattice.Trie:
        return lattice.Trie(self.pieces, self.normal_ids.tolist())

    def mask(self, ids: Iterable[int] | None = None) -> np.ndarray:
        """Boolean mask of the pieces allowed in the lattice (normal pieces among ``ids``)."""
        m = self.types == NORMAL
        if ids is not None:
            keep = np.zeros(len(self), dtype=bool)
            keep[np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids, dtype=np.int64)] = True
            m &= keep
        return m

    def unk_score(self, allowed: np.ndarray | None = None) -> float:
        """Score of an unknown edge: the minimum allowed normal score minus 10."""
        allowed = self.mask() if allowed is None else allowed
        s = self.scores[allowed]
        return float(min(s.min(), 0.0) if len(s) else 0.0) - lattice.UNK_PENALTY

    # ---- encoding (the reference restricted Viterbi)
    def encode_normalized(self, units: Sequence[str], ids=None) -> list[list[int]]:
        """Viterbi ids of already normalised strings, restricted to ``ids``."""
        allowed = self.mask(ids)
        cps, offsets = lattice.encode_units(units)
        out, lens = lattice.viterbi(cps, offsets, self.trie, self.scores, self.unk_score(allowed),
                                    self.byte_ids, allowed)
        return lattice.split_ids(out, lens, offsets)

    def encode(self, texts: Sequence[str] | str, ids=None):
        """Ids of one text (``list[int]``) or of a list of texts, restricted to ``ids``."""
        if isinstance(texts, str):
            return self.encode_normalized([normalize(texts)], ids)[0]
        return self.encode_normalized([normalize(t) for t in texts], ids)

    def encode_batch(self, texts: Sequence[str], ids=None) -> list[list[int]]:
        """Ids of each text (what :func:`modtok.evaluation.metrics.token_counts` calls)."""
        return self.encode(list(texts), ids)

    def decode(self, ids: Iterable[int]) -> str:
        """Text of ids: pieces joined, bytes decoded, ``▁`` -> space, dummy prefix removed."""
        out, buf = [], bytearray()
        for i in ids:
            if self.types[i] == BYTE:
                buf.append(int(self.pieces[i][3:5], 16))
                continue
            if buf:
                out.append(buf.decode("utf-8", "replace"))
                buf = bytearray()
            if self.types[i] == NORMAL:
                out.append(self.pieces[i])
        if buf:
            out.append(buf.decode("utf-8", "replace"))
        text = "".join(out).replace(SPACE, " ")
        return text[1:] if text.startswith(" ") else text

    # ---- export
    def tokenizer_json(self) -> dict:
        """HF ``tokenizers`` serialisation (Unigram, byte fallback) of the full model."""
        specials = [
            {"id": int(i), "content": self.pieces[i], "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for i in np.flatnonzero((self.types == CONTROL) | (self.types == UNKNOWN))
        ]
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": specials,
            "normalizer": {"type": "Sequence", "normalizers": [
                {"type": "Prepend", "prepend": SPACE},
                {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
            ]},
            "pre_tokenizer": None,
            "post_processor": None,
            "decoder": {"type": "Sequence", "decoders": [
                {"type": "ByteFallback"},
                {"type": "Fuse"},
                {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ]},
            "model": {
                "type": "Unigram",
                "unk_id": self.unk_id,
                "vocab": [[p, float(s)] for p, s in zip(self.pieces, self.scores)],
                "byte_fallback": True,
            },
        }

    def sentencepiece_proto(self, ids=None) -> bytes:
        """Serialised sentencepiece ``ModelProto`` (:mod:`modtok.artifacts.spm_bpe` writes it):
        byte fallback, sentencepiece's identity normalisation (spaces become ``▁``, a ``▁`` is
        prepended, nothing else changes), digits split; normal pieces outside ``ids`` are typed
        ``UNUSED`` (ids stay global). Scores are stored as float32."""
        types = self.types.copy()
        types[(types == NORMAL) & ~self.mask(ids)] = UNUSED
        control = np.flatnonzero(types == CONTROL)
        bos = next((int(i) for i in control if self.pieces[i] == "<s>"), -1)
        eos = next((int(i) for i in control if self.pieces[i] == "</s>"), -1)
        trainer = {"model_type": UNIGRAM, "split_digits": 1, "allow_whitespace_only_pieces": 1, "byte_fallback": 1,
                   "unk_id": self.unk_id, "bos_id": bos, "eos_id": eos, "pad_id": -1}
        normalizer = {"name": b"identity", "remove_extra_whitespaces": 0}
        pieces = list(zip(self.pieces, self.scores.tolist(), types.tolist()))
        return SpmModel(pieces, trainer, normalizer).serialize()

    def sentencepiece(self, ids=None):
        """A ``SentencePieceProcessor`` of the (restricted) model."""
        import sentencepiece as spm

        return spm.SentencePieceProcessor(model_proto=self.sentencepiece_proto(ids))

    def save_sentencepiece(self, path, ids=None) -> Path:
        """Write the ``.model`` file atomically."""
        path = Path(path)
        atomic.write_bytes(path, self.sentencepiece_proto(ids))
        return path

    @classmethod
    def from_sentencepiece(cls, sp) -> "UnigramModel":
        """The model of a ``SentencePieceProcessor`` (or serialised model bytes)."""
        import sentencepiece as spm

        if isinstance(sp, (bytes, bytearray)):
            sp = spm.SentencePieceProcessor(model_proto=bytes(sp))
        n = sp.get_piece_size()
        pieces = [sp.id_to_piece(i) for i in range(n)]
        scores = [sp.get_score(i) for i in range(n)]
        types = [
            UNKNOWN if sp.is_unknown(i) else CONTROL if sp.is_control(i) else BYTE if sp.is_byte(i)
            else UNUSED if sp.is_unused(i) else NORMAL
            for i in range(n)
        ]
        return cls(pieces, scores, types)
