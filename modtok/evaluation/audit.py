"""The pre-token audit: why a tokenizer's premium is what it is (Table III/IV).

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" measures, for a
language ``x`` against English on aligned lines (``P`` = pre-tokens of the
tokenizer's *whole* pre-tokenizer pipeline, ``T`` = tokens, sums over lines):

=================  ===========================================================
premium            ΣT(x) / ΣT(en), with a 95% paired-bootstrap interval (lines
                   resampled together with their translations)
floor              ΣP(x) / ΣT(en): no merge crosses a pre-token border, so no
                   number of appended merges brings the premium below it (§III)
decomposition      premium = base × regex factor × vocab factor (App. G, our
                   reading): base = ΣP_rep(x)/ΣT(en) (the floor of the repaired
                   Llama-3 pattern ``llama3-marks``), regex factor =
                   ΣP(x)/ΣP_rep(x), vocab factor = ΣT(x)/ΣP(x) (tokens per
                   pre-token). The product telescopes to the premium.
mark_initial       share of x's tokens whose bytes begin with a combining mark
                   (``\\p{M}``): the letters-only signature (§III)
lossless           decode(encode(line)) == line on every line; when not, ``lossless_note``
                   says why (the tokenizer's normaliser, or the round trip) and where
regex class        letters-only (a word is cut before its marks), mark-aware
                   (words stay whole), or other
=================  ===========================================================

"The whole pipeline" is App. G's Falcon3 lesson: a tokenizer may split again
after its regex (a ``Sequence`` of ``Split`` steps, ``Digits``, a
``ByteLevel`` with its own regex), so :func:`pretoken_counts` runs the
tokenizer's own normalizer and pre-tokenizer, never just its last regex.

Each measure has a form ``..._of`` over :class:`~modtok.evaluation.metrics.Encoded`
sides: :func:`audit` encodes the language's lines and the reference's once each
(ids, tokens and pre-tokens per line) and computes every column from them.

>>> from tokenizers import Tokenizer, models, pre_tokenizers
>>> tok = Tokenizer(models.BPE())
>>> tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Digits(individual_digits=True)])
>>> pretoken_counts(tok, ["ab 12", "c"]).tolist()          # 'ab' '1' '2' | 'c'
[3, 1]
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterable, Sequence

import numpy as np

from modtok.artifacts import deployed, tokenizer_json
from modtok.errors import TokenizerFileError
from modtok.evaluation.metrics import Encoded, aligned, check_aligned, pretoken_counts, pretokens, ratio
from modtok.evaluation.stats import ratio_ci
from modtok.text.pretokenize import from_byte_level, pattern

# what the decomposition's base is measured with (App. G: the repaired Llama-3 pattern)
P_REP = "llama3-marks"

# probe of :func:`regex_class`: a Nepali word with a virama and a vowel sign
_PROBE = " नमस्ते"


def load_tokenizer(name_or_path: str | os.PathLike):
    """An HF ``tokenizers.Tokenizer``: a deployed name (``llama3``, ``qwen3``, …),
    a ``tokenizer.json`` file, or a directory holding one
    (:func:`modtok.artifacts.deployed.load_json`). A deployed name is
    :func:`modtok.artifacts.deployed.load`-ed as it is (not through its JSON text
    and back: 3 of the 4 CPU seconds of ``modtok audit llama3`` were those round trips)."""
    if str(name_or_path) in deployed.DEPLOYED:
        return deployed.load(str(name_or_path))
    try:
        return tokenizer_json.hf_tokenizer(deployed.load_json(name_or_path))
    except TokenizerFileError as e:
        raise TokenizerFileError(f"{name_or_path}: not a tokenizers JSON file ({e})") from None


# pre-tokens: :func:`~modtok.evaluation.metrics.pretokens` and
# :func:`~modtok.evaluation.metrics.pretoken_counts` (imported above), also read
# as ``audit.pretokens`` / ``audit.pretoken_counts``.


def with_split(tokenizer, scheme: str):
    """A copy of ``tokenizer`` (normalizer kept) whose pre-tokenizer is only the
    named scheme's regex, ``Split(isolated)``: the P_rep pipeline of App. G.
    (The audit does not copy: :meth:`Encoded.split` runs the same pipeline.)"""
    from tokenizers import Regex, Tokenizer, pre_tokenizers

    out = Tokenizer.from_str(tokenizer.to_str())
    out.pre_tokenizer = pre_tokenizers.Split(Regex(pattern(scheme)), behavior="isolated")
    return out


# --------------------------------------------------------------------------
# ratios over aligned lines


def encode_aligned(tokenizer, lines, ref_lines) -> tuple[Encoded, Encoded]:
    """The language's and the reference's aligned lines, each :class:`Encoded` once."""
    sides = aligned({"x": lines, "ref": ref_lines})
    return Encoded(tokenizer, sides["x"], "x"), Encoded(tokenizer, sides["ref"], "ref")


def premium_ci_of(x: Encoded, ref: Encoded, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
    """:func:`premium_ci` of the :class:`Encoded` sides."""
    check_aligned({"x": x, "ref": ref})
    return ratio_ci(x.tokens, ref.tokens, n_boot, level, seed)


def premium_ci(tokenizer, lines, ref_lines, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
    """Premium ΣT(x)/ΣT(ref) with its paired-bootstrap interval (:func:`modtok.evaluation.stats.ratio_ci`,
    lines resampled with their translations): ``(premium, lo, hi)``."""
    return premium_ci_of(*encode_aligned(tokenizer, lines, ref_lines), n_boot, level, seed)


def floor_of(x: Encoded, ref: Encoded) -> float:
    """:func:`floor` of the :class:`Encoded` sides."""
    check_aligned({"x": x, "ref": ref})
    return ratio(x.pretokens.sum(), ref.total, "floor (the reference side has no token)")


def floor(tokenizer, lines, ref_lines) -> float:
    """Pre-token floor ΣP(x) / ΣT(ref) under the tokenizer's full pipeline (§III)."""
    return floor_of(*encode_aligned(tokenizer, lines, ref_lines))


