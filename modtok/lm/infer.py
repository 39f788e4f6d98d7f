"""Modular inference: evaluate and generate with any union of subtokenizers; compact models.

A model trained with sampled subtokenizers can be used with any union ``U`` of
languages: the text is encoded with ``U``'s subtokenizer and the output matrix
is cut to ``U``'s ids (plus the boundary), exactly as during training.

Evaluation settings for a language ``L`` (Tables 4/6 of the paper), as
``(encode with, softmax over)``:

=======================  ===================  ================================
``Lang``                 ``{L}``, ``{L}``     own-language subtokenizer
``Full``                 full, full           the full tokenizer
``Full-Lang``            full, ``{L}``        the paper's (Tab. 4 caption,
                                              §6.2): "inputs tokenized with
                                              Full, predictions restricted to
                                              Lang vocabulary"
``EN+Lang``              ``{en, L}``, same    English + language union
``Lang (full softmax)``  ``{L}``, full        own-language tokens scored by
                                              the full output matrix (not a
                                              paper setting; what a model that
                                              ignores the modular vocabulary
                                              assigns to them)
=======================  ===================  ================================

Every line is scored as ``[DOC] tokens [DOC]``: the tokens and the closing
boundary (which stands for the newline) are predicted, so bits per byte are
``nats / ln 2 / (UTF-8 bytes + 1)`` summed over lines; the numbers of two
tokenizations of the same text are therefore comparable. Bytes are those of the
text as given: the loaders apply no Unicode normalisation unless asked
(:mod:`modtok.text.data`), so they are the raw bytes of the corpus.

**Targets outside the output vocabulary** (Full-Lang: a token of the Full
tokenization that is not in ``V_L``). Our reading of "predictions restricted to
Lang vocabulary": a target in ``V_L`` is scored under the softmax over ``V_L``
(+ boundary); a target outside it cannot be predicted and is *counted*, not
scored — :class:`EvalResult` reports how many (``uncovered_tokens``) and the
bytes they stand for (``uncovered_bytes``: a line's bytes + 1 spread evenly over
its targets, as in training), and bits per byte divide the scored nats by the
bytes of the scored targets only. ``coverage`` is the scored share of targets.

The totals are also kept per line (``line_nats``, ``line_bytes``: the scored
nats and bytes of each non-blank line, in order), so that an interval over
lines can be drawn by resampling them (:mod:`modtok.evaluation.stats`).

:func:`export_compact` slices the embedding and output rows of ``U``'s ids into a
standalone smaller model with its own tokenizer directory (the restricted
tokenizer renumbered to local ids); its logits equal the full model's logits
restricted to ``U``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from modtok.errors import ActiveSetError, CheckpointError, VocabularyMismatchError
from modtok.lm.batches import active_ids, boundary_id, check_langs, lm_vocab_size
from modtok.lm.loss import IGNORE, bits_per_byte, check_active_ids, gathered_cross_entropy
from modtok.lm.model import LM, KVCache, LMConfig
from modtok.lm.train import save_atomic

SETTINGS = ("Lang", "Full", "Full-Lang", "EN+Lang")  # the paper's four (Tables 4/6)
EXTRA_SETTINGS = ("Lang (full softmax)",)


def setting_langs(setting: str, lang: str, english: str = "eng_Latn") -> tuple:
    """``(encode_langs, output_langs)`` of a named setting; ``None`` = full tokenizer/vocabulary.

    >>> setting_langs("Full-Lang", "deu_Latn")   # inputs tokenized with Full, predictions restricted to Lang
    (None, ['deu_Latn'])
    """
    table = {
        "Lang": ([lang], [lang]),
        "Full": (None, None),
        "Full-Lang": (None, [lang]),
        "EN+Lang": ([english, lang], [english, lang]),
        "Lang (full softmax)": ([lang], None),
    }
    if setting not in table:
        raise ActiveSetError(f"unknown evaluation setting {setting!r} (known: {', '.join(SETTINGS + EXTRA_SETTINGS)})")
    return table[setting]


def _covered(tokenizer, encode_langs, output_langs) -> bool:
    """True when every id the encoder can emit is in the output set."""
    enc, out = check_langs(encode_langs), check_langs(output_langs)
    if out is None:
        return True
    return enc is not None and bool(np.isin(tokenizer.ids(enc), tokenizer.ids(out)).all())


@dataclass
class EvalResult:
    nats: float  # summed over the scored targets
    tokens: int  # predicted tokens (line tokens + one boundary per line)
    bytes: int  # UTF-8 bytes + one newline per line
    uncovered_tokens: int = 0  # targets outside the output vocabulary (counted, not scored)
    uncovered_bytes: float = 0.0  # the bytes those targets stand for
    line_nats: tuple[float, ...] = ()  # per non-blank line: its scored nats (they add up to nats)
    line_bytes: tuple[float, ...] = ()  # per non-blank line: its scored bytes (add up to bytes - uncovered_bytes)

    @property
    def bpb(self) -> float:
        """Bits per byte of the scored targets."""
        return bits_per_byte(self.nats, self.bytes - self.uncovered_bytes)

    @property
    def coverage(self) -> float:
        """Share of targets scored (1.0 unless the output vocabulary misses some of the encoder's ids)."""
        return 1.0 - self.uncovered_tokens / self.tokens


@torch.no_grad()
def evaluate(model: LM, tokenizer, lines: list[str], encode_langs=None, output_langs=None,
             batch_size: int = 16, device: torch.device | None = None, uncovered: str = "refuse") -> EvalResult:
    """Summed nats of ``lines`` encoded with ``encode_langs`` under the softmax over ``output_langs``.

    Lines longer than the model's context are cut into windows of ``max_seq_len`` predictions; each
    window starts from the last token of the previous one (so every token is predicted exactly once).
    When the encoder can emit ids outside the output set, ``uncovered="refuse"`` raises
    :class:`~modtok.errors.ActiveSetError` and ``"count"`` scores the targets inside it and counts the
    others (module docstring; Full-Lang).
    """
    if model.cfg.vocab_size != lm_vocab_size(tokenizer):
        raise VocabularyMismatchError(f"model vocab_size {model.cfg.vocab_size} does not fit the tokenizer "
                                      f"({tokenizer.vocab_size} ids + boundary)")
    if uncovered not in ("refuse", "count"):
        raise ActiveSetError(f"uncovered must be 'refuse' or 'count', got {uncovered!r}")
    if uncovered == "refuse" and not _covered(tokenizer, encode_langs, output_langs):
        enc, out = check_langs(encode_langs), check_langs(output_langs)
        raise ActiveSetError(
            f"text encoded with {'the full tokenizer' if enc is None else '+'.join(enc)} can contain ids "
            f"outside the output vocabulary of {'+'.join(out)} (pass uncovered='count' to count them)"
        )
    lines = [s for s in lines if s.strip()]
    device = device or next(model.parameters()).device
    doc, T = boundary_id(tokenizer), model.cfg.max_seq_len
    windows, shares, owner = [], [], []  # token windows, the bytes each target stands for, the line of each
    for n, (line, ids) in enumerate(zip(lines, tokenizer.encode_batch(lines, check_langs(encode_langs)))):
        seq = [doc] + list(ids) + [doc]
        cut = [seq[i : i + T + 1] for i in range(0, len(seq) - 1, T)]
        windows += cut
        shares += [(len(line.encode("utf-8")) + 1) / (len(ids) + 1)] * len(cut)
        owner += [n] * len(cut)
    active = torch.from_numpy(active_ids(tokenizer, output_langs)).to(device)
    inside = torch.zeros(model.cfg.vocab_size, dtype=torch.bool, device=device)
    inside[active] = True
    window_nats, n_outside = np.zeros(len(windows)), np.zeros(len(windows), dtype=np.int64)  # per window
    for i in range(0, len(windows), batch_size):
        chunk = windows[i : i + batch_size]
        width = max(map(len, chunk)) - 1
        idx = torch.full((len(chunk), width), doc, dtype=torch.long)  # (B, T) right-padded
        targets = torch.full((len(chunk), width), IGNORE, dtype=torch.long)
        for r, w in enumerate(chunk):
            idx[r, : len(w) - 1] = torch.tensor(w[:-1])
            targets[r, : len(w) - 1] = torch.tensor(w[1:])
        targets = targets.to(device)
        outside = (targets != IGNORE) & ~inside[targets.clamp(min=0)]  # (B, T) targets not in the output set
        if bool(outside.any()):
            n_outside[i : i + len(chunk)] = outside.sum(1).cpu().numpy()
            targets = targets.masked_fill(outside, IGNORE)
        w, b = model.output_rows(None)
        check_active_ids(active, w.shape[0])
        per_row = gathered_cross_entropy(model.hidden(idx.to(device)), w[active], None if b is None else b[active],
                                         targets, active, per_row=True)  # (B,) nats of each window
        window_nats[i : i + len(chunk)] = per_row.double().cpu().numpy()
    n_tokens = sum(len(w) - 1 for w in windows)
    line_total = np.array([len(s.encode("utf-8")) + 1 for s in lines], dtype=np.float64)
    line_nats = np.bincount(owner, weights=window_nats, minlength=len(lines))
    window_out = n_outside * np.asarray(shares, dtype=np.float64)  # the bytes of the uncovered targets
    line_out = np.bincount(owner, weights=window_out, minlength=len(lines))
    return EvalResult(float(window_nats.sum()), n_tokens, int(line_total.sum()), int(n_outside.sum()),
                      float(window_out.sum()),
                      tuple(line_nats.tolist()), tuple((line_total - line_out).tolist()))


def evaluate_settings(model: LM, tokenizer, corpus: dict[str, list[str]], settings=SETTINGS,
                      english: str = "eng_Latn", device=None) -> list[dict]:
    """Rows ``{lang, setting, bpb, nats, tokens, bytes, coverage, line_nats, line_bytes}`` for every
    language and setting (``line_*``: :class:`EvalResult`'s per-line totals).

    Targets outside a setting's output vocabulary (Full-Lang) are counted (``coverage`` < 1), not scored.
    """
    rows = []
    for lang, lines in corpus.items():
        for setting in settings:
            enc, out = setting_langs(setting, lang, english)
            r = evaluate(model, tokenizer, lines, enc, out, device=device, uncovered="count")
            rows.append({"lang": lang, "setting": setting, "bpb": r.bpb, "nats": r.nats,
                         "tokens": r.tokens, "bytes": r.bytes, "coverage": r.coverage,
                         "line_nats": r.line_nats, "line_bytes": r.line_bytes})
    return rows


# ---------------------------------------------------------------------------- generation


@torch.no_grad()
def generate(model: LM, prompt: list[int], active: torch.Tensor, max_new_tokens: int,
             top_k: int | None = 1, temperature: float = 1.0, seed: int = 0, stop_id: int | None = None,
             kv_cache: bool = True) -> list[int]:
    """Continue ``prompt`` (ids) with ids from ``active`` (sorted); returns only the new ids.

    ``top_k=1`` is greedy; otherwise sample from the ``top_k`` most likely active ids (all when
    ``None``) at ``temperature`` with a ``torch.Generator`` seeded by ``seed``. Stops after
    ``stop_id`` (included) or ``max_new_tokens``. The context is the last ``max_seq_len`` ids.

    With ``kv_cache`` (default) each new token runs one position through the model, attending to the
    cached keys and values of the prefix; once the context is full the window slides, positions shift
    and the prefix is recomputed, as without the cache. Cached and uncached outputs are the same.
    """
    if not prompt:
        raise ActiveSetError("generation needs a non-empty prompt (start it with the boundary id)")
    device = next(model.parameters()).device
    active = active.to(device)
    gen = torch.Generator(device=device).manual_seed(seed)
    ids, new = list(prompt), []
    L, cache = model.cfg.max_seq_len, None
    for _ in range(max_new_tokens):
        if not kv_cache or len(ids) > L:  # no cache, or a sliding window: the whole context again
            cache = None
            logits = model.logits(torch.tensor([ids[-L:]], device=device), active)[0, -1].float()  # (K,)
        else:
            cache = cache or KVCache(model.cfg.n_layers)
            step = torch.tensor([ids[cache.length :]], device=device)  # (1, new positions)
            logits = model.logits(step, active, cache)[0, -1].float()  # (K,)
        if top_k == 1:
            j = int(logits.argmax())
        else:
            logits = logits / temperature
            if top_k is not None and top_k < logits.numel():
                kth = torch.topk(logits, top_k).values[-1]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            j = int(torch.multinomial(F.softmax(logits, -1), 1, generator=gen))
        token = int(active[j])
        ids.append(token)
        new.append(token)
        if token == stop_id:
            break
    return new


def continue_text(model: LM, tokenizer, prompt: str, prompt_langs=None, output_langs=None,
                  max_new_tokens: int = 40, **sampling) -> tuple[str, list[int]]:
    """Encode ``prompt`` with ``prompt_langs``, continue with ``output_langs`` ids (EN | Lang: ["eng_Latn"], [L]).

    Returns the continuation text (up to the boundary) and its ids.
    """
    doc = boundary_id(tokenizer)
    ids = [doc] + list(tokenizer.encode(prompt, check_langs(prompt_langs)))
    active = torch.from_numpy(active_ids(tokenizer, output_langs))
    new = generate(model, ids, active, max_new_tokens, stop_id=doc, **sampling)
    text_ids = [t for t in new if t != doc]
    return tokenizer.decode(text_ids), new


def foreign_token_share(ids, tokenizer, lang: str) -> float:
    """Share of ``ids`` (boundaries excluded) that belong only to other languages' vocabularies.

    Language fidelity is ``1 - foreign_token_share``; a Mono-only model generating with the full
    tokenizer tends to mix in other languages' tokens. Example: ids of "x" = {0, 1}, of "y" = {0, 2};
    for "x", the ids [0, 1, 2, 2] hold two y-only tokens: share 0.5. Ids in no language's list
    (possible for a joint vocabulary) are not counted as foreign.
    """
    ids = np.asarray([i for i in ids if i != boundary_id(tokenizer)], dtype=np.int64)
    if ids.size == 0:
        return 0.0
    others = [other for other in tokenizer.languages if other != lang]
    own = tokenizer.mask([lang])[ids]
    theirs = tokenizer.mask(others)[ids] if others else np.zeros(ids.size, dtype=bool)
    return float(np.mean(theirs & ~own))


def fidelity(model: LM, tokenizer, prompts: dict[str, list[str]], max_new_tokens: int = 30,
             **sampling) -> dict[str, float]:
    """Per language: foreign-token share of continuations generated with the full tokenizer."""
    out = {}
    for lang, lines in prompts.items():
        generated = []
        for line in lines:
            _, new = continue_text(model, tokenizer, line, None, None, max_new_tokens, **sampling)
            generated += new
        out[lang] = foreign_token_share(generated, tokenizer, lang)
    return out


# ---------------------------------------------------------------------------- compact models


def slice_vocab(model: LM, rows) -> LM:
    """A model over ``rows`` only (local id i = global row rows[i]): same blocks, sliced vocabulary matrices."""
    rows = torch.as_tensor(np.asarray(rows), dtype=torch.long)
    cfg = LMConfig(**{**model.cfg.to_dict(), "vocab_size": int(rows.numel())})
    small = LM(cfg).to(next(model.parameters()).device)
    state = {k: v for k, v in model.state_dict().items() if not k.startswith(("embed.", "out."))}
    state["embed.weight"] = model.embed.weight.detach()[rows]
    state["out.weight"] = model.out.weight.detach()[rows]
    if model.out.bias is not None:
        state["out.bias"] = model.out.bias.detach()[rows]
    small.load_state_dict(state)
    return small.eval()


@dataclass
class CompactLM:
    """A standalone model for ``langs``: ``model`` over local ids, ``tokenizer`` emitting them.

    ``global_ids[i]`` is the full model's row of local id ``i`` (the last one is the boundary).
    """

    model: LM
    tokenizer: object  # a ModularTokenizer over the restricted, renumbered vocabulary
    langs: tuple[str, ...]
    global_ids: np.ndarray

    def save(self, directory) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.tokenizer.save(directory / "tokenizer")
        save_atomic({
            "format": "modtok-compact-lm-1", "langs": list(self.langs),
            "global_ids": torch.from_numpy(self.global_ids),
            "model_config": self.model.cfg.to_dict(), "model": self.model.state_dict(),
        }, directory / "model.pt")
        return directory

    @classmethod
    def load(cls, directory) -> "CompactLM":
        from modtok.artifacts.modular import ModularTokenizer

        directory = Path(directory)
        try:
            blob = torch.load(directory / "model.pt", map_location="cpu", weights_only=True)
        except FileNotFoundError:
            raise CheckpointError(f"{directory}: no model.pt (not a compact model directory)") from None
        if not isinstance(blob, dict) or blob.get("format") != "modtok-compact-lm-1":
            raise CheckpointError(f"{directory / 'model.pt'}: not a compact modtok model")
        tok = ModularTokenizer.load(directory / "tokenizer")
        model = LM(LMConfig(**blob["model_config"]))
        if model.cfg.vocab_size != lm_vocab_size(tok):
            raise CheckpointError(f"{directory}: model vocabulary {model.cfg.vocab_size} does not fit its "
                                  f"tokenizer ({tok.vocab_size} ids + boundary)")
        model.load_state_dict(blob["model"])
        return cls(model.eval(), tok, tuple(blob["langs"]), blob["global_ids"].numpy())


def export_compact(model: LM, tokenizer, langs, directory=None) -> CompactLM:
    """Cut ``model`` to the union of ``langs`` (and save it to ``directory`` when given)."""
    from modtok.artifacts.modular import ModularTokenizer

    langs = check_langs(langs)
    if langs is None:
        raise ActiveSetError("a compact model needs a union of languages, not the full tokenizer")
    if model.cfg.vocab_size != lm_vocab_size(tokenizer):
        raise VocabularyMismatchError(f"model vocab_size {model.cfg.vocab_size} does not fit the tokenizer")
    sub = tokenizer.subtokenizer(langs)
    local_lists = {lang: sub.to_local(tokenizer.ids([lang])).tolist() for lang in langs}
    small_tok = ModularTokenizer(sub.tokenizer_json, local_lists)
    rows = active_ids(tokenizer, langs)  # sub.global_ids + boundary
    compact = CompactLM(slice_vocab(model, rows), small_tok, langs, rows)
    if directory is not None:
        compact.save(directory)
    return compact


# ---------------------------------------------------------------------------- full vs compact timing


def full_vs_compact_timing(full_vocab: int, compact_rows, widths, label: str = "", device="cpu",
                           n_layers: int = 4, batch: int = 4, seq: int = 64, repeats: int = 3) -> list[dict]:
    """Forward time and parameter memory of a full-vocabulary model and its
    compact cut to ``compact_rows`` (:func:`slice_vocab`), at each ``d_model``
    in ``widths`` (weights random, seed 0; the paper's Tables 3/23 analog).

    The forward pass computes logits over each model's whole vocabulary for a
    ``batch x seq`` batch of random tokens from the compact vocabulary (the
    same tokens, as global ids, for the full model); time is the median of
    ``repeats`` runs after one warm-up, in milliseconds. Two rows per width,
    "full" then "compact".
    """
    device = torch.device(device)
    compact_rows = torch.as_tensor(np.asarray(compact_rows), dtype=torch.long)
    g = torch.Generator().manual_seed(0)
    local = torch.randint(len(compact_rows), (batch, seq), generator=g).to(device)  # (B, T) compact ids
    glob = compact_rows.to(device)[local]  # (B, T) the same tokens as full-vocabulary ids

    def forward_ms(model, idx):
        times = []
        with torch.no_grad():
            for _ in range(repeats + 1):
                t0 = time.perf_counter()
                model.logits(idx)
                if device.type == "cuda":
                    torch.cuda.synchronize()
                times.append(time.perf_counter() - t0)
        return 1e3 * float(np.median(times[1:]))  # the first run is the warm-up

    rows = []
    for d in widths:
        torch.manual_seed(0)
        cfg = LMConfig(vocab_size=full_vocab, d_model=d, n_layers=n_layers, n_heads=max(1, d // 64), max_seq_len=seq)
        full = LM(cfg).to(device).eval()
        small = slice_vocab(full, compact_rows)
        for name, model, idx in (("full", full, glob), ("compact", small, local)):
            rows.append({"vocabulary": label, "d_model": d, "model": name, "vocab rows": model.cfg.vocab_size,
                         "params (M)": model.num_params() / 1e6, "param MB": model.num_params() * 4 / 2**20,
                         "forward ms": forward_ms(model, idx)})
    return rows
