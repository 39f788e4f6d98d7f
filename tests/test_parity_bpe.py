"""Parity-aware BPE: the reference's nine golden runs (compat mode), a naive
re-implementation as differential oracle for every variant, the lossless mode
(HF cross-checks, continued training) and the bad-input errors."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modtok import errors
from modtok.bpe import parity, standard
from modtok.bpe.export import from_tokenizer_json, hf_tokenizer
from modtok.bpe.model import BPEModel
from modtok.errors import BudgetError, ModtokError, ParallelCorpusError
from modtok.evaluation.metrics import gini, token_counts
from modtok.text import data
from modtok.text.pretokenize import byte_level, bytes_to_unicode, count_by_language

LANGS4 = ["eng_Latn", "npi_Deva", "rus_Cyrl", "ell_Grek"]
TRAIN = [f"train.{lang}.txt" for lang in LANGS4]
DEV = [f"dev.{lang}.txt" for lang in LANGS4]

# The nine runs of ../shared/golden/parity_bpe/COMMANDS.sh, as modtok options:
# (train files, dev files, merges, options).
GOLDEN = {
    "base": (TRAIN, DEV, 1000, {}),
    "window": (TRAIN, DEV, 1000, {"variant": "window", "window": 100, "alpha": 2}),
    "window_a1": (TRAIN, DEV, 1000, {"variant": "window", "window": 100, "alpha": 1}),
    "hybrid": (TRAIN, DEV, 1000, {"hybrid": 300}),
    "window_hybrid": (TRAIN, DEV, 1000, {"variant": "window", "window": 100, "alpha": 2, "hybrid": 300}),
    # ratio mode chooses without a dev set; the dev set is only tracked
    "ratio": (TRAIN, DEV, 1000, {"ratios": [1, 1, 1, 1]}),
    "stop_min_frequency": ([TRAIN[0], "train_tiny.npi_Deva.txt", *TRAIN[2:]], DEV, 1000, {}),
    "lang_tie": ([TRAIN[0], TRAIN[2]], [DEV[0], DEV[0]], 300, {}),
    "classical": (TRAIN, DEV, 1000, {"variant": "classical"}),
}


@pytest.fixture(scope="session")
def golden_root() -> Path:
    value = os.environ.get("MODTOK_GOLDEN")
    root = Path(value) if value else Path(__file__).resolve().parents[2] / "shared" / "golden" / "parity_bpe"
    if not (root / "COMMANDS.sh").is_file():
        pytest.skip("golden parity-BPE files not available (set MODTOK_GOLDEN)")
    return root


def run_golden(root: Path, name: str) -> parity.ParityResult:
    train_files, dev_files, merges, options = GOLDEN[name]
    langs = LANGS4 if len(train_files) == 4 else ["eng_Latn", "rus_Cyrl"]
    train = {lang: parity.reference_lines(root / f) for lang, f in zip(langs, train_files)}
    dev = {lang: parity.reference_lines(root / f) for lang, f in zip(langs, dev_files)}
    return parity.train_from_lines(train, dev, 256 + merges, compat="reference", **options)


@pytest.mark.parametrize("name", list(GOLDEN))
def test_golden_run(golden_root, name):
    """merges.txt byte for byte; dev costs every 100 merges; the language of every
    merge (plus the exhausted one); final Gini and training token counts."""
    res = run_golden(golden_root, name)
    expected = json.loads((golden_root / name / "expected.json").read_text())
    assert res.merges_txt().encode("utf-8") == (golden_root / name / "merges.txt").read_bytes()
    assert len(res.merges) == expected["num_merges"]
    for k, costs in expected["dev_tokens_after_k_merges"].items():
        assert res.dev_tokens[int(k)].tolist() == costs, f"dev costs after {k} merges"
    assert res.train_tokens[0].tolist() == expected["train_tokens_initial"]
    assert res.train_tokens[-1].tolist() == expected["train_tokens_final"]
    assert round(res.gini_dev(), 6) == pytest.approx(expected["gini_dev_tokens"], abs=1e-6)
    if "language_per_merge" in expected:
        assert res.choices == expected["language_per_merge"]
        assert {str(k): v for k, v in res.language_merge_counts().items()} == expected["language_merge_counts"]
    assert (res.stop_message is not None) == expected["stopped_early"]


def test_golden_tokenizer_json_encodes_like_the_trajectory(golden_root):
    """The compat tokenizer.json (reference pre-tokenizer, same ids) encodes each dev
    line in HF with the final per-language dev cost of the trajectory."""
    res = run_golden(golden_root, "hybrid")
    tok = res.tokenizer()
    for l, f in enumerate(DEV):
        lines = parity.reference_lines(golden_root / f)
        assert int(token_counts(tok, lines).sum()) == res.dev_tokens[-1, l]


def test_reference_pretokens_match_hf_whitespace_bytelevel():
    from tokenizers import pre_tokenizers as P

    hf = P.Sequence([P.Whitespace(), P.ByteLevel(use_regex=False, add_prefix_space=True)])
    table = bytes_to_unicode()
    for line in ["hello, world!", "नमस्ते संसार।  a_b 12.5%", "ZWJ क्‍ष ‌x", "\x1cq!\x1d"]:
        ours = ["".join(table[b] for b in p.encode()) for p in parity.reference_pretokens(line)]
        assert ours == [w for w, _ in hf.pre_tokenize_str(line)]


@pytest.mark.parametrize("compat", [None, "reference"])
def test_counting_on_two_processes_equals_one(compat):
    """``workers=2`` (the CLI's all cores) splits the lines into chunks counted apart
    (more lines than one chunk of 20,000): the counts must be those of one process."""
    rng = random.Random(7)
    pieces = ["नमस्ते", "संसार।", "क्‍ष", "hello,", "world!", "a_b", "12.5%", "  ", "\x1cq!", "ZWJ‌x"]
    corpus = {lang: [" ".join(rng.choices(pieces, k=rng.randint(0, 6))) for _ in range(n)]
              for lang, n in [("npi", 23_000), ("eng", 9_000), ("rus", 1)]}
    one = parity.count_corpus(corpus, compat=compat)
    assert parity.count_corpus(corpus, compat=compat, workers=2) == one
    assert list(one) == list(corpus) and sum(one["npi"].values()) > 23_000


# --------------------------------------------------------------------------
# a naive re-implementation: every step recounts every pair (symbols by string)


def naive(train, dev, vocab_size, *, variant="base", hybrid=0, window=100, alpha=2.0, ratios=None,
          min_frequency=2, on_exhausted=None, compat=None):
    """The policy on dicts of string tuples: (merges as string pairs, choices, dev costs)."""
    on_exhausted = on_exhausted or ("stop" if compat else "skip")
    table = bytes_to_unicode()
    langs = list(train)
    split = lambda w: tuple(table[b] for b in w.encode("utf-8"))  # noqa: E731
    words = {lang: Counter({split(w): n for w, n in train[lang].items()}) for lang in langs}
    dwords = {lang: Counter({split(w): n for w, n in (dev or {}).get(lang, {}).items()}) for lang in langs}
    rank = {table[b]: r for r, b in enumerate(sorted(range(256), key=lambda b: table[b]))}
    merged: list[tuple[str, str]] = []
    choices, costs, recent = [], [], []
    length = lambda ws: sum(len(w) * n for w, n in ws.items())  # noqa: E731
    train0 = [length(words[lang]) for lang in langs]
    costs.append([length(dwords[lang]) for lang in langs])

    def pair_counts(lang):
        out = Counter()
        for ws in ([words[lang]] if lang is not None else words.values()):
            for w, n in ws.items():
                for p in zip(w, w[1:]):
                    out[p] += n
        return out

    def best(lang):
        counts = pair_counts(lang)
        if not counts:
            return None
        top = max(counts.values())
        tied = [p for p, n in counts.items() if n == top]
        p = max(tied) if compat else min(tied, key=lambda p: (rank[p[0]], rank[p[1]]))
        return p, top

    def apply(ws, a, b):
        out = Counter()
        for w, n in ws.items():
            new, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    new.append(a + b)
                    i += 2
                else:
                    new.append(w[i])
                    i += 1
            out[tuple(new)] += n
        return out

    learned, budget = 0, vocab_size - 256
    while learned < budget:
        classical = variant == "classical" or len(choices) < hybrid
        if classical:
            order = [-1]
        else:
            if ratios is not None:
                cur = [length(words[lang]) for lang in langs]
                key = lambda l: ((train0[l] / cur[l]) / (ratios[l] / ratios[0]), l)  # noqa: E731
            else:
                key = lambda l: (-costs[-1][l], l)  # noqa: E731
            order = sorted(range(len(langs)), key=key)
            if variant == "window":
                denom = len(langs) + (1 if compat and hybrid > 0 else 0)
                last = recent[-window:]
                order = [l for l in order if last.count(l) / window <= alpha / denom] or order
        if on_exhausted == "stop":
            order = order[:1]
        found = None
        for l in order:
            top = best(None if l == -1 else langs[l])
            if top is not None and top[1] >= min_frequency:
                found = l, top[0]
                break
        if found is None:
            if classical or on_exhausted == "stop":
                choices.append(order[0])
            break
        l, (a, b) = found
        recorded = (a, b) not in merged
        if recorded:
            known = set(rank) | {x + y for x, y in merged}
            merged.append((a, b))
            learned += 1 if compat else (a + b) not in known
            rank.setdefault(a + b, len(rank))
            choices.append(l)
            if not classical:
                recent.append(l)
        for lang in langs:
            words[lang] = apply(words[lang], a, b)
            dwords[lang] = apply(dwords[lang], a, b)
        if recorded:
            costs.append([length(dwords[lang]) for lang in langs])
    return merged, choices, costs


def random_counts(rng: random.Random, langs, alphabet, n_words):
    out = {}
    for lang in langs:
        chars = alphabet[lang]
        out[lang] = Counter(
            {"".join(rng.choice(chars) for _ in range(rng.randint(1, 7))): rng.randint(1, 9) for _ in range(n_words)}
        )
    return out


ALPHABET = {"x": "abcab é", "y": "abक्षc", "z": "ßab"}
OPTIONS = [
    {},
    {"variant": "window", "window": 4, "alpha": 1.5},
    {"variant": "window", "window": 3, "alpha": 1.0, "hybrid": 5},
    {"hybrid": 7},
    {"ratios": [1.0, 2.0, 0.5]},
    {"variant": "classical"},
    {"on_exhausted": "stop", "min_frequency": 3},
    {"on_exhausted": "skip", "min_frequency": 4},
]


@pytest.mark.parametrize("compat", [None, "reference"])
@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "base")
def test_engine_policy_equals_naive(compat, options):
    """Random small corpora (few symbols: many ties, repeated strings): the engine-backed
    policy makes the same merges, choices and dev costs as the naive one."""
    for seed in range(12):
        rng = random.Random(seed)
        train_counts = random_counts(rng, list(ALPHABET), ALPHABET, 25)
        dev_counts = random_counts(rng, list(ALPHABET), ALPHABET, 8)
        res = parity.train(train_counts, dev_counts, 256 + 40, compat=compat, **options)
        merges, choices, costs = naive(train_counts, dev_counts, 256 + 40, compat=compat, **options)
        strings = [byte_level(v) for v in res.model.vocab]
        assert [(strings[a], strings[b]) for a, b in res.merges] == merges, seed
        assert res.choices == choices, seed
        assert res.dev_tokens.tolist() == costs, seed


# --------------------------------------------------------------------------
# the lossless default mode


@pytest.fixture(scope="module")
def pool4(pool_root, flores_root):
    langs = ["eng_Latn", "deu_Latn", "rus_Cyrl", "npi_Deva"]
    train_lines = data.load_pool(langs, root=pool_root, max_chars=120_000)
    dev_lines = data.load_flores(langs, "dev", root=flores_root, max_lines=200)
    test_lines = data.load_flores(langs, "devtest", root=flores_root, max_lines=200)
    counts = count_by_language(train_lines, "llama3", workers=1)
    return counts, parity.count_dev(dev_lines, "llama3"), dev_lines, test_lines


def test_classical_variant_is_standard_bpe(pool4):
    """Lossless classical = modtok standard BPE (HF tie order), merge for merge."""
    counts, dev_counts, _, _ = pool4
    res = parity.train(counts, dev_counts, 900, variant="classical", scheme="llama3", min_frequency=0)
    assert res.model.merges == standard.train(counts, 900, "llama3").merges
    assert set(res.choices) == {parity.GLOBAL}


def test_lossless_dev_costs_equal_hf_encoding(pool4):
    """The incrementally tracked dev costs equal HF encoding of the dev lines with the
    exported tokenizer.json, after every checkpoint (prefix models)."""
    counts, dev_counts, dev_lines, _ = pool4
    res = parity.train(counts, dev_counts, 800, scheme="llama3")
    assert len(res.model) == 800 and len(res.choices) == len(res.merges)
    for k in (0, 200, len(res.merges)):
        tok = hf_tokenizer(BPEModel(res.model.merges[:k], "llama3"))
        got = [int(token_counts(tok, dev_lines[lang]).sum()) for lang in res.languages]
        assert got == res.dev_tokens[k].tolist(), k
    # parity: the worst-to-best ratio of dev costs shrinks far below classical BPE's
    classical = parity.train(counts, dev_counts, 800, variant="classical", scheme="llama3")
    assert gini(res.dev_tokens[-1]) < 0.25 * gini(classical.dev_tokens[-1])


def _one_step_a_call(counts, dev_counts, vocab_size, **options) -> parity.ParityResult:
    """The base variant one step a kernel call: a window whose cap never binds (alpha / L
    above 1) takes :func:`parity.learn`'s step-by-step path and chooses as the base variant."""
    return parity.train(counts, dev_counts, vocab_size, variant="window", window=10,
                        alpha=len(counts) + 1.0, **options)


@pytest.mark.parametrize("options", [{}, {"hybrid": 300}, {"min_frequency": 40}],
                         ids=["base", "hybrid", "rare"])
def test_kernel_runs_equal_one_step_a_call(pool4, monkeypatch, options):
    """The default mode's runs of many merges a kernel call (a buffer of 7 here, so a run
    ends on a full buffer again and again) make the merges, choices and dev costs of one
    step a call; with min_frequency 40 languages run out of pairs and are skipped."""
    counts, dev_counts, _, _ = pool4
    monkeypatch.setattr(parity, "BATCH", 7)
    runs = parity.train(counts, dev_counts, 3000, **options)
    steps = _one_step_a_call(counts, dev_counts, 3000, **options)
    assert runs.model.merges == steps.model.merges
    assert runs.choices == steps.choices
    assert runs.dev_tokens.tolist() == steps.dev_tokens.tolist()
    assert len(runs.model) == 3000 or runs.stop_message


def test_a_run_hands_back_a_merge_into_an_existing_string():
    """Base merges bc, ab, ab+c: "abc" is then segmented a|bc and its pair's string exists
    (token 258). The kernel hands that step back, the model records a second path to
    258 (no new token), and the run goes on to the same result as one step a call."""
    base = BPEModel([(98, 99), (97, 98), (257, 99)], "whitespace")
    counts = {"x": Counter({"abc": 9, "de": 3}), "y": Counter({"abc": 2, "fgh": 4})}
    dev = {"x": Counter({"abc": 1, "de": 1}), "y": Counter({"fgh": 2})}
    runs = parity.train(counts, dev, len(base) + 3, base=base)
    steps = _one_step_a_call(counts, dev, len(base) + 3, base=base)
    vocab = runs.model.vocab
    assert [vocab[a] + vocab[b] for a, b in runs.merges] == [b"fg", b"abc", b"fgh", b"de"]
    assert runs.model.results[len(base.merges) + 1] == 258 and len(runs.model) == len(base) + 3
    assert (runs.model.merges, runs.choices) == (steps.model.merges, steps.choices)
    assert runs.dev_tokens.tolist() == steps.dev_tokens.tolist()


def test_lossless_tokenizer_json_loads_in_transformers(pool4, tmp_path):
    from transformers import PreTrainedTokenizerFast

    counts, dev_counts, _, test_lines = pool4
    res = parity.train(counts, dev_counts, 600, variant="window", window=50, alpha=2, hybrid=100,
                       scheme="llama3")
    path = res.save(tmp_path / "tokenizer.json")
    assert from_tokenizer_json(json.loads(path.read_text())).merges == res.model.merges
    fast = PreTrainedTokenizerFast(tokenizer_file=str(path))
    for lang, lines in test_lines.items():
        for line in lines[:20]:
            ids = res.model.encode(line)
            assert fast.encode(line, add_special_tokens=False) == ids
            assert fast.decode(ids) == line


@settings(max_examples=60)
@given(st.text(max_size=60))
def test_lossless_round_trip_any_unicode(text):
    res = _tiny_lossless()
    tok = res.tokenizer()
    ids = tok.encode(text, add_special_tokens=False).ids
    assert ids == res.model.encode(text)
    assert tok.decode(ids) == text


_TINY: list = []


def _tiny_lossless() -> parity.ParityResult:
    if not _TINY:
        train_lines = {"eng_Latn": ["the cat sat on the mat", "a cat"], "hin_Deva": ["नमस्ते दुनिया", "नमस्ते"]}
        dev_lines = {"eng_Latn": ["the cat"], "hin_Deva": ["नमस्ते"]}
        _TINY.append(parity.train_from_lines(train_lines, dev_lines, 280, scheme="llama3", min_frequency=1))
    return _TINY[0]


def test_continued_parity_keeps_original_ids(pool4, flores_root):
    """Parity-aware BPE on top of an English BPE: the original merges are a prefix,
    every original id is unchanged, English devtest encodes to the same ids, and the
    dev costs of the continuation start from the base model's segmentation."""
    counts, dev_counts, dev_lines, test_lines = pool4
    base = standard.train(counts["eng_Latn"], 500, "llama3")
    res = parity.train(counts, dev_counts, 900, base=base)
    assert res.base_merges == len(base.merges)
    assert res.model.merges[: len(base.merges)] == base.merges
    assert res.model.vocab[: len(base)] == base.vocab
    assert len(res.model) == 900
    old, new = hf_tokenizer(base), hf_tokenizer(res.model)
    for line in test_lines["eng_Latn"][:50]:  # every base token keeps its string and id
        assert all(new.id_to_token(i) == old.id_to_token(i) for i in old.encode(line).ids)
    base_costs = [int(token_counts(old, dev_lines[lang]).sum()) for lang in res.languages]
    assert res.dev_tokens[0].tolist() == base_costs
    final = [int(token_counts(new, dev_lines[lang]).sum()) for lang in res.languages]
    assert final == res.dev_tokens[-1].tolist()


def test_stop_versus_skip():
    """A language whose training data runs out of frequent pairs: "stop" ends the run
    at its turn (one more choice recorded), "skip" passes it over and fills the budget."""
    train_counts = {"x": Counter({"abcdefgh": 5, "hgfedcba": 4}), "y": Counter({"pq": 1})}
    dev_counts = {"x": Counter({"ab": 1}), "y": Counter({"pqpqpqpq": 3})}
    stop = parity.train(train_counts, dev_counts, 266, on_exhausted="stop", scheme="whitespace")
    assert stop.merges == [] and stop.choices == [1] and "'y'" in stop.stop_message
    skip = parity.train(train_counts, dev_counts, 266, on_exhausted="skip", scheme="whitespace")
    assert len(skip.merges) == 10 and set(skip.choices) == {0}
    assert skip.stop_message is None


# --------------------------------------------------------------------------
# bad input


def test_bad_input_errors():
    tr = {"x": Counter({"ab": 3}), "y": Counter({"cd": 3})}
    dv = {"x": Counter({"ab": 1}), "y": Counter({"cd": 1})}
    with pytest.raises(ParallelCorpusError, match=r"not parallel.*x: 2, y: 1"):
        parity.count_dev({"x": ["a", "b"], "y": ["c"]})
    with pytest.raises(errors.MissingDevTextError, match="'y' has no dev text"):
        parity.train(tr, {"x": dv["x"]}, 300)
    with pytest.raises(errors.MissingDevTextError, match="'y' has no dev text"):
        parity.train(tr, {"x": dv["x"], "y": Counter()}, 300)
    with pytest.raises(errors.MissingDevTextError, match="dev set"):
        parity.train(tr, None, 300)
    with pytest.raises(errors.ParityConfigError, match="3 ratios for 2 languages"):
        parity.train(tr, None, 300, ratios=[1, 1, 1])
    with pytest.raises(errors.ParityConfigError, match="hybrid J=44 .* number of merges \\(44\\)"):
        parity.train(tr, dv, 300, hybrid=44)
    with pytest.raises(errors.ParityConfigError, match="alpha=0"):
        parity.train(tr, dv, 300, variant="window", alpha=0)
    with pytest.raises(errors.ParityConfigError, match="alpha=-1"):
        parity.train(tr, dv, 300, variant="window", alpha=-1)
    with pytest.raises(errors.ParityConfigError, match="unknown variant"):
        parity.train(tr, dv, 300, variant="windowed")
    with pytest.raises(errors.ParityConfigError, match="compat mode"):
        parity.train(tr, dv, 300, compat="original")
    with pytest.raises(BudgetError):
        parity.train(tr, dv, 200)
    for cls in (ParallelCorpusError, errors.MissingDevTextError, errors.ParityConfigError):
        assert issubclass(cls, ModtokError)


def test_cli_parity_bpe_reproduces_a_golden_prefix(golden_root, tmp_path, capsys):
    """``modtok parity-bpe --compat reference`` with the reference's flags: 60 merges of
    the window run are the first 60 lines of its merges.txt (greedy: a prefix)."""
    from modtok.ui import cli

    out = tmp_path / "run"
    args = ["parity-bpe", str(out), "--compat", "reference", "-s", "60", "--variant", "window", "-w", "100",
            "--alpha", "2", "-i", *(str(golden_root / f) for f in TRAIN), "-d", *(str(golden_root / f) for f in DEV)]
    assert cli.main(args) == 0
    golden = (golden_root / "window" / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert (out / "merges.txt").read_text(encoding="utf-8").splitlines() == golden[:61]
    trajectory = json.loads((out / "trajectory.json").read_text())
    expected = json.loads((golden_root / "window" / "expected.json").read_text())
    assert trajectory["language_per_merge"] == expected["language_per_merge"][:60]
    capsys.readouterr()
    assert cli.main(args) == 2  # an earlier run is never overwritten silently
    assert f"{out} is an earlier output of 'parity-bpe': pass --force" in capsys.readouterr().err
    assert cli.main(["parity-bpe", str(tmp_path / "nodev"), "-i", str(golden_root / TRAIN[0]), "-d"]) == 2
    assert "dev set" in capsys.readouterr().err


# --------------------------------------------------------------------------
# the config, the choosers, the trajectory file


def test_config_object_equals_keywords_and_options_override_it():
    """``train(config=...)`` learns what the same keywords learn; keywords override the
    config's fields; equal configs are equal and hash alike (a cache key)."""
    rng = random.Random(3)
    train_counts = random_counts(rng, list(ALPHABET), ALPHABET, 25)
    dev_counts = random_counts(rng, list(ALPHABET), ALPHABET, 8)
    config = parity.ParityConfig(variant="window", window=3, alpha=1.0, hybrid=5)
    by_config = parity.train(train_counts, dev_counts, 296, config)
    by_keywords = parity.train(train_counts, dev_counts, 296, variant="window", window=3, alpha=1.0, hybrid=5)
    assert by_config.merges == by_keywords.merges and by_config.choices == by_keywords.choices
    overridden = parity.train(train_counts, dev_counts, 296, config, variant="base")
    assert overridden.merges == parity.train(train_counts, dev_counts, 296, hybrid=5).merges
    assert hash(parity.ParityConfig(ratios=[1, 2])) == hash(parity.ParityConfig(ratios=(1, 2)))
    with pytest.raises(errors.ParityConfigError, match="window=0"):
        parity.ParityConfig(variant="window", window=0)
    with pytest.raises(errors.ParityConfigError, match="on_exhausted='end'"):
        parity.ParityConfig(on_exhausted="end")
    with pytest.raises(errors.ParityConfigError, match=r"ratios must be positive, got \[1, 0\]"):
        parity.ParityConfig(ratios=[1, 0])


def test_moving_window_caps_a_language_and_lifts_the_cap_when_all_are_capped():
    """Hand-worked: the inner chooser always prefers language 0; with w = 4 and cap 0.5
    (alpha = 1, L = 2) language 0 is passed over while it holds more than 2 of the last
    4 merges (strictly more, as in the reference), and with cap 0.25 and both languages
    over it nobody is passed over."""

    class Zero:
        def choose(self, candidates):
            return min(candidates) if candidates else None

    w = parity.MovingWindow(Zero(), 2, window=4, cap=0.5)
    picks = []
    for _ in range(8):
        picks.append(w.choose([0, 1]))
        w.record(picks[-1])
    # before each pick the window holds: - / 0 / 00 (2/4 = 0.5: free) / 000 (3/4: capped) /
    # 0001 (capped) / 0011 (free) / 0110 / 1100 -> 1000
    assert picks == [0, 0, 0, 1, 1, 0, 0, 0]
    tight = parity.MovingWindow(Zero(), 2, window=2, cap=0.25)
    tight.record(0), tight.record(1)
    assert tight.choose([0, 1]) == 0  # both hold 1/2 > 0.25: the cap is lifted


def test_dev_cost_and_ratio_choosers_read_the_engine():
    from modtok.bpe.engine import Engine

    eng = Engine.from_counts({"x": Counter({"abab": 2}), "y": Counter({"cd": 3})},
                             tracked={"x": Counter({"ab": 1}), "y": Counter({"cd": 1})},
                             pair_counts_per_language=True)
    cost, ratio = parity.DevCost(eng), parity.CompressionRatio(eng, [1.0, 1.0])
    assert cost.choose([0, 1]) == 0  # tie 2 = 2: the lowest index
    assert ratio.choose([0, 1]) == 0  # both at compression 1: the lowest index
    eng.merge(ord("a"), ord("b"), 256)  # x: dev 1 token, training 8 -> 4 tokens
    assert cost.choose([0, 1]) == 1 and cost.choose([0]) == 0 and cost.choose([]) is None
    assert ratio.choose([0, 1]) == 1  # x compresses 2x now, y 1x


def test_save_trajectory_is_what_the_result_holds(tmp_path):
    res = _tiny_lossless()
    path = res.save_trajectory(tmp_path / "t" / "trajectory.json")
    got = json.loads(path.read_text())
    assert got["languages"] == res.languages and got["language_per_merge"] == res.choices
    assert np.array_equal(np.array(got["dev_tokens"]), res.dev_tokens)
    assert got["train_tokens"][-1] == res.train_tokens[-1].tolist() and got["stop_message"] == res.stop_message
    assert len(got["dev_tokens"]) == len(res.merges) + 1


def test_progress_bar_does_not_change_the_run(capsys):
    train_lines = {"eng_Latn": ["the cat sat on the mat", "a cat"], "hin_Deva": ["नमस्ते दुनिया", "नमस्ते"]}
    dev_lines = {"eng_Latn": ["the cat"], "hin_Deva": ["नमस्ते"]}
    res = parity.train_from_lines(train_lines, dev_lines, 280, scheme="llama3", min_frequency=1, progress=True)
    assert res.merges == _tiny_lossless().merges
    assert "parity-aware BPE" in capsys.readouterr().err


def test_ratio_targets_are_bytes_per_line_over_the_first_language():
    """Issue 20: the ratio variant's targets from bytes-per-line statistics of parallel text.
    By hand: English lines of 3 and 5 bytes (4 per line), Greek 'αβ' = 4 bytes and 'αβγδ' =
    8 bytes (6 per line), Hindi 'क' = 3 bytes and 'कख' = 6 bytes (4.5 per line)."""
    lines = {"eng_Latn": ["abc", "abcde"], "ell_Grek": ["αβ", "αβγδ"], "hin_Deva": ["क", "कख"]}
    targets = parity.ratio_targets(lines)
    assert list(targets) == ["eng_Latn", "ell_Grek", "hin_Deva"]
    assert targets == pytest.approx({"eng_Latn": 1.0, "ell_Grek": 6 / 4, "hin_Deva": 4.5 / 4})
    # only ratios matter: the same targets relative to any language
    assert parity.ratio_targets({"ell_Grek": lines["ell_Grek"], "eng_Latn": lines["eng_Latn"]}) == \
        pytest.approx({"ell_Grek": 1.0, "eng_Latn": 4 / 6})
    with pytest.raises(ParallelCorpusError, match="different numbers of lines"):
        parity.ratio_targets({"eng_Latn": ["a", "b"], "ell_Grek": ["α"]})
    with pytest.raises(errors.DataError, match="no bytes .* ell_Grek"):
        parity.ratio_targets({"eng_Latn": ["a"], "ell_Grek": [""]})


def test_ratio_targets_equalise_tokens_per_line_better_than_equal_targets(pool4):
    """The derived targets aim every language at the same tokens per parallel line, so the
    dev Gini of a ratio run with them is below the r = 1 run's on the same text (the dev
    set is only tracked: ratio mode never reads it to choose)."""
    counts, dev_counts, dev_lines, _ = pool4
    targets = list(parity.ratio_targets(dev_lines).values())
    assert targets[0] == 1.0 and targets[2] > 1.5  # Cyrillic: about 2 bytes per character
    derived = parity.train(counts, dev_counts, 1500, ratios=targets, scheme="llama3")
    equal = parity.train(counts, dev_counts, 1500, ratios=[1.0] * len(targets), scheme="llama3")
    assert derived.gini_dev() < equal.gini_dev()