def decomposition_of(x: Encoded, ref: Encoded, repaired: str = P_REP) -> dict[str, float]:
    """:func:`decomposition` of the :class:`Encoded` sides."""
    check_aligned({"x": x, "ref": ref})
    p_x, p_rep = x.pretokens.sum(), x.split(repaired).sum()
    return {
        "base": ratio(p_rep, ref.total, "base (the reference side has no token)"),
        "regex_factor": ratio(p_x, p_rep, "regex factor"),
        "vocab_factor": ratio(x.total, p_x, "vocab factor"),
    }


def decomposition(tokenizer, lines, ref_lines, repaired: str = P_REP) -> dict[str, float]:
    """``{"base", "regex_factor", "vocab_factor"}`` with base × regex × vocab = premium
    (definitions in the module docstring)."""
    return decomposition_of(*encode_aligned(tokenizer, lines, ref_lines), repaired)


# --------------------------------------------------------------------------
# tokens


def token_bytes(tokenizer, i: int) -> bytes:
    """The bytes of token ``i``: byte-level strings are mapped back to bytes;
    other tokens (a special token, a sentencepiece piece) are their UTF-8."""
    s = tokenizer.id_to_token(i)
    try:
        return from_byte_level(s)
    except KeyError:
        return s.encode("utf-8")


def starts_with_mark(data: bytes) -> bool:
    """Do these bytes begin with the UTF-8 of a combining mark (\\p{M})?

    >>> starts_with_mark("े".encode()), starts_with_mark("न".encode()), starts_with_mark("े".encode()[:2])
    (True, False, False)
    """
    for n in (1, 2, 3, 4):
        try:
            ch = data[:n].decode("utf-8")
        except UnicodeDecodeError:
            continue
        return unicodedata.category(ch).startswith("M")
    return False


def mark_initial_of(e: Encoded) -> float:
    """:func:`mark_initial_share` of an :class:`Encoded` text."""
    used = np.flatnonzero(e.id_counts)
    marked = sum(int(e.id_counts[i]) for i in used if starts_with_mark(token_bytes(e.tokenizer, int(i))))
    return ratio(marked, e.total, "mark-initial share (no token)")


def mark_initial_share(tokenizer, lines: Iterable[str]) -> float:
    """Share of the tokens of ``lines`` that begin with a combining mark."""
    return mark_initial_of(Encoded(tokenizer, lines))


def lossless_of(e: Encoded) -> bool:
    """:func:`lossless` of an :class:`Encoded` text."""
    decoded = e.tokenizer.decode_batch(e.ids, skip_special_tokens=False)
    return all(d == line for d, line in zip(decoded, e.lines))


def lossless(tokenizer, lines: Sequence[str]) -> bool:
    """decode(encode(line)) == line for every line (special tokens not added)."""
    return lossless_of(Encoded(tokenizer, lines))


def lossless_note_of(e: Encoded) -> str:
    """Why ``e``'s text does not come back from decode(encode(line)), in words ("" when it
    does): how many lines change and the first, with the code points where it first differs;
    blamed on the tokenizer's normaliser when it alone changes every such line.

    >>> from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    >>> tok = Tokenizer(models.BPE({c: i for i, c in enumerate(pre_tokenizers.ByteLevel.alphabet())}, []))
    >>> tok.pre_tokenizer, tok.decoder = pre_tokenizers.ByteLevel(add_prefix_space=False), decoders.ByteLevel()
    >>> tok.normalizer = normalizers.NFC()                 # what Qwen3's tokenizer.json has
    >>> lossless_note_of(Encoded(tok, ["cafe\u0301", "tea"]).with_ids())
    "the tokenizer's NFC normaliser changes 1 of 2 lines (first: line 1, U+0065 U+0301 -> U+00E9)"
    """
    decoded = e.tokenizer.decode_batch(e.ids, skip_special_tokens=False)
    bad = [i for i, (d, line) in enumerate(zip(decoded, e.lines)) if d != line]
    if not bad:
        return ""
    normalizer = getattr(e.tokenizer, "normalizer", None)
    by_normalizer = normalizer is not None and all(normalizer.normalize_str(e.lines[i]) != e.lines[i] for i in bad)
    i = bad[0]
    line, back = e.lines[i], decoded[i]
    at = next((j for j, (a, b) in enumerate(zip(line, back)) if a != b), min(len(line), len(back)))
    shown = f"line {i + 1}, {_code_points(line[at:at + 2])} -> {_code_points(back[at:at + 1])}"
    what = (f"the tokenizer's {type(normalizer).__name__} normaliser changes" if by_normalizer
            else "decode(encode(line)) differs from the line on")
    return f"{what} {len(bad):,} of {len(e.lines):,} lines (first: {shown})"


