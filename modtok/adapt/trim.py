"""Trim a byte-level BPE tokenizer (and its model) to the tokens a language subset uses.

A deployed tokenizer serves many languages; a model that serves three of them
carries embedding and output rows nobody emits. :func:`trim_json` keeps

1. every token the base emits on *usage text* of those languages (the base's own
   HF encoding), and every token BPE builds on its way there (:func:`replay`
   runs HF's merge order on each pre-token that is not a whole vocabulary entry);
2. the 256 byte-level tokens (any text stays encodable) and every added/special token;
3. the ancestry closure: for each kept token that some merge produces, the two parts
   of the *first* base merge that produces it, recursively (:func:`closure`);

renumbers them densely in their original id order (``new id i = old id kept[i]``),
and restricts the ``tokenizer.json`` with
:func:`modtok.artifacts.tokenizer_json.restrict`: a merge survives when its two parts
and its result are kept, in its original relative order; a merge is dropped only when
it builds or uses a token the usage text never needs (the extraction of "To Each
Language Its Tokenizer": a subtokenizer is the model restricted to an ancestry-closed
id set). :func:`save` writes it with the old->new id map;
:func:`modtok.adapt.hf_model.cut_rows` cuts an HF causal LM's embedding and output rows to match.

A worked example: a BPE over ``a b c`` with merges ``a b -> ab``, ``ab c -> abc``,
``b c -> bc``, usage lines ``"ab"`` and ``"a"``: ``c`` is not used, so ``abc`` and
``bc`` go with it; ``a b`` stays and ``ab`` becomes id 2:

>>> base = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "bc": 5},
...         "merges": [["a", "b"], ["ab", "c"], ["b", "c"]], "ignore_merges": False}, "added_tokens": []}
>>> t = trim_json(base, {"x": ["ab", "a"]}, alphabet=False)
>>> t.kept.tolist(), t.tokenizer_json["model"]["vocab"], t.tokenizer_json["model"]["merges"]
([0, 1, 3], {'a': 0, 'b': 1, 'ab': 2}, [['a', 'b']])

Why identity on the usage text holds by construction. HF BPE merges, again and
again, the adjacent pair whose merge ranks lowest (leftmost first). Every merge it
applies on a usage pre-token has its parts and result among the kept tokens (step 1),
so it survives; the trimmed list is a subset of the base list in the same order.
At each step the base's choice is therefore available to the trimmed tokenizer, and
nothing ranked lower is (the subset has no merge the base lacks): both apply the
same merge, and both stop together. With ``ignore_merges`` (Llama-3: a pre-token
that is a whole vocabulary entry is emitted as it is) a usage pre-token in the base
vocabulary was emitted, hence kept, hence still emitted whole. The test encodes the
usage text with both and compares (``TrimReport.usage_identical`` is 1.0).

On held-out text a pre-token may need a dropped token: it is then built from the
kept merges (finer pieces, never an unknown token: the 256 bytes are kept). Under
``ignore_merges`` a dropped *whole-word* entry is the common case: its pre-token is
now merged bottom-up and may end in pieces the base never produced for it. On
FLORES English devtest after a trim to the pool's English (software manuals), 85%
of the pre-tokens that change are such dropped whole words (``Ġprofessor`` ->
``Ġpro f ess or``), 15% are words the base builds from a dropped token.

Properness. Step 3 keeps, for each kept produced token, the first base merge that
makes it, so its first production is at the same place in the trimmed list as in
the base: a trimmed merge uses a part made only later (:func:`late_merges`) exactly
where the base does. A proper base (``check_proper`` passes: this project's BPEs)
gives a proper trimmed list; Llama-3's converted list is not proper in that strict
sense (its tiktoken cuts are ordered by the token's rank: merge 1 ``Ġ ĠĠĠ`` uses
``ĠĠĠ``, first made by merge 14), and the trimmed list keeps a subset of those
late uses, no new one. Every kept token is reachable: it is a byte, a special
token, a whole-word-only entry (no base merge makes it), or made by a kept merge.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from modtok import atomic
from modtok.artifacts import tokenizer_json as tj
from modtok.errors import DataError, OutOfVocabularyError, TokenizerFileError, UsageError
from modtok.evaluation import metrics

# --------------------------------------------------------------------------
# usage: which tokens BPE emits and builds on a text


def merge_ranks(model: Mapping) -> dict[tuple[str, str], int]:
    """``{(left, right): rank}`` of a BPE ``model`` (the first occurrence of a pair wins, as in HF)."""
    ranks: dict[tuple[str, str], int] = {}
    for r, merge in enumerate(model["merges"]):
        ranks.setdefault(tj.merge_pair(merge), r)
    return ranks


def replay(word: str, ranks: Mapping[tuple[str, str], int]) -> tuple[list[str], list[str]]:
    """HF BPE on one pre-token (characters of the byte-level alphabet), without
    ``ignore_merges``: ``(tokens, made)``, ``made`` = every token a merge built, in order.

    The lowest-ranked adjacent pair is merged first, the leftmost of equals (HF's
    heap of ``(rank, position)``).

    >>> replay("abab", {("a", "b"): 0, ("ab", "ab"): 1})
    (['abab'], ['ab', 'ab', 'abab'])
    >>> replay("aaa", {("a", "a"): 0})
    (['aa', 'a'], ['aa'])
    """
    parts, made = list(word), []
    while len(parts) > 1:
        rank, i = min((ranks.get(pair, len(ranks)), i) for i, pair in enumerate(itertools.pairwise(parts)))
        if rank == len(ranks):
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
        made.append(parts[i])
    return parts, made


def _check_supported(model: Mapping) -> None:
    if model.get("type") != "BPE":
        raise TokenizerFileError(f"trim needs a BPE tokenizer.json, not {model.get('type')!r}")
    for option in ("continuing_subword_prefix", "end_of_word_suffix", "dropout"):
        if model.get(option):
            raise TokenizerFileError(f"trim supports byte-level BPE without {option} (the base sets {model[option]!r})")


def usage(tokenizer_json: Mapping, lines: Iterable[str]) -> set[int]:
    """Ids the base emits on ``lines`` plus every token its BPE builds on the way.

    Emitted ids come from the base's own HF encoding (no special tokens added);
    the built ones from :func:`replay` on each distinct pre-token (the base's
    normalizer and pre-tokenizer, applied between added-token matches as HF does)
    that is not a whole vocabulary entry under ``ignore_merges``.
    """
    lines = list(lines)
    model = tokenizer_json["model"]
    _check_supported(model)
    ids = tj.model_ids(tokenizer_json)
    tok = tj.hf_tokenizer(tokenizer_json)
    seen = {i for enc in metrics.encode_lines(tok, lines) for i in enc}

    added = sorted((t["content"] for t in tokenizer_json.get("added_tokens") or []), key=len, reverse=True)
    split = re.compile("|".join(map(re.escape, added))) if added else None
    words: set[str] = set()
    for line in lines:
        for segment in split.split(line) if split else [line]:
            if tok.normalizer is not None:
                segment = tok.normalizer.normalize_str(segment)
            if tok.pre_tokenizer is not None:
                words.update(w for w, _ in tok.pre_tokenizer.pre_tokenize_str(segment))
            elif segment:
                words.add(segment)
    ranks = merge_ranks(model)
    whole = bool(model.get("ignore_merges"))
    for word in words:
        if whole and word in model["vocab"]:
            continue
        tokens, made = replay(word, ranks)
        # a character outside the vocabulary (no byte-level alphabet) is HF's unk or nothing
        seen.update(ids[t] for t in tokens + made if t in ids)
    return seen


# --------------------------------------------------------------------------
# the id set


def token_text(tokenizer_json: Mapping, token: str) -> str | None:
    """The text a vocabulary entry stands for, ``None`` when it is no whole UTF-8 text: a
    byte-level BPE's entry read back from its byte alphabet; a SentencePiece BPE's
    (``byte_fallback``, :mod:`modtok.artifacts.spm_bpe`) as written, ``▁`` a space, its
    byte pieces ``<0xNN>`` no text.

    >>> token_text({"model": {}}, "ĠÃ©"), token_text({"model": {"byte_fallback": True}}, "▁é")
    (' é', ' é')
    >>> token_text({"model": {}}, "Ã"), token_text({"model": {"byte_fallback": True}}, "<0xC3>")
    (None, None)
    """
    from modtok.text.pretokenize import from_byte_level

    if tokenizer_json["model"].get("byte_fallback"):
        is_byte = len(token) == 6 and token.startswith("<0x") and token.endswith(">")
        return None if is_byte else token.replace("▁", " ")
    try:
        return from_byte_level(token).decode("utf-8")
    except (KeyError, UnicodeDecodeError):  # not byte-level text, or a piece of a character
        return None


def script_tokens(tokenizer_json: Mapping, scripts: Iterable[str]) -> set[int]:
    """Ids of the tokens whose text (:func:`token_text`) is only characters of ``scripts``
    (ISO 15924 codes, ``"Latn"``), of Common (digits, punctuation, spaces) and of Inherited
    (combining marks); tokens that are not whole UTF-8 characters are not among them.

    >>> tj_ = {"model": {"type": "BPE", "vocab": {"a": 0, "ĠÃ©": 1, "Ð´": 2, "12": 3}, "merges": []}}
    >>> sorted(script_tokens(tj_, ["Latn"]))      # "ĠÃ©" is " é", "Ð´" is Cyrillic д
    [0, 1, 3]
    """
    import regex

    scripts = list(scripts)
    if not scripts:
        return set()
    allowed = regex.compile("[" + "".join(rf"\p{{Script={s}}}" for s in [*scripts, "Zyyy", "Zinh"]) + "]+")
    out = set()
    for token, i in tj.model_ids(tokenizer_json).items():
        text = token_text(tokenizer_json, token)
        if text is not None and allowed.fullmatch(text):
            out.add(i)
    return out


def first_merges(model: Mapping) -> dict[str, tuple[str, str]]:
    """``{token: (left, right)}``: the first merge of the list that produces each token."""
    out: dict[str, tuple[str, str]] = {}
    for merge in model["merges"]:
        left, right = tj.merge_pair(merge)
        out.setdefault(tj.merge_result(model, left, right), (left, right))
    return out


def closure(tokenizer_json: Mapping, ids: Iterable[int], alphabet: bool = True) -> np.ndarray:
    """Sorted ids: ``ids``, every added token, the single-character tokens (the
    byte-level alphabet; with ``alphabet``), the byte pieces ``<0xNN>`` of a byte-fallback
    model, and, recursively, the parts of the first merge that produces each of them.

    >>> tj_ = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "abb": 3},
    ...        "merges": [["a", "b"], ["ab", "b"]]}, "added_tokens": [{"content": "<s>", "id": 4}]}
    >>> closure(tj_, [3], alphabet=False).tolist()
    [0, 1, 2, 3, 4]
    """
    model = tokenizer_json["model"]
    vocab = tj.model_ids(tokenizer_json)
    token_of = {i: t for t, i in vocab.items()}
    keep = {int(i) for i in ids}
    for i in keep:
        if i not in token_of:
            raise OutOfVocabularyError(f"id {i} is not in the base vocabulary")
    keep |= {t["id"] for t in tokenizer_json.get("added_tokens") or []}
    if alphabet:
        keep |= {i for t, i in model["vocab"].items() if len(t) == 1}
    if model.get("byte_fallback"):  # a sentencepiece BPE: its <0xNN> pieces encode any character
        keep |= {i for t, i in model["vocab"].items() if len(t) == 6 and t.startswith("<0x") and t.endswith(">")}
    first = first_merges(model)
    todo = [token_of[i] for i in keep]
    while todo:
        for part in first.get(todo.pop(), ()):
            if vocab[part] not in keep:
                keep.add(vocab[part])
                todo.append(part)
    return np.array(sorted(keep), dtype=np.int64)


def late_merges(model: Mapping) -> set[tuple[str, str]]:
    """Merges that use a part only a *later* merge produces (``check_proper`` raises on
    the first of them): empty for a proper list.

    >>> late_merges({"vocab": {"a": 0, "b": 1, "ab": 2, "abb": 3}, "merges": [["ab", "b"], ["a", "b"]]})
    {('ab', 'b')}
    """
    pairs = [tj.merge_pair(m) for m in model["merges"]]
    first = {}
    for r, (left, right) in enumerate(pairs):
        first.setdefault(tj.merge_result(model, left, right), r)
    return {(a, b) for r, (a, b) in enumerate(pairs) if first.get(a, -1) >= r or first.get(b, -1) >= r}


def remap_post_processor(processor, old_to_new: Mapping[int, int]):
    """A ``post_processor`` with the ids it names renumbered (``TemplateProcessing``,
    ``BertProcessing``/``RobertaProcessing``, nested ``Sequence``); ``None`` stays ``None``."""
    if not isinstance(processor, dict):
        return processor
    out = dict(processor)
    if out.get("type") == "Sequence":
        out["processors"] = [remap_post_processor(p, old_to_new) for p in out["processors"]]
    for key in ("sep", "cls"):
        if key in out:
            out[key] = [out[key][0], old_to_new[out[key][1]]]
    if "special_tokens" in out:
        out["special_tokens"] = {name: dict(s, ids=[old_to_new[i] for i in s["ids"]])
                                 for name, s in out["special_tokens"].items()}
    return out


# --------------------------------------------------------------------------
# the trim and its report


@dataclass
class TextReport:
    """Base vs trimmed on one text: lines encoded identically, tokens per UTF-8 byte."""

    lines: int
    identical: float  # share of lines whose trimmed ids, mapped back, equal the base's
    tokens_per_byte_base: float
    tokens_per_byte_trimmed: float

    @property
    def tokens_per_byte_change(self) -> float:
        """Relative change of tokens per byte (0.004 = 0.4% more tokens)."""
        return self.tokens_per_byte_trimmed / self.tokens_per_byte_base - 1


@dataclass
class TrimReport:
    """What a trim kept and what it costs; ``usage`` and ``held_out`` per language."""

    base_tokens: int
    kept_tokens: int
    kept_by_usage: int  # emitted or built on the usage text, or below keep_first
    base_merges: int
    kept_merges: int
    late_merges_base: int  # merges using a part made only later (0 = proper)
    late_merges_kept: int
    json_bytes_base: int  # the serialized tokenizer.json
    json_bytes_trimmed: int
    usage_source: str
    usage: dict[str, TextReport]
    held_out_source: str = ""
    held_out: dict[str, TextReport] = field(default_factory=dict)
    embedding_bytes_saved: int | None = None  # set by the model cut

    @property
    def usage_identical(self) -> float:
        """Share of usage lines encoded identically (1.0 by construction)."""
        n = sum(r.lines for r in self.usage.values())
        return sum(r.identical * r.lines for r in self.usage.values()) / n

    def lines(self) -> list[str]:
        """The report in words, one line per fact (what ``modtok trim`` prints)."""
        out = [(f"kept {self.kept_tokens:,} of {self.base_tokens:,} tokens ({self.kept_by_usage:,} used), "
                f"{self.kept_merges:,} of {self.base_merges:,} merges; tokenizer.json {self.json_bytes_base:,} -> "
                f"{self.json_bytes_trimmed:,} bytes; merges using a part made later: {self.late_merges_kept:,} "
                f"(base {self.late_merges_base:,})"),
               f"usage text encoded identically: {self.usage_identical:.2%} of lines"]
        if self.held_out:
            out.append(f"held-out text: {self.held_out_source}")
            out += [f"  {name}: {t.identical:.1%} of {t.lines} lines identical, tokens/byte {t.tokens_per_byte_base:.4f}"
                    f" -> {t.tokens_per_byte_trimmed:.4f} ({t.tokens_per_byte_change:+.2%})"
                    for name, t in self.held_out.items()]
        if self.embedding_bytes_saved is not None:
            out.append(f"model: {self.embedding_bytes_saved:,} bytes of embedding/output rows saved")
        return out

    def to_dict(self) -> dict:
        out = asdict(self)
        for part in ("usage", "held_out"):
            for lang, r in getattr(self, part).items():
                out[part][lang]["tokens_per_byte_change"] = r.tokens_per_byte_change
        out["usage_identical"] = self.usage_identical
        return out


@dataclass
class Trim:
    """A trimmed tokenizer: its ``tokenizer.json``, ``kept`` (new id ``i`` = old id
    ``kept[i]``) and the :class:`TrimReport`."""

    tokenizer_json: dict
    kept: np.ndarray
    report: TrimReport

    @property
    def old_to_new(self) -> dict[int, int]:
        return {int(old): new for new, old in enumerate(self.kept)}


def compare(base, trimmed, kept: np.ndarray, lines: list[str]) -> TextReport:
    """Encode ``lines`` with the base and the trimmed HF tokenizers and compare."""
    a = metrics.encode_lines(base, lines)
    b = metrics.encode_lines(trimmed, lines)
    same = sum(list(x) == kept[np.asarray(y, dtype=np.int64)].tolist() for x, y in zip(a, b))
    n_bytes = metrics.byte_count(lines)
    return TextReport(len(lines), same / len(lines), sum(map(len, a)) / n_bytes, sum(map(len, b)) / n_bytes)


def trim_json(tokenizer_json: Mapping, usage_text: Mapping[str, list[str]],
              held_out: Mapping[str, list[str]] | None = None, alphabet: bool = True, keep_first: int = 0,
              usage_source: str = "", held_out_source: str = "", keep_scripts: Iterable[str] = ()) -> Trim:
    """Trim a byte-level BPE ``tokenizer.json`` to the tokens ``usage_text``
    (``{lang: lines}``) needs (see the module docstring); compare base and trimmed
    encodings on the usage text and on ``held_out``.

    ``keep_first`` also keeps the ids below it: in a BPE whose ids follow its merge
    order (Llama-3, tiktoken ranks) those are the base's most frequent tokens, a
    cheap guard against a narrow usage text. Measured on Llama-3 with the pool's
    eng/deu/fra (software manuals) as usage text, FLORES-200 devtest tokens per byte:
    0 -> 27,695 kept, +25.1/+6.3/+8.2%; 20k -> 37,295, +12.2/+4.4/+4.8%;
    64k -> 72,020, +2.4/+1.7/+1.7%; 100k (cl100k's part) -> 100,917, +0.05/+0.14/+0.33%.

    ``keep_scripts`` (``["Latn"]``) also keeps every token written only in those scripts
    (:func:`script_tokens`): a guard that does not depend on the usage text's domain. The
    held-out cost then comes only from tokens of other scripts and partial characters.
    """
    if not usage_text or not any(usage_text.values()):
        raise UsageError("trim needs usage text (at least one line)")
    if keep_first < 0:
        raise UsageError(f"keep_first must be >= 0, not {keep_first}")
    used = usage(tokenizer_json, [line for lines in usage_text.values() for line in lines])
    vocab_ids = set(tj.model_ids(tokenizer_json).values())
    used |= {i for i in range(keep_first) if i in vocab_ids}
    used |= script_tokens(tokenizer_json, keep_scripts)
    kept = closure(tokenizer_json, used, alphabet)
    out = tj.restrict(tokenizer_json, kept)
    old_to_new = {int(old): new for new, old in enumerate(kept)}
    out["post_processor"] = remap_post_processor(tokenizer_json.get("post_processor"), old_to_new)

    base, trimmed = tj.hf_tokenizer(tokenizer_json), tj.hf_tokenizer(out)
    report = TrimReport(
        base_tokens=len(tj.model_ids(tokenizer_json)), kept_tokens=len(kept), kept_by_usage=len(used),
        base_merges=len(tokenizer_json["model"]["merges"]), kept_merges=len(out["model"]["merges"]),
        late_merges_base=len(late_merges(tokenizer_json["model"])), late_merges_kept=len(late_merges(out["model"])),
        json_bytes_base=len(json.dumps(tokenizer_json, ensure_ascii=False).encode()),
        json_bytes_trimmed=len(json.dumps(out, ensure_ascii=False).encode()),
        usage_source=usage_source, usage={lang: compare(base, trimmed, kept, lines)
                                          for lang, lines in usage_text.items() if lines},
        held_out_source=held_out_source,
        held_out={lang: compare(base, trimmed, kept, lines) for lang, lines in (held_out or {}).items() if lines},
    )
    if report.usage_identical < 1:  # a tokenizer feature the replay does not model (e.g. lstrip added tokens)
        raise TokenizerFileError(f"the trimmed tokenizer encodes {1 - report.usage_identical:.3%} of the usage "
                                 "lines differently from the base; refusing to write it")
    return Trim(out, kept, report)


# --------------------------------------------------------------------------
# the whole of `modtok trim`, as one call

CHECK_LINES = 8  # usage and held-out lines per language the saved directory is checked on


@dataclass
class TrimRun:
    """What :func:`run` did: the :class:`Trim`, the class ``AutoTokenizer`` built from the
    written directory, the model's logit change after reloading (``None`` without a model)
    and the directory."""

    trim: Trim
    tokenizer_class: str
    max_logit_change: float | None
    out: Path


@dataclass(frozen=True)
class TrimOptions:
    """What ``modtok trim`` is asked (:func:`run` reads the fields; the command line builds
    them from its flags, and ``run.json``'s ``args`` is their ``asdict``)."""

    base: str
    out: str
    langs: list[str]
    manifest: str | None = None
    max_chars: int = 3_000_000
    eval_files: list[str] | None = None
    keep_first: int = 0
    keep_script: bool = False
    model: str | None = None
    pad_to_multiple_of: int | None = None
    logit_tol: float = 1e-4


def run(options: TrimOptions, force: bool = False, log=None) -> TrimRun:
    """``modtok trim`` as ``options`` asks (:class:`TrimOptions`; below, its fields by name):
    :func:`trim_json` of ``base`` on the usage text of ``langs`` (``manifest``,
    else ``$MODTOK_MANIFEST``: its first ``max_chars`` characters per language; else the pool,
    as every training command reads: :func:`modtok.text.data.training_source`), compared on
    held-out text (``eval_files``, else ``$MODTOK_EVAL`` / FLORES-200 devtest when there),
    saved through :func:`modtok.outputs.output_dir` into ``out`` (an existing directory that
    is not an earlier trim is refused, nothing in it touched; ``force`` replaces an earlier trim).

    ``out`` holds ``tokenizer.json`` and ``tokenizer_config.json`` with the base's special
    tokens, BOS/EOS and chat template (:mod:`modtok.adapt.hf_files`; named tokens the trim
    dropped are left out), ``id_map.json`` (``old_to_new`` covers every kept id, special
    tokens included; ``kept``), ``trim_report.json`` and, with ``model`` (checked first:
    :func:`modtok.adapt.hf_model.check_model_dir`), the model with its rows cut
    (``pad_to_multiple_of``: padded). Before ``out`` appears, the directory is loaded back
    with ``AutoTokenizer`` (ids equal ``tokenizer.json``'s on usage and held-out lines) and
    ``AutoModelForCausalLM`` (logits at the kept ids within ``logit_tol`` of the base
    model's, on a usage line).
    """
    from modtok.adapt import hf_files, hf_model, spm
    from modtok.adapt.extend import check_bpe_json
    from modtok.artifacts import deployed
    from modtok.outputs import output_dir
    from modtok.text import data
    from modtok.text.eval_sets import eval_set

    say = log or (lambda line: None)
    base, out, langs, max_chars, eval_files, model, logit_tol = (
        options.base, options.out, options.langs, options.max_chars, options.eval_files, options.model,
        options.logit_tol)
    manifest = data.manifest_path(options.manifest)  # --manifest, else $MODTOK_MANIFEST
    source = data.training_source(manifest)
    if source == "wordfreq":  # checked before any work: a refusal costs nothing
        raise DataError("trim: no usage text: pass --manifest FILE (JSON/YAML {lang: [paths or globs]}), or set "
                        "$MODTOK_MANIFEST or $MODTOK_POOL")
    inputs = [manifest] if manifest else []
    with output_dir(out, command="trim", args=asdict(options), force=force, inputs=inputs + list(eval_files or [])) \
            as written:
        spm_model, spm_json = spm.read_base(base) if deployed.spm_path(base) is not None else (None, None)
        if spm_model is not None and not spm_model.is_bpe:
            raise TokenizerFileError(
                f"{base}: a sentencepiece Unigram model; trim cuts a BPE. (A Unigram could be trimmed properly, "
                "its Viterbi paths on the usage text surviving the cut, but modtok writes no Unigram tokenizer.json "
                "for it yet: refused rather than written half-checked)")
        base_tj = spm_json if spm_model is not None else deployed.load_json(base)
        check_bpe_json(base_tj, str(base))
        checked = hf_model.check_model_dir(model, base_tj) if model is not None else None
        if checked is not None:
            say(f"model: {checked.path} ({checked.model_type}, {checked.rows:,} rows)"
                + "".join(f"; {note}" for note in checked.notes))
        config = hf_files.base_config(base, base_tj, checked.path if checked and checked.tokenizer_checked else None)
        usage_text, usage_source = data.train_text(source, manifest, langs, max_chars)
        if eval_files:
            held_out = {Path(f).name: data.read_lines(f) for f in eval_files}
            held_out_source = "files " + " ".join(eval_files)
        elif (evals := eval_set()) is not None:
            held_out, held_out_source = evals.load(langs), evals.label()
        else:
            held_out, held_out_source = {}, ""
        say(f"usage text: {usage_source}")
        scripts = sorted({data.script_of(lang) for lang in langs}) if options.keep_script else ()
        result = trim_json(base_tj, usage_text, held_out, keep_first=options.keep_first, keep_scripts=scripts,
                           usage_source=usage_source, held_out_source=held_out_source)
        kept_tokens = set(tj.model_ids(result.tokenizer_json))
        config = {k: v for k, v in config.items()  # a named token the trim dropped is no token any more
                  if not (k.endswith("_token") and isinstance(v, str) and v not in kept_tokens)}
        hf_files.save(written.path, result.tokenizer_json, config)
        if spm_model is not None:  # the .model of the kept pieces, in the new id order, checked in sentencepiece
            cut = spm_model.with_pieces([spm_model.pieces[i] for i in result.kept])
            sp_base, sp_cut = spm_model.processor(), cut.processor()
            moved = [line for text in usage_text.values() for line in text
                     if result.kept[sp_cut.encode(line)].tolist() != sp_base.encode(line)]
            if moved:
                raise TokenizerFileError(f"sentencepiece encodes {len(moved)} usage lines of the trimmed .model "
                                         f"differently from the base (first: {moved[0][:80]!r}); nothing written")
            atomic.write_bytes(written.path / "tokenizer.model", cut.serialize())
            say(f"tokenizer.model: {len(cut.pieces):,} of {len(spm_model.pieces):,} pieces; sentencepiece encodes "
                "every usage line as the base does")
        change = None
        if checked is not None:
            from tokenizers import Tokenizer

            lm = hf_model.load_causal_lm(checked.path)
            saved_tok = Tokenizer.from_file(str(written.path / "tokenizer.json"))
            lines = [line for text in usage_text.values() for line in text[:2]]
            new_ids = [e.ids[:64] for e in saved_tok.encode_batch(lines)]
            kept_rows = torch_index(result.kept)
            want = [w[:, kept_rows] for w in hf_model.logits(lm, [result.kept[ids].tolist() for ids in new_ids])]
            result.report.embedding_bytes_saved = hf_model.cut_rows(lm, result.kept, result.old_to_new,
                                                                    options.pad_to_multiple_of)
            change = hf_model.save_checked(lm, written.path, new_ids, want, len(result.kept), logit_tol,
                                           "the trimmed model (at the kept ids)")
        atomic.write_json(written.path / "id_map.json", {"old_to_new": {str(k): v for k, v in result.old_to_new.items()},
                                                         "kept": result.kept.tolist()})
        atomic.write_json(written.path / "trim_report.json", result.report.to_dict(), indent=1)
        check = [line for text in [*usage_text.values(), *held_out.values()] for line in text[:CHECK_LINES]]
        name, n = hf_files.check_loads(written.path, check)
        written.record(base=str(base), languages=langs, usage_source=usage_source, held_out_source=held_out_source,
                       kept_tokens=result.report.kept_tokens, base_tokens=result.report.base_tokens,
                       auto_tokenizer=name, max_logit_change_reloaded=change)
        say(f"AutoTokenizer loads it as {name}: ids equal tokenizer.json's on {n} usage and held-out lines"
            + (f"; AutoModelForCausalLM loads it, logits at the kept ids within {change:.3g}" if change is not None
               else ""))
    return TrimRun(result, name, change, Path(out))


def torch_index(kept: np.ndarray):
    """``kept`` as a torch index tensor."""
    import torch

    return torch.as_tensor(np.asarray(kept), dtype=torch.long)
