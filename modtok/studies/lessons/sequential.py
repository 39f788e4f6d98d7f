"""Notebook 02, learn it small: Algorithm 2 (sequential BPE) and why concatenation breaks a union.

:func:`reference` is a naive Algorithm 2 (modular tokenizers paper, §4.2; the rules and the
budget of :mod:`modtok.bpe.sequential`) over :class:`~modtok.bpe.reference.ReferenceEngine`,
recording at each iteration the most frequent token not in V_i with its count f_u, the most
frequent pair with its count f_b, and the branch: *reuse* (f_u >= f_b: add the token and its
ancestors, no new merge) or *merge* (learn the pair). Its result equals
:func:`modtok.bpe.sequential.train_sequential`'s (the test suite checks it).

The docstring example of :mod:`modtok.bpe.sequential`: y reuses x's ``ab`` (4 >= 4) and
then learns ``abc``:

>>> steps = trace()
>>> [(s.data["lang"], s.data["branch"], s.data["token"]) for s in steps if s.data.get("branch")]
[('x', 'merge', 'ab'), ('y', 'reuse', 'ab'), ('y', 'merge', 'abc')]
>>> reference()["vocab"]
{'x': ['ab'], 'y': ['ab', 'abc']}

Concatenating monolingual BPEs breaks a union: x learns ``bc`` first, y learns ``ab`` then
``abc``; in the union x ∪ y the merge b+c outranks a+b, so y's word ``abc`` comes out in
two pieces, although both languages' tokens are there. Sequential BPE trains y on text
already cut by x's ``bc``, so y learns ``ab``, reuses ``bc`` and learns ``a+bc``:

>>> broken = union_demo()
>>> broken["concat"]["y alone"], broken["concat"]["x ∪ y"], broken["sequential"]["x ∪ y"]
(['abc'], ['a', 'bc'], ['abc'])
"""

from __future__ import annotations

from collections import Counter

from modtok.bpe.concat import train_concat
from modtok.bpe.model import BPEModel
from modtok.bpe.reference import ReferenceEngine
from modtok.bpe.sequential import train_sequential
from modtok.studies.lessons.steps import Prediction, Step, comparison, label, pills, table

TOY = {"x": Counter({"ab": 5}), "y": Counter({"abc": 4})}  # bpe/sequential.py's docstring
K = 258  # per-language budget, the 256 bytes included: two tokens each
UNION_TOY = {"x": Counter({"bc": 5}), "y": Counter({"ab": 4, "abc": 3})}  # three words
UNION_K = 259  # three tokens each: enough for y to learn abc on top of x's bc


def reference(counts_by_lang=TOY, k: int = K) -> dict:
    """Naive Algorithm 2: ``{"model", "vocab": {lang: [token text]}, "ids", "steps": [dict]}``."""
    model = BPEModel([], "whitespace")
    ids, records = {}, []
    for lang, counts in counts_by_lang.items():
        ref = ReferenceEngine({lang: counts})
        for (a, b), c in zip(model.merges, model.results):  # segment with the global merges M
            ref.merge(a, b, c)
        vocab = set(range(256))
        while len(vocab) < k:
            tokens = ref.token_counts()
            outside = sorted(
                (t for t in tokens if t not in vocab and tokens[t]), key=lambda t: (-tokens[t], t)
            )
            t, f_u = (outside[0], tokens[outside[0]]) if outside else (-1, 0)
            best = ref.best_pair()
            f_b = best[2] if best else 0
            if f_u == 0 and f_b == 0:
                break
            branch = "reuse" if f_u >= f_b else "merge"  # ties: the unigram rule
            pairs = ref.pair_counts()
            # the state the rule sees, as bytes: tokens by id, pairs in tie-break order (exercises, rung 4)
            state = {
                "tokens": {model.vocab[x]: tokens[x] for x in sorted(tokens) if tokens[x]},
                "pairs": {
                    (model.vocab[x], model.vocab[y]): pairs[(x, y)]
                    for x, y in sorted(pairs, key=lambda p: (ref.rank(p[0]), ref.rank(p[1])))
                },
                "vocab": {model.vocab[x] for x in vocab},
            }
            if branch == "reuse":
                missing = model.ancestors(t) - vocab
            else:
                missing = (model.ancestors(best[0]) | model.ancestors(best[1])) - vocab
            if len(vocab) + len(missing) + (branch == "merge") > k:
                break
            vocab |= missing
            record = {
                "lang": lang,
                "f_u": f_u,
                "f_b": f_b,
                "branch": branch,
                "state": state,
                "unigram": label(model.vocab[t]) if t >= 0 else None,
                "bigram": (label(model.vocab[best[0]]), label(model.vocab[best[1]])) if best else None,
            }
            if branch == "merge":
                c = model.add_merge(best[0], best[1])
                ref.merge(best[0], best[1], c)
                vocab.add(c)
                t = c
            record["token"] = label(model.vocab[t])
            record["answer"] = (
                ("reuse", model.vocab[t])
                if branch == "reuse"
                else ("merge", (model.vocab[best[0]], model.vocab[best[1]]))
            )
            record["segments"] = {
                bytes(b for x in seg for b in model.vocab[x]).decode(): [label(model.vocab[x]) for x in seg]
                for seg in ref.segs[lang]
            }
            records.append(record)
        ids[lang] = sorted(vocab)
    return {
        "model": model,
        "ids": ids,
        "steps": records,
        "vocab": {lang: [label(model.vocab[i]) for i in v[256:]] for lang, v in ids.items()},
    }