def _code_points(text: str) -> str:
    return " ".join(f"U+{ord(c):04X}" for c in text) or "(nothing)"


def regex_class(tokenizer) -> str:
    """``letters-only`` when a pre-token of a Nepali word begins with a combining
    mark, ``mark-aware`` when the word stays one pre-token, ``other`` otherwise.

    >>> from modtok.text.pretokenize import hf_pre_tokenizer
    >>> from tokenizers import Tokenizer, models
    >>> tok = Tokenizer(models.BPE()); tok.pre_tokenizer = hf_pre_tokenizer("llama3")
    >>> regex_class(tok)
    'letters-only'
    """
    pieces = [_as_text(p) for p in pretokens(tokenizer, _PROBE)]
    if any(p and unicodedata.category(p[0]).startswith("M") for p in pieces):
        return "letters-only"
    if len(pieces) == 1:
        return "mark-aware"
    return "other"


def _as_text(piece: str) -> str:
    try:
        return from_byte_level(piece).decode("utf-8", errors="replace")
    except KeyError:
        return piece


# --------------------------------------------------------------------------
# the audit row


def audit_of(x: Encoded, ref: Encoded, n_boot: int = 1000, seed: int = 0) -> dict:
    """:func:`audit` of the :class:`Encoded` sides (one tokenizer)."""
    p, lo, hi = premium_ci_of(x, ref, n_boot=n_boot, seed=seed)
    return {
        "regex_class": regex_class(x.tokenizer),
        "premium": p,
        "premium_ci": [lo, hi],
        "floor": floor_of(x, ref),
        **decomposition_of(x, ref),
        "mark_initial": mark_initial_of(x),
        "lossless": lossless_of(x) and lossless_of(ref),
        "lossless_note": "; ".join(f"{side}: {note}" for side, e in (("text", x), ("reference", ref))
                                   if (note := lossless_note_of(e))),
    }


def audit(tokenizer, lines: Sequence[str], ref_lines: Sequence[str], n_boot: int = 1000, seed: int = 0) -> dict:
    """One Table III/IV row of ``tokenizer`` for aligned ``lines`` (the language)
    and ``ref_lines`` (English): every measure of the module docstring, from one
    encoding of each side (ids first: the token counts come from them)."""
    x, ref = encode_aligned(tokenizer, lines, ref_lines)
    return audit_of(x.with_ids(), ref.with_ids(), n_boot, seed)


def on_eval_set(tokenizer: str, lang: str, ref: str, split: str = "devtest", eval=None) -> tuple[dict, str, int]:
    """``modtok audit``: :func:`audit` of the tokenizer ``tokenizer`` (:func:`load_tokenizer`)
    on ``lang`` vs ``ref`` in the ``split`` of the evaluation text (``eval``, else
    ``$MODTOK_EVAL`` / FLORES-200; none is an error); ``(row, the text's label, lines)``.
    The two languages' files must be parallel (judged on the whole files, not the split)."""
    from modtok.errors import ParallelCorpusError
    from modtok.text.eval_sets import need_eval_set

    evals = need_eval_set(eval)
    text, parallel = evals.aligned([lang, ref], split=split)
    if not parallel or len(text[lang]) != len(text[ref]):  # judged on the whole files, not the split
        raise ParallelCorpusError(f"{evals.label(split)}: {lang} and {ref} are not aligned (their files have "
                                  "different numbers of lines or ids): a premium needs parallel text")
    return audit(load_tokenizer(tokenizer), text[lang], text[ref]), evals.label(split), len(text[lang])


def format_rows(rows: dict[str, dict]) -> str:
    """A plain-text table of ``{tokenizer name: audit row}``."""
    head = f"{'tokenizer':12s} {'regex':13s} {'premium':>8s} {'95% CI':>15s} {'floor':>6s} " \
           f"{'base':>6s} {'regex×':>7s} {'vocab×':>7s} {'mark0':>6s} lossless"
    out = [head]
    for name, r in rows.items():
        lo, hi = r["premium_ci"]
        out.append(f"{name:12s} {r['regex_class']:13s} {r['premium']:8.3f} [{lo:6.3f}, {hi:6.3f}] "
                   f"{r['floor']:6.3f} {r['base']:6.3f} {r['regex_factor']:7.3f} {r['vocab_factor']:7.3f} "
                   f"{r['mark_initial']:6.3f} {r['lossless']}")
    out += [f"{name}: not lossless: {r['lossless_note']}" for name, r in rows.items() if r.get("lossless_note")]
    return "\n".join(out)
