"""A SentencePiece ``.model``, read and written at the wire level, and a BPE one as the HF
``tokenizer.json`` that encodes like it (Mistral's and Llama-2's family).

A ``.model`` file is a serialised ``ModelProto``: repeated field 1 holds the pieces
(``piece`` 1, ``score`` 2, ``type`` 3), field 2 the ``TrainerSpec`` (``model_type`` 3:
1 Unigram, 2 BPE; ``byte_fallback`` 35; ``unk_id`` .. ``pad_id`` 40-43), field 3 the
``NormalizerSpec`` (``name`` 1, ``precompiled_charsmap`` 2, ``add_dummy_prefix`` 3,
``remove_extra_whitespaces`` 4, ``escape_whitespaces`` 5). ``protobuf`` is no dependency
here, so :func:`read` decodes the wire format itself and keeps every field it does not
interpret as raw bytes; :meth:`SpmModel.serialize` writes the pieces and those bytes back,
so a model with pieces added or removed keeps everything else as it was. This is the
project's one SentencePiece codec: the Unigram models trained here are written by it too
(:meth:`modtok.unigram.model.UnigramModel.sentencepiece_proto`).

**SentencePiece BPE as an HF BPE** (:meth:`SpmModel.tokenizer_json`). SentencePiece
encodes a normalised string (spaces as ``▁``, a ``▁`` in front) from its characters,
merging again and again the adjacent pair whose concatenation is the piece with the
highest score (leftmost first); a character that is no piece becomes its UTF-8 byte
pieces ``<0xNN>`` (byte fallback). The HF BPE that does the same has every piece in its
vocabulary at its id and, as merges, every cut of a piece into two pieces, ordered by
the piece's score (then by the parts' ids): the method of ``transformers``'
``LlamaConverter``. Control pieces (``<s>``, ``[INST]``) become special added tokens.
The tests compare the two on FLORES-200 English and Nepali for the deployed models.

>>> m = SpmModel([("<unk>", 0.0, UNKNOWN), ("a", -1.0, NORMAL), ("b", -2.0, NORMAL), ("ab", -0.5, NORMAL)],
...              trainer={"model_type": BPE, "bos_id": -1, "eos_id": -1})
>>> m.tokenizer_json()["model"]["merges"]
[['a', 'b']]
>>> read(m.serialize()).pieces == m.pieces, m.processor().encode("ab b", out_type=str)
(True, ['▁', 'ab', '▁', 'b'])
"""

from __future__ import annotations

import base64
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

from modtok.errors import TokenizerFileError

# ModelProto.SentencePiece.Type and TrainerSpec.ModelType
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
UNIGRAM, BPE = 1, 2

# proto2 defaults of the fields read (sentencepiece_model.proto)
TRAINER_FIELDS = {3: ("model_type", UNIGRAM), 4: ("vocab_size", 8000), 22: ("split_by_whitespace", 1),
                  24: ("treat_whitespace_as_suffix", 0), 25: ("split_digits", 0),
                  26: ("allow_whitespace_only_pieces", 0), 35: ("byte_fallback", 0), 40: ("unk_id", 0),
                  41: ("bos_id", 1), 42: ("eos_id", 2), 43: ("pad_id", -1)}
NORMALIZER_FIELDS = {1: ("name", b""), 2: ("precompiled_charsmap", b""), 3: ("add_dummy_prefix", 1),
                     4: ("remove_extra_whitespaces", 1), 5: ("escape_whitespaces", 1)}


# --------------------------------------------------------------------------
# the wire format


def _varint(data: bytes, i: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        if i >= len(data):
            raise TokenizerFileError("truncated varint: not a sentencepiece .model")
        b = data[i]
        n |= (b & 0x7F) << shift
        i += 1
        if not b & 0x80:
            return n, i
        shift += 7


def _fields(data: bytes):
    """``(number, wire type, value, raw bytes)`` of each field of a message."""
    i = 0
    while i < len(data):
        start = i
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i : i + 8], i + 8
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i : i + size], i + size
        elif wire == 5:
            value, i = data[i : i + 4], i + 4
        else:
            raise TokenizerFileError(f"wire type {wire} at byte {start}: not a sentencepiece .model")
        if i > len(data):
            raise TokenizerFileError(f"field {number} at byte {start} runs past the end: not a sentencepiece .model")
        yield number, wire, value, data[start:i]


def _enc_varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def _piece_bytes(piece: str, score: float, kind: int) -> bytes:
    text = piece.encode("utf-8")
    body = b"\x0a" + _enc_varint(len(text)) + text + b"\x15" + struct.pack("<f", score)
    if kind != NORMAL:
        body += b"\x18" + _enc_varint(kind)
    return b"\x0a" + _enc_varint(len(body)) + body


