"""The results cache (modtok.cache): served only when data, parameters and code are the same;
an entry that cannot be read whole is computed again; concurrent writers leave whole entries;
and the studies' expensive steps go through it (a new kernel, a new study object, reads them back)."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
from conftest import REPO, ship_ranks, write_ranks

from modtok import cache
from modtok.cache import Results, fingerprint
from modtok.errors import ConfigError


class Calls:
    """A computation that counts how often it ran."""

    def __init__(self):
        self.n = 0

    def __call__(self, value):
        def make():
            self.n += 1
            return value
        return make


def test_served_across_instances_and_recomputed_when_data_parameters_or_code_change(tmp_path, monkeypatch):
    calls = Calls()
    lines = {"eng_Latn": ["the cat sat", "on the mat"]}
    assert Results("s", lines, root=tmp_path).get("train", {"k": 1}, calls("a")) == "a"
    assert Results("s", lines, root=tmp_path).get("train", {"k": 1}, calls("b")) == "a" and calls.n == 1  # a new kernel
    changed = {"eng_Latn": ["the cat sat", "on the mat."]}  # one character of the data
    assert Results("s", changed, root=tmp_path).get("train", {"k": 1}, calls("c")) == "c"
    assert Results("s", lines, root=tmp_path).get("train", {"k": 2}, calls("d")) == "d"  # a parameter
    assert Results("t", lines, root=tmp_path).get("train", {"k": 1}, calls("e")) == "e"  # another study
    assert Results("s", lines, root=tmp_path).get("count", {"k": 1}, calls("f")) == "f"  # another result
    monkeypatch.setattr(cache, "code_version", lambda: "another version of modtok")  # the code
    assert Results("s", lines, root=tmp_path).get("train", {"k": 1}, calls("g")) == "g"
    assert calls.n == 6


def test_the_code_version_is_every_source_file_and_the_libraries(tmp_path, monkeypatch):
    """An edit of any file of the package (not only the study's) changes the version."""
    pkg = tmp_path / "fake"
    (pkg / "bpe").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "bpe" / "kernels.py").write_text("X = 1\n")
    monkeypatch.setattr(cache.modtok, "__file__", str(pkg / "__init__.py"))
    cache.code_version.cache_clear()
    try:
        first = cache.code_version()
        (pkg / "bpe" / "kernels.py").write_text("X = 2\n")
        cache.code_version.cache_clear()
        second = cache.code_version()
        cache.code_version.cache_clear()
        monkeypatch.setattr(cache, "LIBRARIES", ("numpy",))
        third = cache.code_version()
    finally:
        monkeypatch.undo()
        cache.code_version.cache_clear()
    assert len({first, second, third}) == 3


def test_fingerprints_tell_apart_what_differs_and_only_that():
    assert fingerprint(["ab", "c"]) != fingerprint(["a", "bc"]) != fingerprint(["abc"])  # line borders count
    assert fingerprint(1) != fingerprint(1.0) != fingerprint("1") != fingerprint(True)
    assert fingerprint({"a": 1, "b": 2}) != fingerprint({"b": 2, "a": 1})  # a dict's order may change a result
    assert fingerprint({1, 2, 3}) == fingerprint({3, 2, 1})  # a set's does not
    assert fingerprint(Counter(a=2)) != fingerprint(Counter(a=3))
    assert fingerprint(np.arange(3)) != fingerprint(np.arange(3.0)) != fingerprint(np.arange(4))
    assert fingerprint(["x"] * 3, None) == fingerprint(["x"] * 3, None)
    with pytest.raises(ConfigError, match="cannot key a result on a function"):
        fingerprint({"train": lambda: 1})


def _entry(root):
    [path] = root.glob("*/*.pkl")
    return path


