r"""Notebook 01, learn it small: standard BPE on a handful of words in two scripts.

The naive reference (:class:`modtok.bpe.reference.ReferenceEngine`) runs the loop of
:mod:`modtok.bpe.standard` one merge at a time; every step records the pair counts, the
chosen pair (the highest count; ties: HF ``BpeTrainer``'s order, :mod:`modtok.bpe.engine`)
and every word re-segmented. :func:`engine_run` is the same toy through the numba engine.

A Devanagari letter is three UTF-8 bytes, so the first merges in Hindi join the bytes of
one character (shown as ``\xe0\xa4``) before they can join letters:

>>> steps = trace()
>>> [s.data["merge"] for s in steps[1:4]]
[('\\xe0', '\\xa4'), ('u', 'g'), ('h', 'ug')]
>>> steps[6].data["words"]["नमन"], steps[-1].data["words"]["नमन"]
(['न', 'मन'], ['नमन'])
>>> engine_run()["merges"] == [s.data["merge"] for s in steps[1:]]
True
"""

from __future__ import annotations

from collections import Counter

from modtok.bpe import standard
from modtok.bpe.engine import Engine
from modtok.bpe.reference import ReferenceEngine
from modtok.studies.lessons.steps import Prediction, Step, comparison, is_piece, label, pills, table

# hug/pug/hugs (the HF course's corpus, bpe/reference.py's docstring) and three Hindi words
# that share मन ("mind"): Latin and Devanagari, small enough to count by hand.
TOY = {
    "eng_Latn": Counter({"hug": 10, "pug": 5, "hugs": 5}),
    "hin_Deva": Counter({"मन": 4, "नमन": 3, "अमन": 2}),
}
MERGES = 10
SHOWN_PAIRS = 6  # the pair table shows the most frequent ones (all of them at the start)


def _words(counts_by_lang) -> list[str]:
    return [w for c in counts_by_lang.values() for w in c]


def _segments(seg: tuple[int, ...], vocab: list[bytes]) -> list[str]:
    return [label(vocab[t]) for t in seg]


def trace(counts_by_lang=TOY, merges: int = MERGES) -> list[Step]:
    """Step 0: the words as bytes; step m: merge m with the pair counts it was chosen from."""
    ref = ReferenceEngine(counts_by_lang)
    vocab = [bytes([b]) for b in range(256)]
    words = _words(counts_by_lang)

    def segmentation() -> dict[str, list[str]]:
        segs = {}
        for lang in ref.languages:
            for seg in ref.segs[lang]:
                segs[bytes(b for t in seg for b in vocab[t]).decode()] = _segments(seg, vocab)
        return {w: segs[w] for w in words}

    def word_pills(mark_token: str | None) -> list[dict]:
        return [
            pills(repr(w), s, [i for i, t in enumerate(s) if t == mark_token])
            for w, s in segmentation().items()
        ]

    steps = [
        Step(
            "the words as bytes",
            f"{len(words)} words in {len(ref.languages)} scripts, every byte a token",
            word_pills(None),
            {"words": segmentation(), "merge": None},
        )
    ]
    for m in range(1, merges + 1):
        counts = ref.pair_counts()
        if not counts:
            break
        ties = ref.tied_pairs()
        order = sorted(counts, key=lambda p: (-counts[p], ties.index(p) if p in ties else len(ties)))
        a, b = ties[0]
        shown = order[:SHOWN_PAIRS]
        rows = [[label(vocab[x]), label(vocab[y]), counts[(x, y)]] for x, y in shown]
        vocab.append(vocab[a] + vocab[b])
        ref.merge(a, b, len(vocab) - 1)
        new = label(vocab[-1])
        tie = f" (tied with {len(ties) - 1} more: HF's byte order decides)" if len(ties) > 1 else ""
        steps.append(
            Step(
                f"merge {m}: {label(vocab[a])} + {label(vocab[b])} → {new}",
                f"the most frequent pair, {counts[(a, b)]} times{tie}",
                [
                    table(["left", "right", "count"], rows, mark=0, caption="pair counts before the merge"),
                    *word_pills(new),
                ],
                {
                    "merge": (label(vocab[a]), label(vocab[b])),
                    "count": counts[(a, b)],
                    "pair_counts": {(label(vocab[x]), label(vocab[y])): n for (x, y), n in counts.items()},
                    "words": segmentation(),
                },
            )
        )
    return steps


def engine_run(counts_by_lang=TOY, merges: int = MERGES) -> dict:
    """The same toy through the library's trainer (:func:`modtok.bpe.standard.train`, the
    numba engine): its merges and every word's segmentation, labelled as in :func:`trace`."""
    model = standard.train(counts_by_lang, 256 + merges, scheme="whitespace")
    engine = Engine.from_counts(
        counts_by_lang, merges=model.merges, results=model.results, capacity=len(model) + 1
    )
    words = _words(counts_by_lang)
    segs = {w: [label(model.vocab[t]) for t in engine.segmentation(i)] for i, w in enumerate(words)}
    return {
        "merges": [(label(model.vocab[a]), label(model.vocab[b])) for a, b in model.merges],
        "words": segs,
    }


def prediction(counts_by_lang=TOY) -> Prediction:
    """ "Which pair merges first?" over the three most frequent pairs."""
    first = trace(counts_by_lang, 1)[1]
    counts = first.data["pair_counts"]
    options = sorted(counts, key=lambda p: -counts[p])[:3]
    shown = [f"{a} + {b}" for a, b in options]
    a, b = first.data["merge"]
    bytes_note = ": pieces of characters (a Devanagari letter is 3 bytes)" if is_piece(a) else ""
    return Prediction(
        "Which pair does BPE merge first?",
        shown,
        f"{a} + {b}",
        f"it occurs {counts[(a, b)]} times, counts included, the next one {counts[options[1]]}{bytes_note}",
    )


def engine_step(counts_by_lang=TOY, merges: int = MERGES) -> Step:
    """The toy through :func:`modtok.bpe.standard.train` next to the reference's result."""
    steps, engine = trace(counts_by_lang, merges), engine_run(counts_by_lang, merges)
    return comparison(
        "the numba engine (bpe.standard.train)",
        [
            ("merges", [s.data["merge"] for s in steps[1:]], engine["merges"]),
            *((f"{w!r} segmented", seg, engine["words"][w]) for w, seg in steps[-1].data["words"].items()),
        ],
    )
