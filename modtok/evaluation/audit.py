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
lossless           decode(encode(line)) == line on every line
regex class        letters-only (a word is cut before its marks), mark-aware
                   (words stay whole), or other
=================  ===========================================================

"The whole pipeline" is App. G's Falcon3 lesson: a tokenizer may split again
after its regex (a ``Sequence`` of ``Split`` steps, ``Digits``, a
``ByteLevel`` with its own regex), so :func:`pretoken_counts` runs the
tokenizer's own normalizer and pre-tokenizer, never just its last regex.

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
from modtok.evaluation.metrics import aligned, encode_lines, ratio, token_counts
from modtok.evaluation.stats import ratio_ci
from modtok.text.pretokenize import from_byte_level, pattern

# what the decomposition's base is measured with (App. G: the repaired Llama-3 pattern)
P_REP = "llama3-marks"

# probe of :func:`regex_class`: a Nepali word with a virama and a vowel sign
_PROBE = " नमस्ते"


def load_tokenizer(name_or_path: str | os.PathLike):
    """An HF ``tokenizers.Tokenizer``: a deployed name (``llama3``, ``qwen3``, …),
    a ``tokenizer.json`` file, or a directory holding one
    (:func:`modtok.artifacts.deployed.load_json`)."""
    try:
        return tokenizer_json.hf_tokenizer(deployed.load_json(name_or_path))
    except TokenizerFileError as e:
        raise TokenizerFileError(f"{name_or_path}: not a tokenizers JSON file ({e})") from None


# --------------------------------------------------------------------------
# pre-tokens


def pretokens(tokenizer, line: str) -> list[str]:
    """The pre-tokens of ``line`` under the tokenizer's normalizer and full
    pre-tokenizer (byte-level strings when the pipeline ends in ``ByteLevel``)."""
    text = tokenizer.normalizer.normalize_str(line) if tokenizer.normalizer is not None else line
    if tokenizer.pre_tokenizer is None:
        return [text] if text else []
    return [piece for piece, _ in tokenizer.pre_tokenizer.pre_tokenize_str(text)]


def pretoken_counts(tokenizer, lines: Iterable[str]) -> np.ndarray:
    """Number of pre-tokens of each line, shape ``(n_lines,)``."""
    return np.fromiter((len(pretokens(tokenizer, line)) for line in lines), np.int64)


def with_split(tokenizer, scheme: str):
    """A copy of ``tokenizer`` (normalizer kept) whose pre-tokenizer is only the
    named scheme's regex, ``Split(isolated)``: the P_rep pipeline of App. G."""
    from tokenizers import Regex, Tokenizer, pre_tokenizers

    out = Tokenizer.from_str(tokenizer.to_str())
    out.pre_tokenizer = pre_tokenizers.Split(Regex(pattern(scheme)), behavior="isolated")
    return out


# --------------------------------------------------------------------------
# ratios over aligned lines


def premium_ci(tokenizer, lines, ref_lines, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
    """Premium ΣT(x)/ΣT(ref) with its paired-bootstrap interval (:func:`modtok.evaluation.stats.ratio_ci`,
    lines resampled with their translations): ``(premium, lo, hi)``."""
    sides = aligned({"x": lines, "ref": ref_lines})
    return ratio_ci(token_counts(tokenizer, sides["x"]), token_counts(tokenizer, sides["ref"]), n_boot, level, seed)


def floor(tokenizer, lines, ref_lines) -> float:
    """Pre-token floor ΣP(x) / ΣT(ref) under the tokenizer's full pipeline (§III)."""
    sides = aligned({"x": lines, "ref": ref_lines})
    return ratio(pretoken_counts(tokenizer, sides["x"]).sum(), token_counts(tokenizer, sides["ref"]).sum(),
                  "floor (the reference side has no token)")


def decomposition(tokenizer, lines, ref_lines, repaired: str = P_REP) -> dict[str, float]:
    """``{"base", "regex_factor", "vocab_factor"}`` with base × regex × vocab = premium
    (definitions in the module docstring)."""
    sides = aligned({"x": lines, "ref": ref_lines})
    t_x = token_counts(tokenizer, sides["x"]).sum()
    t_ref = token_counts(tokenizer, sides["ref"]).sum()
    p_x = pretoken_counts(tokenizer, sides["x"]).sum()
    p_rep = pretoken_counts(with_split(tokenizer, repaired), sides["x"]).sum()
    return {
        "base": ratio(p_rep, t_ref, "base (the reference side has no token)"),
        "regex_factor": ratio(p_x, p_rep, "regex factor"),
        "vocab_factor": ratio(t_x, p_x, "vocab factor"),
    }


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


def mark_initial_share(tokenizer, lines: Iterable[str]) -> float:
    """Share of the tokens of ``lines`` that begin with a combining mark."""
    ids = [i for seq in encode_lines(tokenizer, lines) for i in seq]
    values, counts = np.unique(np.asarray(ids, np.int64), return_counts=True)
    marked = sum(int(c) for v, c in zip(values, counts) if starts_with_mark(token_bytes(tokenizer, int(v))))
    return ratio(marked, counts.sum(), "mark-initial share (no token)")


def lossless(tokenizer, lines: Sequence[str]) -> bool:
    """decode(encode(line)) == line for every line (special tokens not added)."""
    lines = list(lines)
    decoded = tokenizer.decode_batch(encode_lines(tokenizer, lines), skip_special_tokens=False)
    return all(d == line for d, line in zip(decoded, lines))


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


def audit(tokenizer, lines: Sequence[str], ref_lines: Sequence[str], n_boot: int = 1000, seed: int = 0) -> dict:
    """One Table III/IV row of ``tokenizer`` for aligned ``lines`` (the language)
    and ``ref_lines`` (English): every measure of the module docstring."""
    p, lo, hi = premium_ci(tokenizer, lines, ref_lines, n_boot=n_boot, seed=seed)
    return {
        "regex_class": regex_class(tokenizer),
        "premium": p,
        "premium_ci": [lo, hi],
        "floor": floor(tokenizer, lines, ref_lines),
        **decomposition(tokenizer, lines, ref_lines),
        "mark_initial": mark_initial_share(tokenizer, lines),
        "lossless": lossless(tokenizer, lines) and lossless(tokenizer, ref_lines),
    }


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
    return "\n".join(out)
