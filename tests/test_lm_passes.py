"""Notebook 04 says how many passes (epochs) over the training text its fixed steps make
(session 21's trial: hundreds of passes over a few KB of UDHR, train bpb 0.007, said nowhere)."""

from __future__ import annotations

import re

import pytest
from conftest import REPO
from lm_helpers import TOY_CORPUS, one_torch_thread, toy_tokenizer  # noqa: F401 (autouse fixture)

from modtok.errors import UsageError
from modtok.lm.batches import BatchSource, lm_vocab_size
from modtok.lm.model import config
from modtok.lm.sampling import SubtokenizerSampler, default_mixture, mono
from modtok.lm.train import TrainConfig
from modtok.studies.modular_tokenizers import lm

BATCH, SEQ = 2, 16
MIXTURE = default_mixture(list(TOY_CORPUS))


@pytest.fixture(scope="module")
def tok():
    return toy_tokenizer()


def curve(tok, text, steps, runs_dir):
    """The Mono-only run's metrics rows, trained as notebook 04 trains (one line a step)."""
    model_cfg = config("tiny", lm_vocab_size(tok), max_seq_len=SEQ)
    train_cfg = TrainConfig(steps=steps, lr=1e-2, warmup_steps=1, ckpt_every=steps, log_every=1)
    return lm.train_schemes(tok, text, {"Mono-only": mono()}, MIXTURE, model_cfg, train_cfg, BATCH, SEQ,
                            runs_dir).curves["Mono-only"]


def test_passes_are_the_bytes_the_batches_read_over_the_bytes_of_text(tok, tmp_path):
    steps = 12
    rows = curve(tok, TOY_CORPUS, steps, tmp_path)
    got = lm.passes(rows, TOY_CORPUS)
    # independently: the very batches of those steps, rebuilt, and the text's bytes, newlines counted
    source = BatchSource(tok, TOY_CORPUS, SubtokenizerSampler(mono(), MIXTURE, seed=0), BATCH, SEQ, seed=0)
    read: dict[str, float] = {}
    for step in range(steps):
        batch = source.batch(step)
        read[batch.lang] = read.get(batch.lang, 0.0) + batch.n_bytes
    size = {lang: sum(len(s.encode()) + 1 for s in lines) for lang, lines in TOY_CORPUS.items()}
    assert got.per_lang == pytest.approx({lang: read[lang] / size[lang] for lang in read})
    assert got.overall == pytest.approx(sum(read.values()) / sum(size[lang] for lang in read))
    assert got.overall > 1  # 12 steps of 2 x 16 tokens on ~700 bytes: more than one pass


def test_the_line_says_plainly_when_the_model_can_memorise_the_text(tok, tmp_path):
    small = lm.passes_line({"Mono-only": curve(tok, TOY_CORPUS, 12, tmp_path / "a")}, TOY_CORPUS)
    assert re.match(r"\d+\.\d passes over the training text \(", small) and "the model can memorise it" in small
    big_text = {lang: lines * 40 for lang, lines in TOY_CORPUS.items()}
    big = lm.passes_line({"Mono-only": curve(tok, big_text, 4, tmp_path / "b")}, big_text)
    assert re.match(r"0\.\d\d of one pass over the training text \(", big) and "memorise" not in big


def test_passes_refuse_a_curve_that_skips_steps_and_a_language_not_given():
    rows = [{"step": s, "lang": "eng_Latn", "bytes": 10.0} for s in (0, 5, 10)]  # log_every=5
    with pytest.raises(UsageError, match="one metrics line a step"):
        lm.passes(rows, TOY_CORPUS)
    with pytest.raises(UsageError, match="xho_Latn"):
        lm.passes([{"step": 0, "lang": "xho_Latn", "bytes": 1.0}], TOY_CORPUS)


def test_notebook_04_prints_the_passes_of_its_runs():
    source = (REPO / "notebooks" / "04_modular_lm.py").read_text(encoding="utf-8")
    assert "print(study.passes_line(curves, corpora.train))" in source
    # printed after the Baseline's curve joined the schemes' (every run's passes said)
    assert source.index("curves[study.BASELINE], train_seconds[study.BASELINE] =") < source.index("passes_line(")