def _signed(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def _spec(data: bytes, known: dict) -> dict:
    out = {name: default for name, default in known.values()}
    for number, _, value, _ in _fields(data):
        if number in known:
            out[known[number][0]] = _signed(value) if isinstance(value, int) else value
    return out


# --------------------------------------------------------------------------
# the model


@dataclass
class SpmModel:
    """The pieces ``(piece, score, type)`` in id order, the trainer and normalizer settings
    read (:data:`TRAINER_FIELDS`, :data:`NORMALIZER_FIELDS`) and every other top-level field
    as raw bytes (``rest``), written back as read."""

    pieces: list[tuple[str, float, int]]
    trainer: dict = field(default_factory=dict)
    normalizer: dict = field(default_factory=dict)
    rest: bytes = b""

    def __post_init__(self):
        self.trainer = {**{n: d for n, d in TRAINER_FIELDS.values()}, **self.trainer}
        self.normalizer = {**{n: d for n, d in NORMALIZER_FIELDS.values()}, **self.normalizer}

    @property
    def is_bpe(self) -> bool:
        return self.trainer["model_type"] == BPE

    def serialize(self) -> bytes:
        """The ``.model`` bytes: the pieces, then every other field as it was read (a model
        built here, with nothing read: its trainer and normalizer settings)."""
        return b"".join(_piece_bytes(*p) for p in self.pieces) + (self.rest or self._specs())

    def _specs(self) -> bytes:
        def message(number: int, known: dict, values: dict) -> bytes:
            body = b""
            for n, (name, _) in sorted(known.items()):
                v = values[name]
                body += (_enc_varint(n << 3 | 2) + _enc_varint(len(v)) + v if isinstance(v, bytes)
                         else _enc_varint(n << 3) + _enc_varint(int(v)))
            return _enc_varint(number << 3 | 2) + _enc_varint(len(body)) + body

        norm = dict(self.normalizer, name=self.normalizer["name"] or b"identity")
        trainer = dict(self.trainer, vocab_size=len(self.pieces))
        return message(2, TRAINER_FIELDS, trainer) + message(3, NORMALIZER_FIELDS, norm)

    def with_pieces(self, pieces: list[tuple[str, float, int]]) -> SpmModel:
        """The same model with other pieces (trainer and normalizer fields unchanged: the
        unk/bos/eos ids must still name the same pieces)."""
        return SpmModel(list(pieces), dict(self.trainer), dict(self.normalizer), self.rest)

    def processor(self):
        """A ``sentencepiece.SentencePieceProcessor`` of this model."""
        import sentencepiece

        return sentencepiece.SentencePieceProcessor(model_proto=self.serialize())

    def tokenizer_json(self) -> dict:
        """The HF ``tokenizer.json`` that encodes like this BPE model (module docstring)."""
        if not self.is_bpe:
            raise TokenizerFileError("a sentencepiece Unigram model is no BPE: it has no merges to write")
        if self.trainer["treat_whitespace_as_suffix"]:
            raise TokenizerFileError("treat_whitespace_as_suffix models are not supported")
        vocab = {p: i for i, (p, _, _) in enumerate(self.pieces)}
        if len(vocab) != len(self.pieces):
            raise TokenizerFileError("two pieces of the .model are the same string")
        normal = {p: (s, i) for i, (p, s, t) in enumerate(self.pieces) if t == NORMAL}
        merges = []
        for piece, (score, i) in sorted(normal.items(), key=lambda kv: (-kv[1][0], kv[1][1])):
            cuts = [(piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in normal and piece[k:] in normal]
            merges += sorted(cuts, key=lambda c: (vocab[c[0]], vocab[c[1]]))
        norm = self.normalizer
        steps = []
        if norm["precompiled_charsmap"]:
            steps.append({"type": "Precompiled",
                          "precompiled_charsmap": base64.b64encode(norm["precompiled_charsmap"]).decode()})
        if norm["remove_extra_whitespaces"]:
            steps += [{"type": "Strip", "strip_left": True, "strip_right": True},
                      {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
        if norm["add_dummy_prefix"]:
            steps.append({"type": "Prepend", "prepend": "▁"})
        if norm["escape_whitespaces"]:
            steps.append({"type": "Replace", "pattern": {"String": " "}, "content": "▁"})
        unk = self.trainer["unk_id"]
        added = [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": t == USER_DEFINED, "special": t != USER_DEFINED}
                 for i, (p, _, t) in enumerate(self.pieces) if t in (CONTROL, UNKNOWN, USER_DEFINED)]
        decoders = [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
                    {"type": "Fuse"}]
        if norm["add_dummy_prefix"]:
            decoders.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": {"type": "Sequence", "normalizers": steps} if steps else None,
            "pre_tokenizer": None, "post_processor": None,
            "decoder": {"type": "Sequence", "decoders": decoders},
            "model": {"type": "BPE", "dropout": None, "unk_token": self.pieces[unk][0] if 0 <= unk < len(self.pieces)
                      else None, "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
                      "byte_fallback": bool(self.trainer["byte_fallback"]), "ignore_merges": False,
                      "vocab": vocab, "merges": [list(m) for m in merges]},
        }


def read(source: bytes | str | os.PathLike) -> SpmModel:
    """The :class:`SpmModel` of ``.model`` bytes or a ``.model`` file."""
    where = "the .model bytes"
    if not isinstance(source, (bytes, bytearray)):
        where = str(source)
        try:
            source = Path(source).read_bytes()
        except OSError as e:
            raise TokenizerFileError(f"{where}: cannot read it ({e})") from None
    pieces, trainer, normalizer, rest = [], {}, {}, []
    try:
        for number, wire, value, raw in _fields(bytes(source)):
            if number == 1 and wire == 2:
                piece = {"piece": "", "score": 0.0, "type": NORMAL}
                for n, w, v, _ in _fields(value):
                    if n == 1 and w == 2:
                        piece["piece"] = v.decode("utf-8")
                    elif n == 2 and w == 5:
                        piece["score"] = struct.unpack("<f", v)[0]
                    elif n == 3 and w == 0:
                        piece["type"] = v
                pieces.append((piece["piece"], piece["score"], piece["type"]))
            else:
                if number == 2 and wire == 2:
                    trainer = _spec(value, TRAINER_FIELDS)
                elif number == 3 and wire == 2:
                    normalizer = _spec(value, NORMALIZER_FIELDS)
                rest.append(raw)
    except (TokenizerFileError, UnicodeDecodeError) as e:
        raise TokenizerFileError(f"{where}: not a sentencepiece .model ({e})") from None
    if not pieces:
        raise TokenizerFileError(f"{where}: not a sentencepiece .model (no pieces)")
    return SpmModel(pieces, trainer, normalizer, b"".join(rest))