@pytest.mark.parametrize("damage", ["truncate", "flip a byte", "garbage", "empty", "another key"])
def test_a_damaged_entry_is_computed_again_and_said(tmp_path, damage):
    calls = Calls()
    Results("s", root=tmp_path).get("r", 1, calls(list(range(1000))))
    path = _entry(tmp_path)
    raw = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(raw[: len(raw) // 2])
    elif damage == "flip a byte":
        path.write_bytes(raw[:-10] + bytes([raw[-10] ^ 1]) + raw[-9:])
    elif damage == "garbage":
        path.write_bytes(b"\x00\xff" * 100)
    elif damage == "empty":
        path.write_bytes(b"")
    else:  # a whole entry, but of another key, under this key's name
        other = Results("s", root=tmp_path / "o")
        other.get("r", 2, calls(["other"]))
        path.write_bytes(_entry(tmp_path / "o").read_bytes())
    again = Results("s", root=tmp_path)
    assert again.get("r", 1, calls(list(range(1000)))) == list(range(1000))
    assert "r recomputed (" in again.note()
    assert Results("s", root=tmp_path).get("r", 1, calls("never")) == list(range(1000))  # rewritten whole


def test_a_result_that_cannot_be_stored_is_returned_and_said(tmp_path):
    r = Results("s", root=tmp_path)
    value = r.get("gen", 1, lambda: (x for x in range(3)))  # a generator does not pickle
    assert list(value) == [0, 1, 2] and not list(tmp_path.glob("*/*.pkl"))
    assert "gen not stored (TypeError" in r.note()


def _write_many(args):
    root, i = args
    r = Results("s", root=root)
    big = np.full(200_000, i % 3, dtype=np.int64)  # 1.6 MB: a write takes long enough to overlap
    for _ in range(5):
        r.get("shared", "one key", lambda: big)  # every process computes it (none was there) or reads it
        r.get("own", i, lambda: i)
    return [e.how for e in r.events]


def test_concurrent_writers_leave_whole_entries(tmp_path):
    """Four processes write the same key at once (and their own keys): every entry reads back
    whole, no temporary file is left, and nothing raised."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        hows = pool.map(_write_many, [(tmp_path, i) for i in range(4)])
    assert all(set(h) <= {"computed", "cached"} for h in hows)
    assert sorted(p.name.startswith(".") for p in (tmp_path / "s").iterdir()) == [False] * 5  # 1 shared + 4 own
    value = Results("s", root=tmp_path).get("shared", "one key", lambda: pytest.fail("should be cached"))
    assert value.shape == (200_000,) and len(set(value.tolist())) == 1


def test_off_computes_everything_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("MODTOK_RESULTS", "none")
    calls = Calls()
    r = Results("s")
    r.get("x", 1, calls(1)), r.get("x", 1, calls(1))
    assert calls.n == 2 and r.note() == "results cache: off (MODTOK_CACHE=none); 2 computed"
    monkeypatch.delenv("MODTOK_RESULTS")
    monkeypatch.setenv("MODTOK_CACHE", str(tmp_path))
    assert cache.results_dir() == tmp_path / "results"
    monkeypatch.setenv("MODTOK_CACHE", "off")
    assert cache.results_dir() is None
    from modtok.artifacts import deployed  # MODTOK_CACHE=off turns off the results, not the converted tokenizers
    assert deployed.cache_dir() == cache.user_cache() / "deployed"


def test_the_note_says_what_came_from_where_and_when(tmp_path):
    Results("s", root=tmp_path).get("train", 1, lambda: 1)
    header = cache.read_header(_entry(tmp_path))
    r = Results("s", root=tmp_path)
    r.get("train", 1, lambda: 2), r.get("train", 2, lambda: 2)
    note = r.note()
    assert note.startswith("results cache: 1 from the cache (computed " + header["computed"][:16].replace("T", " "))
    assert "; 1 computed now and stored in " in note


def test_modtok_cache_shows_and_clears_only_its_entries(tmp_path):
    Results("a", root=tmp_path).get("x", 1, lambda: 1)
    Results("b", root=tmp_path).get("x", 1, lambda: 2)
    (tmp_path / "notes.txt").write_text("mine")  # MODTOK_RESULTS may name a directory with other files
    env = {"MODTOK_RESULTS": str(tmp_path), "PYTHONPATH": str(REPO)}

    def modtok(*args):
        return subprocess.run([sys.executable, "-m", "modtok", "cache", *args], env=env, capture_output=True,
                              text=True, check=True).stdout.splitlines()
    shown = modtok()
    assert shown[0].startswith(f"results cache {tmp_path}: 2 entries") and [s.split(":")[0] for s in shown[1:]] \
        == ["  a", "  b"]
    assert modtok("clear") == [f"results cache {tmp_path}: removed 2 entries (0.6 kB)"]
    assert modtok()[-1] == "  (empty)" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


# ---------------------------------------------------------------------------- the studies' seams


def test_parity_study_reads_its_trainings_back_and_not_after_a_data_change(tmp_path, monkeypatch):
    from modtok.bpe import parity
    from modtok.studies.parity_bpe import ParityStudy

    train = {"eng_Latn": ["the cat sat on the mat"] * 40, "rus_Cyrl": ["кот сидел на коврике"] * 4}
    dev = {"eng_Latn": ["the cat sat"], "rus_Cyrl": ["кот сидел"]}

    def study(t):
        return ParityStudy(t, dev, dev, vocab=280, scheme="llama3", sizes={"eng_Latn": 10, "rus_Cyrl": 1})

    first = study(train)
    row = first.evaluate(first.spec(variant="base"))
    merges = first.trained(first.spec(variant="base")).model.merges
    trainings = []
    real = parity.train
    monkeypatch.setattr(parity, "train", lambda *a, **k: trainings.append(1) or real(*a, **k))
    second = study(train)
    np.testing.assert_equal(second.evaluate(second.spec(variant="base")), row)  # NaN-aware: no NSL reference
    assert second.trained(second.spec(variant="base")).model.merges == merges and not trainings
    assert second.cache_note().startswith("results cache: 2 from the cache")
    third = study({**train, "rus_Cyrl": ["кот сидел на коврике."] * 4})  # one character more
    third.trained(third.spec(variant="base"))
    assert trainings == [1]


def test_sequential_study_serves_a_new_kernel_without_counting():
    from modtok.studies.modular_tokenizers.sequential import SequentialStudy
    from modtok.text.data import Corpora

    text = {"x_Latn": ["ab abc ab"] * 20, "y_Latn": ["bc abc bc"] * 20}
    first = SequentialStudy(Corpora(text, text, "toy"), ["x_Latn", "y_Latn"], k=260)
    rows = first.fidelity(["x_Latn", "y_Latn"], "alphabetical", 260)["rows"]
    second = SequentialStudy(Corpora(text, text, "toy"), ["x_Latn", "y_Latn"], k=260)
    assert second.fidelity(["x_Latn", "y_Latn"], "alphabetical", 260)["rows"] == rows
    assert "counts" not in vars(second)  # every tokenizer came from the cache: nothing was counted
    assert "computed now" not in second.cache_note() and "from the cache" in second.cache_note()


def test_adaptmix_runs_come_back_with_their_timing():
    from test_study_adaptmix import WS, _toy_data

    from modtok.studies import adaptmix as study

    first = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    h = first.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    second = study.AdaptMixStudy(_toy_data(), seed=0, scheme=WS)
    h2 = second.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    assert [s["mixture"] for s in h2.steps] == [s["mixture"] for s in h.steps]
    assert h2.tokenizers[-1].to_str() == h.tokenizers[-1].to_str()
    assert second.iteration_seconds("hf-bpe", 300) == first.iteration_seconds("hf-bpe", 300)
    assert second.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1) is h2  # in memory after the first read
    assert second.cache_note().startswith("results cache: 1 from the cache")
    first.choose("hf-bpe", 300, 9_000, 2, [(0.5, 0.1)])
    second.choose("hf-bpe", 300, 9_000, 2, [(0.5, 0.1)])
    fert = first.fertility({"a": h.tokenizers[0], "b": h.tokenizers[-1]})
    assert second.fertility({"a": h2.tokenizers[0], "b": h2.tokenizers[-1]}) == fert  # read back: the same JSON
    par = first.parity({"b": h.tokenizers[-1]}, pivot="rus_Cyrl")
    assert second.parity({"b": h2.tokenizers[-1]}, pivot="rus_Cyrl").values == par.values
    assert second.cache_note().startswith("results cache: 5 from the cache (")  # the run, 2 fertilities, token counts, gini
    changed = _toy_data()
    changed.test["eng_Latn"] = changed.test["eng_Latn"][:-1]  # one test line fewer: measured again
    third = study.AdaptMixStudy(changed, seed=0, scheme=WS)
    third.choose("hf-bpe", 300, 9_000, 2, [(0.5, 0.1)])
    third.fertility({"b": h.tokenizers[-1]})
    assert third.cache_note().startswith("results cache: 1 from the cache (")  # the run (train and dev the same)
    assert "; 1 computed now" in third.cache_note()  # the fertility, on the changed test split
    other = study.AdaptMixStudy(_toy_data(), seed=1, scheme=WS)  # another seed: another shuffle of the text
    other.run("hf-bpe", 300, 9_000, 2, 0.5, 0.1)
    assert "1 computed now" in other.cache_note()


def test_lm_models_and_their_evaluation_come_back(tmp_path):
    from modtok.lm.batches import lm_vocab_size
    from modtok.lm.model import config
    from modtok.lm.sampling import default_mixture, mono
    from modtok.lm.train import TrainConfig
    from modtok.studies.modular_tokenizers import lm
    from modtok.studies.modular_tokenizers.sequential import SequentialStudy
    from modtok.text.data import Corpora

    text = {"x": ["ab abc ab ca"] * 20, "y": ["bc abc bc cb"] * 20}
    tok = SequentialStudy(Corpora(text, text, "toy"), ["x", "y"], k=270).sequential(("x", "y")).modular()
    args = (tok, text, {"Mono-only": mono()}, default_mixture(["x", "y"], "x"),
            config("tiny", lm_vocab_size(tok), max_seq_len=16),
            TrainConfig(steps=3, lr=1e-2, warmup_steps=1, ckpt_every=3, log_every=1), 2, 16)
    first = lm.train_schemes(*args, tmp_path / "a")
    rows = lm.evaluate_schemes(first.models, tok, text, english="x")
    second = lm.train_schemes(*args, tmp_path / "b")
    assert not (tmp_path / "b").exists() and second.curves == first.curves and second.seconds == first.seconds
    weights = [(a == b).all() for a, b in zip(first.models["Mono-only"].state_dict().values(),
                                              second.models["Mono-only"].state_dict().values())]
    assert all(weights) and not second.models["Mono-only"].training
    assert lm.evaluate_schemes(second.models, tok, text, english="x") == rows
    assert lm.cache_note().count("from the cache") == 1  # one line for the kernel: 2 read back of 4 asked
    assert lm.cache_note().startswith("results cache: 2 from the cache")


def test_the_lm_baseline_and_the_fidelity_rows_come_back(tmp_path):
    """Notebook 04's second Run All at normal size trained the Baseline again (minutes) and
    regenerated every model's continuations: neither went through the results cache."""
    from modtok.lm.batches import lm_vocab_size
    from modtok.lm.model import config
    from modtok.lm.sampling import default_mixture, mono
    from modtok.lm.train import TrainConfig
    from modtok.studies.modular_tokenizers import lm
    from modtok.studies.modular_tokenizers.sequential import SequentialStudy
    from modtok.text.data import Corpora

    text = {"x": ["ab abc ab ca"] * 20, "y": ["bc abc bc cb"] * 20}
    tok = SequentialStudy(Corpora(text, text, "toy"), ["x", "y"], k=270).sequential(("x", "y")).modular()
    args = (tok, "whitespace", text, default_mixture(["x", "y"], "x"), config("tiny", lm_vocab_size(tok), max_seq_len=16),
            TrainConfig(steps=3, lr=1e-2, warmup_steps=1, ckpt_every=3, log_every=1), 2, 16)
    before = len(lm.RESULTS.events)
    first = lm.train_baseline(*args, tmp_path / "a")
    models = lm.train_schemes(tok, text, {"Mono-only": mono()}, *args[3:], tmp_path / "a").models
    rows = lm.evaluate_schemes(models, tok, text, english="x", baseline=first)
    prompts = lm.prompts(text, 2, words=2)
    shares = lm.fidelity_rows(models, tok, prompts, max_new_tokens=4, top_k=3, seed=0)
    second = lm.train_baseline(*args, tmp_path / "b")
    assert not (tmp_path / "b").exists() and second.curve == first.curve and second.seconds == first.seconds
    assert second.tokenizer.tokenizer_json == first.tokenizer.tokenizer_json
    assert all((a == b).all() for a, b in zip(first.model.state_dict().values(), second.model.state_dict().values()))
    assert lm.evaluate_schemes(models, tok, text, english="x", baseline=second) == rows
    assert lm.fidelity_rows(models, tok, prompts, max_new_tokens=4, top_k=3, seed=0) == shares
    hows = {(e.what, e.how) for e in lm.RESULTS.events[before:]}
    assert {("baseline", "cached"), ("evaluate baseline", "cached"), ("fidelity", "cached")} <= hows
    lm.fidelity_rows(models, tok, prompts, max_new_tokens=5, top_k=3, seed=0)
    assert lm.RESULTS.events[-1].how == "computed"  # another generation setting: computed, never served


def test_a_timing_comes_back_on_the_same_device_and_threads_only():
    import torch

    from modtok.studies.modular_tokenizers import lm

    before = len(lm.RESULTS.events)
    first = lm.timing_rows(301, range(40), [16], "toy", "cpu")
    assert lm.timing_rows(301, range(40), [16], "toy", "cpu") == first  # the first one's timing, read back
    threads = torch.get_num_threads()
    torch.set_num_threads(threads + 1)
    try:
        lm.timing_rows(301, range(40), [16], "toy", "cpu")
    finally:
        torch.set_num_threads(threads)
    assert [e.how for e in lm.RESULTS.events[before:]] == ["computed", "cached", "computed"]


def test_every_entry_is_a_header_line_and_a_pickle(tmp_path):
    """The format ``modtok cache`` reads without unpickling: magic, JSON header, payload."""
    Results("s", root=tmp_path).get("x", 1, lambda: {"a": 1})
    raw = _entry(tmp_path).read_bytes()
    assert raw.startswith(cache.MAGIC)
    header, _, payload = raw[len(cache.MAGIC):].partition(b"\n")
    h = json.loads(header)
    assert h["what"] == "x" and h["bytes"] == len(payload) and pickle.loads(payload) == {"a": 1}


def test_the_k_sweep_comes_back_on_the_callers_base():
    from modtok.adapt.extend import Base
    from modtok.bpe.export import to_tokenizer_json
    from modtok.bpe.model import BPEModel
    from modtok.studies.pretoken_floor import floor

    base = {"toy": Base(to_tokenizer_json(BPEModel([], "llama3")), name="toy")}
    train, lines = ["नमस्ते दुनिया नमस्ते"] * 30, ["नमस्ते दुनिया"]
    first = floor.k_sweep(base, train, [0, 5], lines)
    second = floor.k_sweep(base, train, [0, 5], lines)
    assert second.rows == first.rows and second.extensions["toy", "R2", 5].base is base["toy"]
    assert second.tokenizers["toy", "R2", 5].to_str() == first.tokenizers["toy", "R2", 5].to_str()
    floor.k_sweep(base, train + ["नया"], [0, 5], lines)  # one line more: computed
    assert [e.how for e in floor.RESULTS.events[-3:]] == ["computed", "cached", "computed"]


# --------------------------------------------------------------------------
# deployed tokenizers keyed by their shipped file (issue 44: not loaded, not serialized, for a key)

RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"abc": 257}


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """A deployed tokenizer "shipped" by a package of its own (its ranks file under ``site/``),
    the converted-tokenizer cache and the results cache in ``tmp_path``."""
    pkg = ship_ranks(tmp_path, monkeypatch, "shipped", RANKS, "ranks.tiktoken")
    monkeypatch.setenv("MODTOK_CACHE", str(tmp_path / "converted"))
    monkeypatch.setenv("MODTOK_RESULTS", str(tmp_path / "results"))
    return pkg / "ranks.tiktoken"


def test_a_deployed_handle_is_keyed_by_its_file_without_loading_it(shipped, monkeypatch):
    from tokenizers import Tokenizer

    from modtok.artifacts import deployed
    from modtok.errors import UsageError

    handle = deployed.Lazy("shipped")
    key = fingerprint(handle)
    assert not handle.loaded and key == fingerprint(deployed.Lazy("shipped"))  # the same file: the same key
    # it stands for the tokenizer: isinstance, the same ids as load()'s; read-only; pickles as its name
    assert isinstance(handle, Tokenizer) and not handle.loaded
    assert handle.encode("abcab", add_special_tokens=False).ids == deployed.load("shipped").encode(
        "abcab", add_special_tokens=False).ids == [257, 256] and handle.loaded
    with pytest.raises(UsageError, match="read-only"):
        handle.normalizer = None
    with pytest.raises(UsageError, match="read-only"):
        handle.add_tokens(["zz"])
    again = pickle.loads(pickle.dumps(handle))
    assert not again.loaded and fingerprint(again) == key
    # what the key depends on: the file's bytes (same size, two ranks swapped), the package's version, the converter
    swapped = RANKS | {b"ab": 257, b"abc": 256}
    write_ranks(shipped, swapped)
    assert shipped.stat().st_size == len(b"".join(__import__("base64").b64encode(t) + b" %d\n" % r
                                                  for t, r in RANKS.items()))
    changed = fingerprint(deployed.Lazy("shipped"))
    assert changed != key
    assert fingerprint(handle) == key  # a loaded handle keeps the key of the file it read
    write_ranks(shipped, RANKS)
    assert fingerprint(deployed.Lazy("shipped")) == key
    with monkeypatch.context() as m:
        m.setattr(deployed, "_version", lambda pip_name: "9.9")
        assert fingerprint(deployed.Lazy("shipped")) != key
    monkeypatch.setattr(deployed, "CONVERTER_VERSION", deployed.CONVERTER_VERSION + 1)
    assert fingerprint(deployed.Lazy("shipped")) != key


def test_notebook_01s_deployed_measures_come_back_unloaded_and_not_after_a_file_change(shipped):
    from modtok.artifacts import deployed
    from modtok.studies.modular_tokenizers.inefficiency import InefficiencyStudy
    from modtok.text.data import Corpora

    text = {"eng_Latn": ["ab ab abc cab"] * 20, "deu_Latn": ["abab ba bc ab"] * 20}
    corpora = Corpora(text, text, "toy")

    def table():
        handle = deployed.Lazy("shipped")
        study = InefficiencyStudy(corpora, k=260, deployed={"shipped": handle})
        return study, handle, study.nsl_table(["eng_Latn", "deu_Latn"], 262), study.premiums(262, "deu_Latn")

    study, handle, first, prem = table()
    assert handle.loaded and {e.how for e in study.results.events} == {"computed"}
    study, handle, second, prem2 = table()  # a new kernel: the table and premiums read back, the handle never loaded
    assert second["rows"] == first["rows"] and prem2 == prem and not handle.loaded
    assert {e.how for e in study.results.events} == {"cached"}
    # a new subset reads the deployed tokenizer's counts (all languages, one entry) and the references' back
    study.nsl_table(["deu_Latn"], 262)
    assert not handle.loaded
    assert [(e.what, e.how) for e in study.results.events[-1:]] == [("nsl table", "computed")]
    # the shipped file changed: every result that reads the deployed tokenizer is computed again, on the new one
    write_ranks(shipped, RANKS | {b" ab": 258})
    study, handle, third, _ = table()
    how = {e.what: e.how for e in study.results.events}
    assert how["nsl table"] == how["deployed test tokens"] == how["premiums"] == "computed" and handle.loaded
    assert how["joint"] == how["reference test tokens"] == "cached"  # what does not read it stays
    assert [r["NSL shipped"] for r in third["rows"]] != [r["NSL shipped"] for r in first["rows"]]
    # other test lines: every count and table computed again; other training text: the counts and the joint too
    other = InefficiencyStudy(Corpora(text, {**text, "deu_Latn": text["deu_Latn"][:-1]}, "toy"), k=260,
                              deployed={"shipped": deployed.Lazy("shipped")})
    other.nsl_table(["eng_Latn", "deu_Latn"], 262)
    how = {(e.what, e.how) for e in other.results.events}
    assert {("deployed test tokens", "computed"), ("reference test tokens", "computed"), ("nsl table", "computed"),
            ("joint", "cached")} <= how
    retrained = InefficiencyStudy(Corpora({**text, "eng_Latn": text["eng_Latn"] + ["c"]}, text, "toy"), k=260,
                                  deployed={"shipped": deployed.Lazy("shipped")})
    retrained.nsl_table(["eng_Latn", "deu_Latn"], 262)
    how = {(e.what, e.how) for e in retrained.results.events}
    assert {("pretoken arrays", "computed"), ("joint", "computed"), ("nsl table", "computed")} <= how


def test_notebook_07s_audit_and_id_check_come_back_and_not_after_a_change(shipped):
    from modtok.adapt.extend import Base
    from modtok.artifacts import deployed
    from modtok.bpe.export import to_tokenizer_json
    from modtok.bpe.model import BPEModel
    from modtok.studies.pretoken_floor import floor

    ne, en = ["ab abc", "abc ab ab"], ["ab", "abc c"]
    first = floor.audit_rows({"shipped": deployed.Lazy("shipped")}, ne, en, n_boot=20)
    handle = deployed.Lazy("shipped")
    assert floor.audit_rows({"shipped": handle}, ne, en, n_boot=20) == first and not handle.loaded
    assert floor.RESULTS.events[-1].how == "cached"
    floor.audit_rows({"shipped": handle}, ne, en, n_boot=21)  # a parameter
    floor.audit_rows({"shipped": handle}, ne + ["c"], en + ["c"], n_boot=20)  # the lines
    write_ranks(shipped, RANKS | {b" ab": 258})
    floor.audit_rows({"shipped": deployed.Lazy("shipped")}, ne, en, n_boot=20)  # the file
    assert [e.how for e in floor.RESULTS.events[-3:]] == ["computed"] * 3

    # the Proposition-1 check of a sweep: read back without building a tokenizer; a changed extension misses
    bases = {"toy": Base(to_tokenizer_json(BPEModel([], "llama3")), name="toy")}
    train, lines = ["नमस्ते दुनिया नमस्ते"] * 30, ["नमस्ते दुनिया"]
    sweep = floor.k_sweep(bases, train, [0, 5], lines)
    assert floor.moved_ids(bases, sweep.tokenizers, ["hello"]) == []
    again = floor.k_sweep(bases, train, [0, 5], lines)
    assert floor.moved_ids(bases, again.tokenizers, ["hello"]) == [] and not again.tokenizers._built
    assert [e.how for e in floor.RESULTS.events[-2:]] == ["cached", "cached"]
    # the segmentation panel: computed once, read back by a new sweep without building, another sentence computed
    shown = floor.segmenter(sweep.tokenizers, lines[0])("toy", "R2", 5)
    assert floor.segmenter(again.tokenizers, lines[0])("toy", "R2", 5) == shown and not again.tokenizers._built
    assert shown["segmentation"] == floor.segment(sweep.tokenizers["toy", "R2", 5], lines[0])["segmentation"]
    floor.segmenter(again.tokenizers, "नमस्ते")("toy", "R2", 5)
    assert [e.how for e in floor.RESULTS.events[-3:]] == ["computed", "cached", "computed"]
    floor.moved_ids(bases, again.tokenizers, ["hello", "world"])  # other lines: checked again
    other = floor.k_sweep(bases, train, [0, 7], lines)  # other merges: checked again
    floor.moved_ids(bases, other.tokenizers, ["hello"])
    assert [e.how for e in floor.RESULTS.events[-3:]] == ["computed", "computed", "computed"]
    assert other.tokenizers._built and sorted(other.tokenizers) == [("toy", arm, k) for arm in ("R1", "R2") for k in (0, 7)]


def test_a_deployed_base_is_keyed_by_its_file_and_read_on_first_use(shipped):
    from modtok.adapt.extend import Base
    from modtok.studies.pretoken_floor import floor

    base = floor.DeployedBase("shipped")
    key = floor.base_key(base)
    assert not base.loaded and key == floor.base_key(floor.DeployedBase("shipped"))
    assert isinstance(base, Base) and base.next_id == Base.load("shipped").next_id == 258 and base.loaded
    assert base.tokenizer.encode("abc", add_special_tokens=False).ids == [257]
    write_ranks(shipped, RANKS | {b" ab": 258})
    assert floor.base_key(floor.DeployedBase("shipped")) != key
    assert floor.base_key(base) == key  # the loaded one is the file it read
