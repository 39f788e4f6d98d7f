"""Write sentencepiece ``.model`` files without the protobuf package.

A ``.model`` file is a serialised ``ModelProto`` (sentencepiece_model.proto).
``protobuf`` is not a dependency of modtok, and the few messages we need are
simple, so this module writes the wire format directly: varints, tags,
length-delimited fields and little-endian float32.

Fields written (numbers from sentencepiece_model.proto):

- ``ModelProto``: 1 ``pieces`` (repeated), 2 ``trainer_spec``, 3 ``normalizer_spec``
- ``SentencePiece``: 1 ``piece``, 2 ``score`` (float), 3 ``type``
- ``TrainerSpec``: 3 ``model_type`` (1 = UNIGRAM), 4 ``vocab_size``,
  22 ``split_by_whitespace``, 25 ``split_digits``, 26 ``allow_whitespace_only_pieces``,
  35 ``byte_fallback``, 40-43 ``unk/bos/eos/pad_id``
- ``NormalizerSpec``: 1 ``name``, 2 ``precompiled_charsmap`` (empty = identity),
  3 ``add_dummy_prefix``, 4 ``remove_extra_whitespaces``, 5 ``escape_whitespaces``

>>> _varint(300).hex(), _field_varint(3, 1).hex(), _field_bytes(1, b"ab").hex()
('ac02', '1801', '0a026162')
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

# sentencepiece piece types (ModelProto.SentencePiece.Type)
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6


def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int32/int64 negatives are written as 10-byte two's complement
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field_varint(number: int, value: int) -> bytes:
    return _varint(number << 3 | 0) + _varint(int(value))


def _field_bytes(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _field_float(number: int, value: float) -> bytes:
    return _varint(number << 3 | 5) + struct.pack("<f", value)


def model_proto(pieces: Sequence[str], scores: Sequence[float], types: Sequence[int],
                unk_id: int, bos_id: int = -1, eos_id: int = -1) -> bytes:
    """Serialised ``ModelProto`` of a byte-fallback Unigram model with
    sentencepiece's identity normalisation (spaces become ``▁``, a ``▁`` is
    prepended, nothing else changes). Load it with
    ``SentencePieceProcessor(model_proto=...)`` or write it to a ``.model`` file."""
    out = bytearray()
    for piece, score, kind in zip(pieces, scores, types):
        msg = _field_bytes(1, piece.encode("utf-8")) + _field_float(2, score) + _field_varint(3, kind)
        out += _field_bytes(1, msg)
    trainer = b"".join([
        _field_varint(3, 1),  # UNIGRAM
        _field_varint(4, len(pieces)),
        _field_varint(22, 1),
        _field_varint(25, 1),
        _field_varint(26, 1),
        _field_varint(35, 1),
        _field_varint(40, unk_id),
        _field_varint(41, bos_id),
        _field_varint(42, eos_id),
        _field_varint(43, -1),
    ])
    normalizer = b"".join([
        _field_bytes(1, b"identity"),
        _field_bytes(2, b""),
        _field_varint(3, 1),
        _field_varint(4, 0),
        _field_varint(5, 1),
    ])
    out += _field_bytes(2, trainer) + _field_bytes(3, normalizer)
    return bytes(out)
