"""Notebook 04, learn it small: a subtokenizer per batch, and the output rows its loss covers.

Training an LM on a modular tokenizer, each batch is in one language and tokenized by a
subtokenizer drawn by the sampling scheme (:mod:`modtok.lm.sampling`: Samp_Sub_1 here, the
own language plus one other with probability p); the restricted loss
(:mod:`modtok.lm.loss`) takes the softmax over that subtokenizer's ids only, so only those
rows of the output matrix are used. The toy: a sequential BPE over three tiny languages
(:func:`modtok.bpe.sequential.train_sequential`), six draws, and one batch whose targets
are mapped to their row in the active set by hand (:func:`reference`) and by
:func:`modtok.lm.loss.to_local`; the restricted loss equals the full softmax with every
other row masked (:func:`~modtok.lm.loss.masked_full_cross_entropy`), the slow reference.

>>> steps = trace()
>>> [s.data["langs"] for s in steps[1:4]]
[('eng_Latn', 'hin_Deva'), ('tha_Thai',), ('eng_Latn', 'tha_Thai')]
>>> run = reference(); run["local"] == engine_run()["local"]
True
"""

from __future__ import annotations

from collections import Counter

import torch

from modtok.bpe.sequential import train_sequential
from modtok.lm.loss import masked_full_cross_entropy, restricted_cross_entropy, to_local
from modtok.lm.sampling import SubtokenizerSampler, samp_sub
from modtok.studies.lessons.steps import Prediction, Step, comparison, label, pills, table

TOY = {
    "eng_Latn": Counter({"hug": 10, "pug": 5, "hugs": 5}),
    "hin_Deva": Counter({"मन": 4, "नमन": 3}),
    "tha_Thai": Counter({"กิน": 4, "ข้าว": 3}),
}
K = 262  # six tokens beyond the bytes per language
MIXTURE = {"eng_Latn": 0.5, "hin_Deva": 0.25, "tha_Thai": 0.25}
SCHEME = samp_sub(1, p=0.5)
SEED, DRAWS = 0, 6
BATCH = "नमन मन"  # one hin_Deva batch, the targets of the loss


def _model():
    return train_sequential(TOY, K, scheme="whitespace")


def _active(res, langs) -> list[int]:
    return sorted(set().union(*(res.lang_to_ids[lang] for lang in langs)))


def _targets(res, langs, text: str = BATCH) -> list[int]:
    """``text`` encoded by the subtokenizer of ``langs``, as global ids."""
    sub = res.model.restricted(_active(res, langs))
    return [res.model.id_of(sub.vocab[t]) for t in sub.encode(text)]


def draws(seed: int = SEED, n: int = DRAWS) -> list:
    """The sampler's first ``n`` draws (a pure function of seed and step)."""
    sampler = SubtokenizerSampler(SCHEME, MIXTURE, seed)
    return [sampler.draw(step) for step in range(n)]


def reference(langs=("hin_Deva", "tha_Thai")) -> dict:
    """A batch's targets and their row in the active set, by ``list.index``."""
    res = _model()
    active = _active(res, langs)
    targets = _targets(res, langs)
    return {"active": active, "targets": targets, "local": [active.index(t) for t in targets]}


def engine_run(langs=("hin_Deva", "tha_Thai"), d: int = 8) -> dict:
    """The library's mapping and both losses on seeded random hidden states and output rows."""
    res = _model()
    active = torch.tensor(_active(res, langs))
    targets = torch.tensor([_targets(res, langs)])
    g = torch.Generator().manual_seed(SEED)
    hidden, weight = (
        torch.randn(1, targets.shape[1], d, generator=g),
        torch.randn(len(res.model), d, generator=g),
    )
    return {
        "local": to_local(targets, active)[0].tolist(),
        "restricted": float(restricted_cross_entropy(hidden, weight, None, targets, active)),
        "masked_full": float(masked_full_cross_entropy(hidden, weight, None, targets, active)),
    }


def trace(seed: int = SEED, n: int = DRAWS) -> list[Step]:
    """The toy's tokens, then one step per draw: language, subtokenizer, rows covered."""
    res = _model()
    vocab = res.model.vocab
    mine = {lang: [label(vocab[i]) for i in ids[256:]] for lang, ids in res.lang_to_ids.items()}
    steps = [
        Step(
            "the modular tokenizer",
            f"sequential BPE, k = {K}; each language's tokens beyond the 256 bytes",
            [
                table(
                    ["language", "mixture", "its tokens"],
                    [[lang, MIXTURE[lang], " ".join(mine[lang])] for lang in TOY],
                )
            ],
            {"tokens": mine},
        )
    ]
    rows = range(256, len(vocab))
    for step, d in enumerate(draws(seed, n)):
        langs = d.langs or tuple(TOY)
        active = set(_active(res, langs))
        covered = [label(vocab[i]) for i in rows if i in active]
        targets = [label(vocab[t]) for t in _targets(res, langs)] if d.lang == "hin_Deva" else None
        steps.append(
            Step(
                f"batch {step}: {d.lang}",
                f"subtokenizer {' ∪ '.join(langs)}: the softmax covers "
                f"{len(active)} of {len(vocab)} output rows (the 256 bytes and {len(covered)} tokens)",
                [
                    pills(
                        "rows covered",
                        [label(vocab[i]) for i in rows],
                        [j for j, i in enumerate(rows) if i in active],
                    ),
                    *([pills(f"targets of {BATCH!r}", targets)] if targets else []),
                ],
                {"lang": d.lang, "langs": langs, "covered": covered, "active": len(active)},
            )
        )
    return steps


def prediction(seed: int = SEED) -> Prediction:
    """ "Is this output row in the loss of that batch?" for the first two-language draw."""
    res = _model()
    d = next(d for d in draws(seed) if d.langs and len(d.langs) > 1)
    other = next(lang for lang in TOY if lang not in d.langs)
    token = label(res.model.vocab[res.lang_to_ids[other][-1]])
    answer = "no" if res.lang_to_ids[other][-1] not in _active(res, d.langs) else "yes"
    return Prediction(
        f"A {d.lang} batch drawn with subtokenizer {' ∪ '.join(d.langs)}: does the loss use the "
        f"output row of {other}'s token {token!r}?",
        ["yes", "no"],
        answer,
        f"the softmax covers only the ids of {' ∪ '.join(d.langs)}, and {token!r} is "
        f"{'not ' if answer == 'no' else ''}one of them",
    )


def engine_step(langs=("hin_Deva", "tha_Thai")) -> Step:
    """``to_local`` next to ``list.index``, the restricted loss next to the masked full softmax."""
    ref, engine = reference(langs), engine_run(langs)
    return comparison(
        "the library (lm.loss)",
        [
            (f"rows of the targets of {BATCH!r}", ref["local"], engine["local"]),
            ("loss, nats (6 decimals)", round(engine["masked_full"], 6), round(engine["restricted"], 6)),
        ],
    )