def engine_run(counts_by_lang=TOY, k: int = K) -> dict:
    """The library's :func:`~modtok.bpe.sequential.train_sequential` on the same toy."""
    res = train_sequential(counts_by_lang, k, scheme="whitespace")
    return {
        "merges": res.model.merges,
        "ids": res.lang_to_ids,
        "vocab": {lang: [label(res.model.vocab[i]) for i in v[256:]] for lang, v in res.lang_to_ids.items()},
    }


def trace(counts_by_lang=TOY, k: int = K) -> list[Step]:
    """One step per iteration of Algorithm 2, then the union example."""
    run = reference(counts_by_lang, k)
    steps = [
        Step(
            "the corpora",
            f"languages in order {', '.join(counts_by_lang)}; budget k = {k} "
            f"({k - 256} tokens beyond the bytes) per language",
            [
                table(
                    ["language", "word", "count"],
                    [[lang, w, n] for lang, c in counts_by_lang.items() for w, n in c.items()],
                )
            ],
            {},
        )
    ]
    for i, r in enumerate(run["steps"], 1):
        fired = (
            f"f_u = {r['f_u']} ≥ f_b = {r['f_b']}: reuse {r['token']} (no new merge)"
            if r["branch"] == "reuse"
            else f"f_u = {r['f_u']} < f_b = {r['f_b']}: learn the merge "
            f"{' + '.join(r['bigram'])} → {r['token']}"
        )
        rows = [
            ["most frequent token not in V", r["unigram"] or "—", r["f_u"]],
            ["most frequent pair", " + ".join(r["bigram"]) if r["bigram"] else "—", r["f_b"]],
        ]
        steps.append(
            Step(
                f"{r['lang']}, step {i}",
                fired,
                [
                    table(["Algorithm 2", "which", "count"], rows, mark=0 if r["branch"] == "reuse" else 1),
                    *[pills(repr(w), s) for w, s in r["segments"].items()],
                ],
                r,
            )
        )
    demo = union_demo()
    for method in ("concat", "sequential"):
        steps.append(
            Step(
                f"the union x ∪ y, {method}",
                demo["notes"][method],
                [pills(f"'abc' under {name}", toks) for name, toks in demo[method].items()],
                {"method": method, **demo[method]},
            )
        )
    return steps


def _encode(model: BPEModel, ids, word: str) -> list[str]:
    sub = model.restricted(ids)
    return [label(sub.vocab[t]) for t in sub.encode_bytes(word.encode())]


def union_demo(counts_by_lang=UNION_TOY, k: int = UNION_K, word: str = "abc") -> dict:
    """``word`` under y alone and under x ∪ y, for concatenated and for sequential BPE."""
    out = {}
    for method, res in (
        ("concat", train_concat(counts_by_lang, k, scheme="whitespace")),
        ("sequential", train_sequential(counts_by_lang, k, scheme="whitespace")),
    ):
        ids = res.lang_to_ids
        out[method] = {
            "y alone": _encode(res.model, ids["y"], word),
            "x ∪ y": _encode(res.model, sorted(set(ids["x"]) | set(ids["y"])), word),
        }
        out[f"{method} merges"] = [
            (label(res.model.vocab[a]), label(res.model.vocab[b])) for a, b in res.model.merges
        ]
    out["notes"] = {
        "concat": f"merges {out['concat merges']}: x's b+c ranks before y's a+b, so in the union "
        f"{word!r} splits as {out['concat']['x ∪ y']}",
        "sequential": f"merges {out['sequential merges']}: y was trained on text already cut by x's merges, "
        f"so its tokens are reachable in any union",
    }
    return out


def prediction(counts_by_lang=TOY, k: int = K) -> Prediction:
    """ "Does y reuse x's token or learn a merge?" at y's first iteration."""
    run = reference(counts_by_lang, k)
    second = next(r for r in run["steps"] if r["lang"] == list(counts_by_lang)[1])
    return Prediction(
        f"Language {second['lang']} starts: does Algorithm 2 reuse {second['unigram']} or learn a merge?",
        ["reuse", "merge"],
        second["branch"],
        f"f_u = {second['f_u']} (token {second['unigram']}) vs f_b = {second['f_b']} "
        f"(pair {' + '.join(second['bigram'])}): ties go to the unigram rule",
    )


def engine_step(counts_by_lang=TOY, k: int = K) -> Step:
    """The toy through :func:`~modtok.bpe.sequential.train_sequential` next to the reference's result."""
    ref, engine = reference(counts_by_lang, k), engine_run(counts_by_lang, k)
    return comparison(
        "the engine (bpe.sequential.train_sequential)",
        [
            ("global merges", ref["model"].merges, engine["merges"]),
            *((f"V_{lang}", ref["vocab"][lang], engine["vocab"][lang]) for lang in counts_by_lang),
        ],
    )
