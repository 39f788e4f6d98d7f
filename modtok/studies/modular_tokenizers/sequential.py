"""Sequential multilingual BPE vs concatenation (notebook 02; the paper's §4.2, Algorithm 2, §7, Tables 7 and 10).

:class:`SequentialStudy` holds one corpus's pre-token counts and trains, on first use
and once, every tokenizer the notebook's widgets ask for:

- the monolingual reference BPE of a language (:class:`~.reference.Monolingual`),
- the sequential tokenizer of an ordered tuple of languages
  (:func:`modtok.bpe.sequential.train_sequential`),
- the concatenation of their monolingual BPEs (:func:`modtok.bpe.concat.concatenate`),

and returns what the notebook shows: (a) each subtokenizer's NSL (:meth:`~SequentialStudy.fidelity`),
(b) n-language unions (:meth:`~SequentialStudy.unions`), (c) a word's merge trees under the three
tokenizers and why concatenation differs (:meth:`~SequentialStudy.explore`), (d) the global
vocabulary size by number of languages (:meth:`~SequentialStudy.vocab_growth`).

>>> from modtok.text.data import Corpora
>>> text = {"x_Latn": ["ab abc ab"] * 20, "y_Latn": ["bc abc bc"] * 20}
>>> study = SequentialStudy(Corpora(text, text, "toy"), ["x_Latn", "y_Latn"], k=260)
>>> rows = study.fidelity(["x_Latn", "y_Latn"], "alphabetical", 260)["rows"]   # the first language is a monolingual BPE
>>> [(row["position"], row["reused"], float(row["NSL subtokenizer"])) for row in rows]
[(1, 0, 1.0), (2, 3, 1.3333333333333333)]
>>> float(study.nsl(study.modular("concatenation", ("y_Latn",)).subtokenizer(["y_Latn"]).hf, "y_Latn"))  # = the reference
1.0
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from functools import cached_property

import numpy as np
import regex

from modtok.bpe import standard
from modtok.bpe.concat import concatenate
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.sequential import MultilingualBPE, train_sequential
from modtok.bpe.tree import describe, explain, label, trace
from modtok.cache import Results
from modtok.errors import UsageError
from modtok.evaluation import metrics
from modtok.studies import paper_vs_here
from modtok.studies.contract import Study
from modtok.studies.paper_vs_here import NotMeasured
from modtok.studies.setting import corpus_fields, pretokenization
from modtok.text import data, scripts
from modtok.text.data import Corpora
from modtok.text.pretokenize import count_by_language, pretokenize

from . import PAPER
from .reference import Monolingual

ORDERS = ("alphabetical", "reversed", "random (seed 0)", "random (seed 1)")  # the order widget's choices
KINDS = ("monolingual", "concatenated", "sequential")  # the three tokenizers of a word's merge trees


class SequentialStudy(Study):
    """Sequential BPE, concatenation and monolingual references on ``corpora``'s
    languages ``langs``, per-language budget ``k`` (bytes included), pre-tokenizer
    ``scheme``. The languages are kept sorted by code: the training order of every run
    that names none (the global tokenizer of (a) and (d), :data:`ORDERS`' "alphabetical")
    is the paper's alphabetical order (§4.2, App. A.3; :func:`~modtok.bpe.sequential.train_sequential`
    says how sorting FLORES-200 codes differs from its ISO 639-1 codes)."""

    name, paper, notebook = "modular_tokenizers_sequential", PAPER, "02_sequential_bpe"

    def __init__(self, corpora: Corpora, langs: Sequence[str], k: int, scheme: str = "whitespace"):
        self.corpora, self.langs, self.k, self.scheme = corpora, sorted(langs), k, scheme
        # every tokenizer on disk too (modtok.cache), keyed on the text and the pre-tokenizer
        self.results = Results("sequential", (corpora.train, corpora.eval, scheme))
        self.mono = Monolingual(lambda lang, k: self.results.get("monolingual", (lang, k), lambda: standard.train(
            self.counts[lang], k, scheme)), corpora.eval, encoder=hf_tokenizer)

    @cached_property
    def counts(self) -> dict:
        """Pre-token counts of each language's training text (counted on first use: a kernel
        whose tokenizers all come from the results cache never counts)."""
        return count_by_language(self.corpora.train, self.scheme)

    def setting(self, trials: int) -> dict[str, str]:
        """This run's setting, in the fields of the paper's (``paper_figures.toml``); ``trials``
        random subsets and orders per union size n."""
        size = len(self.sequential(tuple(self.langs)).model)
        fields = corpus_fields(self.corpora, self.langs)
        return {**fields, "data": f"{fields['data']}; sequential BPE in alphabetical order of the FLORES-200 codes",
                "vocabulary": f"k = {self.k:,} tokens per language, bytes included (global tokenizer of {size:,} "
                              f"over {len(self.langs)} languages) vs monolingual BPE of the same k; unions: "
                              f"{trials} random subsets and orders per n",
                "pretokenization": pretokenization(self.scheme, self.corpora)}

    # ------------------------------------------------------------------ tokenizers

    def sequential(self, order: Sequence[str], k: int | None = None) -> MultilingualBPE:
        """Algorithm 2 over the languages of ``order``, in that order."""
        order, k = tuple(order), self.k if k is None else k
        return self._once(("sequential", order, k), lambda: train_sequential(
            {lang: self.counts[lang] for lang in order}, k, order=order, scheme=self.scheme), keep=True)

    def concatenation(self, order: Sequence[str], k: int | None = None) -> MultilingualBPE:
        """The monolingual BPEs of ``order`` (budget ``k`` each), merge lists appended in that order."""
        order, k = tuple(order), self.k if k is None else k
        return self._once(("concatenation", order, k),
                          lambda: concatenate({lang: self.mono(lang, k) for lang in order}, order), keep=True)

    def modular(self, kind: str, order: Sequence[str], k: int | None = None):
        """The :class:`~modtok.artifacts.modular.ModularTokenizer` of ``kind``
        ("sequential" or "concatenation") over ``order``."""
        if kind not in ("sequential", "concatenation"):
            raise UsageError(f"kind {kind!r}: expected 'sequential' or 'concatenation'")
        order, k = tuple(order), self.k if k is None else k
        return self._once(("modular", kind, order, k), lambda: getattr(self, kind)(order, k).modular(), keep=True)

    def nsl(self, tokenizer, lang: str, k: int | None = None):
        """NSL of ``tokenizer`` on ``lang``'s evaluation lines vs the monolingual BPE of budget ``k``."""
        return self.mono.nsl(tokenizer, lang, self.k if k is None else k)

    def ordered(self, langs: Sequence[str], order: str) -> list[str]:
        """The selected ``langs`` in the named ``order`` (one of :data:`ORDERS`; deterministic).

        >>> from modtok.text.data import Corpora
        >>> study = SequentialStudy(Corpora({"x": ["a"], "y": ["b"], "z": ["c"]}, {}, "toy"), ["x", "y", "z"], 300)
        >>> study.ordered(["z", "x"], "alphabetical"), study.ordered(["z", "x"], "reversed")
        (['x', 'z'], ['z', 'x'])
        """
        langs = [lang for lang in self.langs if lang in langs]
        if order == "reversed":
            return langs[::-1]
        if order.startswith("random"):
            random.Random(int(order.split()[-1].rstrip(")"))).shuffle(langs)
        return langs

    # ------------------------------------------------------------------ (a) subtokenizer fidelity

    def rows(self, langs: Sequence[str], order: str, k: int) -> list[dict]:
        """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`) of the
        sequential tokenizer of ``langs`` in ``order`` at budget ``k``: each language under its
        subtokenizer V_ℓ and under the global tokenizer, against the monolingual BPE of ``k``."""
        return self._rows(tuple(self.ordered(langs, order)), k)

    def _rows(self, order: tuple[str, ...], k: int) -> list[dict]:
        """:meth:`rows` of the languages in ``order``, that order."""
        return metrics.language_table_of(*self._encoded(order, k)) if order else []

    def _encoded(self, order: tuple[str, ...], k: int) -> tuple[dict, dict]:
        """The evaluation lines of each language of ``order`` encoded by its subtokenizer and
        the global tokenizer, and by its monolingual reference (:meth:`_rows`' input)."""
        size, mt = len(self.sequential(order, k).model), self.modular("sequential", order, k)
        ev = self.corpora.eval
        encoded = {lang: {"subtokenizer V_ℓ": metrics.Encoded(mt.subtokenizer([lang]).hf, ev[lang], lang),
                          f"global ({size} tokens)": metrics.Encoded(mt.hf, ev[lang], lang)} for lang in order}
        return encoded, {lang: self.mono.encoded(lang, k) for lang in order}

    def measured(self, fidelity: dict, lines: dict[int, list[dict]], growth: list[dict]) -> dict:
        """The value of each claim (:func:`paper_values`)."""
        return paper_values(fidelity, lines, growth)

    def reasons(self, here: dict, fidelity: dict, growth: list[dict], unions: list[dict] = ()) -> dict[str, str]:
        """The measured reason of each claim that does not hold (:func:`reasons`)."""
        return reasons(here, fidelity, growth, unions)

    def fidelity(self, langs: Sequence[str], order: str, k: int) -> dict:
        """The sequential tokenizer of ``langs`` in ``order`` at budget ``k``: per language
        (one row each, in training order) its position, |V_ℓ|, the tokens it reuses from
        earlier languages (bytes excluded), and the NSL of its subtokenizer and of the
        global tokenizer. ``{"order", "k", "rows", "long", "global_size", "line_tokens"}``;
        ``long`` has one row per language x tokenizer for the bars; ``line_tokens[lang]`` the
        tokens of each evaluation line under ``"subtokenizer"``, ``"global"`` and
        ``"reference"`` (the NSLs' intervals over lines, :func:`paper_values`)."""
        order = tuple(self.ordered(langs, order))
        if not order:
            return {"order": (), "k": k, "rows": [], "long": [], "line_tokens": {}}
        res, (encoded, reference) = self.sequential(order, k), self._encoded(order, k)
        table = metrics.language_table_of(encoded, reference)
        rows, long, seen, line_tokens = [], [], set(), {}
        for i, lang in enumerate(order):
            ids = set(res.lang_to_ids[lang])
            sub, glob = (r["nsl"] for r in table if r["lang"] == lang)  # rows(): subtokenizer, then global
            (_, e_sub), (_, e_glob) = encoded[lang].items()
            line_tokens[lang] = {"subtokenizer": e_sub.tokens.tolist(), "global": e_glob.tokens.tolist(),
                                 "reference": reference[lang].tokens.tolist()}  # lists: results compare with ==
            rows.append({
                "position": i + 1, "language": f"{data.lang_name(lang)} ({lang})", "|V_ℓ|": len(ids),
                "reused": len((ids & seen) - set(range(256))), "NSL subtokenizer": sub, "NSL global": glob,
            })
            long += [{"lang": lang, "tokenizer": "subtokenizer V_ℓ", "NSL": sub},
                     {"lang": lang, "tokenizer": f"global ({len(res.model)} tokens)", "NSL": glob}]
            seen |= ids
        return {"order": order, "k": k, "rows": rows, "long": long, "global_size": len(res.model),
                "line_tokens": line_tokens}

    # ------------------------------------------------------------------ (b) n-language unions

    def union_lines(self, n: int, trials: int, seed: int = 0) -> list[dict]:
        """For ``trials`` random ordered subsets of ``n`` languages (seeded by ``seed + n``), one
        record each: ``{"order", "sequential", "concatenation", "reference"}``, the last three
        ``{lang: tokens of each evaluation line}`` of the subset's languages under the union
        subtokenizer of that kind and under the language's monolingual reference (kept in the
        results cache): what the unions' NSLs and their intervals over lines are computed from."""
        def make() -> list[dict]:
            rng, ev, out = random.Random(seed + n), self.corpora.eval, []
            for _ in range(trials):
                order = tuple(rng.sample(self.langs, n))
                trial = {"order": order, "reference": {lang: self.mono.line_tokens(lang, self.k).tolist()
                                                       for lang in order}}
                for kind in ("sequential", "concatenation"):
                    sub = self.modular(kind, order).subtokenizer(list(order)).hf
                    trial[kind] = {lang: metrics.Encoded(sub, ev[lang], lang).tokens.tolist() for lang in order}
                out.append(trial)
            return out
        return self.results.get("union lines", (self.langs, n, trials, seed, self.k), make)

    def unions(self, n: int, trials: int, seed: int = 0) -> dict[str, list[float]]:
        """``{"sequential": [...], "concatenation": [...]}``: for each subset of
        :meth:`union_lines`, the mean NSL over the subset's languages of the union subtokenizer
        of each kind (a point of the notebook's boxes)."""
        return {kind: [float(np.mean([sum(t[kind][lang]) / sum(t["reference"][lang]) for lang in t["order"]]))
                       for t in self.union_lines(n, trials, seed)] for kind in ("sequential", "concatenation")}

    @staticmethod
    def union_table(lines: dict[int, list[dict]]) -> list[dict]:
        """One row per n of ``{n: union_lines(n, ...)}``, per kind: the mean NSL over subsets
        and their languages (Table 7's "mean NSL"), its interval over evaluation lines
        (:func:`union_nsl`), and our std across languages (each language's mean NSL over the
        subsets holding it; Table 7's "±"), over the languages drawn.

        >>> t = {"order": ("a", "b"), "reference": {"a": [2, 2], "b": [1, 1]},
        ...      "sequential": {"a": [2, 2], "b": [1, 1]}, "concatenation": {"a": [2, 4], "b": [1, 1]}}
        >>> row = SequentialStudy.union_table({2: [t]})[0]
        >>> row["n"], row["languages"], row["sequential mean"], row["concatenation mean"], row["concatenation std across languages"]
        (2, 2, 1.0, 1.25, 0.25)
        """
        intervals = union_nsl(lines)
        rows = []
        for n, trials in lines.items():
            langs = sorted({lang for t in trials for lang in t["order"]})
            row = {"n": n, "subsets": len(trials), "languages": len(langs)}
            for kind in ("sequential", "concatenation"):
                by_lang = {lang: [sum(t[kind][lang]) / sum(t["reference"][lang]) for t in trials if lang in t["order"]]
                           for lang in langs}
                m = intervals[f"{kind} {n}"]
                row |= {f"{kind} mean": float(m), f"{kind} interval": (m.shown() if isinstance(m, paper_vs_here.Measured)
                                                                  else "point estimate (lines not parallel)"),
                        f"{kind} std across languages": float(np.std([np.mean(v) for v in by_lang.values()]))}
            rows.append(row)
        return rows

    # ------------------------------------------------------------------ (c) the merge trees of a word

    def union_models(self, lang: str, union: Sequence[str]) -> tuple[dict, tuple[str, ...]]:
        """The three :data:`KINDS` of tokenizer (``BPEModel``) for a word of ``lang`` in the
        union ``union`` (put in ``langs`` order), and that order. The sequential one is the
        restriction of the global tokenizer of every language (the run of (a))."""
        order = tuple(self.ordered(union, ORDERS[0]))
        res = self.sequential(tuple(self.langs))
        ids = sorted(set().union(*(res.lang_to_ids[lang] for lang in order)))
        return {"monolingual": self.mono(lang, self.k), "concatenated": self.concatenation(order).model,
                "sequential": res.model.restricted(ids)}, order

    def word_traces(self, word: str, lang: str, union: Sequence[str]) -> tuple[dict, tuple[str, ...]]:
        """:func:`modtok.bpe.tree.trace` of each pre-token of ``word`` under each of
        :meth:`union_models`, and the union's order."""
        models, order = self.union_models(lang, union)
        pieces = [p.encode() for p in pretokenize(word, self.scheme)]
        return {kind: [trace(m, p) for p in pieces] for kind, m in models.items()}, order

    def explore(self, word: str, space: bool, lang: str, union: Sequence[str]) -> dict:
        """The merge-hierarchy explorer's callback: the trees of ``word`` (after a space when
        ``space``) of ``lang`` in the union of ``union`` and ``lang``, and why concatenation
        differs. ``{"word", "lang", "order", "traces", "segmentation", "reasons", "blocked",
        "blockers"}``: ``blocked`` are the (pre-token, span) of the tokens of the language's own
        tokenizers that cannot form under concatenation, ``blockers`` the concatenated merges in
        the way, ``reasons`` one sentence each (:func:`modtok.bpe.tree.describe`)."""
        word = (" " if space else "") + word.strip()
        union = tuple(sorted(set(union) | {lang}, key=self.langs.index))
        traces, order = self.word_traces(word, lang, union)
        why = explain({k: traces[k] for k in ("monolingual", "sequential")}, traces["concatenated"])
        seg = {kind: [label(n.token) for nodes in traces[kind] for n in nodes] for kind in KINDS}
        refs = {other: self.mono(other, self.k) for other in order}
        return {"word": word, "lang": lang, "order": order, "traces": traces, "segmentation": seg,
                "reasons": [f"{kind}: {describe(b, refs)}" for kind, b in why],
                "blocked": {(b.piece, b.target.span) for _, b in why},
                "blockers": {(b.piece, b.blocker.span) for _, b in why if b.blocker is not None}}

    def words(self, lang: str, top: int | None = None) -> Iterator[str]:
        """``lang``'s most frequent (of the ``top``) pre-tokens that are a space and ≥ 4 letters."""
        for word, _ in self.counts[lang].most_common(top):
            if word.startswith(" ") and len(word) >= 5 and word[1:].isalpha():
                yield word

    def find_word(self, lang: str, union: Sequence[str], top: int = 2000) -> str | None:
        """The explorer's default word: the most frequent of :meth:`words` (of the ``top``)
        whose concatenated segmentation is longer than the sequential one and differs from
        the monolingual one; ``None`` if there is none."""
        for word in self.words(lang, top):
            seg = self.explore(word, True, lang, union)["segmentation"]
            longer = len(seg["concatenated"]) > len(seg["sequential"])
            if longer and seg["concatenated"] != seg["monolingual"]:
                return word
        return None

    def explorer_pair(self) -> tuple[str, str]:
        """The explorer's default union: the first language and the first later one in the same
        script (where concatenation's merges can collide), else the second language.

        >>> from modtok.text.data import Corpora
        >>> SequentialStudy(Corpora({l: ["a"] for l in ("eng_Latn", "rus_Cyrl", "deu_Latn")}, {}, "toy"),
        ...                 ["eng_Latn", "rus_Cyrl", "deu_Latn"], 300).explorer_pair()   # sorted: deu, eng, rus
        ('deu_Latn', 'eng_Latn')
        """
        first = self.langs[0]
        same = [lang for lang in self.langs[1:] if data.script_of(lang) == data.script_of(first)]
        return first, (same or self.langs[1:])[0]

    def default_word(self, lang: str, union: Sequence[str], top: int = 2000) -> tuple[str, bool]:
        """:meth:`find_word`, and ``True``; where there is none, ``lang``'s most frequent of
        :meth:`words` (else its most frequent pre-token) and ``False``: a word to show, for
        which concatenation happens to cut no differently."""
        word = self.find_word(lang, union, top)
        if word is not None:
            return word, True
        return next(self.words(lang), None) or self.counts[lang].most_common(1)[0][0], False

    def script_word(self, lang: str, top: int = 2000, cut: int = 4) -> tuple[str, str]:
        """A word of ``lang`` in its own script for the byte-level trees, and what it is, in words.

        The most frequent of the ``top`` pre-tokens that is 3-12 characters of letters and marks
        of ``lang``'s script only (one of at least 9 bytes first); where there is none, as in a
        script written without spaces, whose pre-tokens run past a word (the bounded schemes cut
        such runs at 16 characters, :mod:`modtok.text.pretokenize`), the first ``cut``
        characters (graphemes) of the first run of its script's letters in its most frequent
        pre-token that has one, and the note says so. Never a word of another script (a Latin
        name in Chinese text); ``("", why)`` when the text has no letter of its script.

        >>> from modtok.text.data import Corpora
        >>> st = SequentialStudy(Corpora({"zho_Hans": ["人人生而自由,在尊严和权利上一律平等。 Sam"] * 3}, {}, "toy"),
        ...                      ["zho_Hans"], 300)
        >>> st.script_word("zho_Hans")
        ('人人生而自由', 'the most frequent word of Chinese in its own script (Hans) of at least 9 bytes')
        >>> st = SequentialStudy(Corpora({"zho_Hans": ["人人生而自由在尊严和权利上一律 Sam"] * 3}, {}, "toy"),
        ...                      ["zho_Hans"], 300)
        >>> st.script_word("zho_Hans")
        ('人人生而', 'Chinese is written without spaces: its pre-tokens run past a word (the most frequent: 15 characters); shown: the first 4 characters of its first run of Hans letters')
        """
        script = data.script_of(lang)
        letters = regex.compile(r"[\p{L}\p{M}]+")
        own = lambda w: letters.fullmatch(w) is not None and scripts.script_share(w, script) == 1.0  # noqa: E731
        words = [w for w, _ in self.counts[lang].most_common(top) if 3 <= len(w.strip()) <= 12 and own(w.strip())]
        long = [w for w in words if len(w.strip().encode()) >= 9]
        if words:
            return (long or words)[0], (f"the most frequent word of {data.lang_name(lang)} in its own script ({script})"
                                        + (" of at least 9 bytes" if long else ""))
        for pre, _ in self.counts[lang].most_common(top):
            run = next((r for r in letters.findall(pre) if scripts.script_share(r, script) == 1.0), None)
            if run is not None:
                piece = "".join(regex.findall(r"\X", run)[:cut])
                return piece, (f"{data.lang_name(lang)} is written without spaces: its pre-tokens run past a word "
                               f"(the most frequent: {len(pre.strip())} characters); shown: "
                               f"the first {cut} characters of its first run of {script} letters")
        return "", f"no pre-token of {data.lang_name(lang)} has a letter of its script ({script})"

    # ------------------------------------------------------------------ (d) global vocabulary growth

    def vocab_growth(self) -> list[dict]:
        """Global vocabulary size after the first n languages (n = 1..), one row each:
        sequential (V_1 ∪ … ∪ V_n of the run over every language: language i depends only on
        the languages before it), concatenation (distinct tokens of the n monolingual BPEs)
        and the bound without sharing, 256 + n·(k − 256); and "no sharing, as trained", 256 +
        Σ(|V_ℓ| − 256) over the n languages' own vocabularies: below the bound where a language's
        text ran out of pairs before k (a corpus of a few KB a language), so that what sharing
        saved (this column minus sequential) is not confused with what the text never gave."""
        res = self.sequential(tuple(self.langs))
        rows = []
        for n in range(1, len(self.langs) + 1):
            first = self.langs[:n]
            seq = set().union(*(res.lang_to_ids[lang] for lang in first))
            cat = set().union(*(self.mono(lang, self.k).vocab for lang in first))
            rows.append({"n": n, "added": first[-1], "sequential": len(seq), "concatenation": len(cat),
                         "no sharing": 256 + n * (self.k - 256),
                         "no sharing, as trained": 256 + sum(len(res.lang_to_ids[lang]) - 256 for lang in first)})
        return rows


def global_vs_subtokenizer(rows: Sequence[dict]) -> str:
    """How the global tokenizer compares with each language's subtokenizer (fidelity ``rows``):
    on how many languages it is shorter, as long, longer. As long is its own count: languages
    that share no token (disjoint scripts) encode the same with both, and were counted as
    "shorter" (6 of 6 on a UDHR corpus where all twelve NSLs were 1.000).

    >>> global_vs_subtokenizer([{"NSL global": 0.9, "NSL subtokenizer": 1.0}, {"NSL global": 1.0, "NSL subtokenizer": 1.0}])
    'global tokenizer shorter than the subtokenizer on 1, as long on 1, longer on 0 of 2 languages'
    """
    shorter = sum(r["NSL global"] < r["NSL subtokenizer"] for r in rows)
    same = sum(r["NSL global"] == r["NSL subtokenizer"] for r in rows)
    return (f"global tokenizer shorter than the subtokenizer on {shorter}, as long on {same}, longer on "
            f"{len(rows) - shorter - same} of {len(rows)} languages")


def segmentation_rows(result: dict) -> list[dict]:
    """The explorer's table: one row per tokenizer of :data:`KINDS` with its tokens and their count.

    >>> segmentation_rows({"segmentation": {"monolingual": ["ab"], "concatenated": ["a", "b"], "sequential": ["ab"]}})[1]
    {'tokenizer': 'concatenated', 'tokens': 'a | b', 'count': 2}
    """
    seg = result["segmentation"]
    return [{"tokenizer": kind, "tokens": " | ".join(seg[kind]), "count": len(seg[kind])} for kind in KINDS]


def union_nsl(lines: dict[int, list[dict]], largest: bool = False) -> dict:
    """Table 7's aggregation of ``{n: SequentialStudy.union_lines(n, ...)}``, with intervals over
    evaluation lines (:func:`modtok.studies.paper_vs_here.over_lines`: line ``i`` of every
    language, subset and kind drawn together): ``"<kind> <n>"``, the mean NSL over the subsets
    and their languages for each n; with ``largest``, the claims' values instead: the largest of
    those means over n >= 2 per kind (``union_nsl_max``, ``concatenation_nsl_max``) and
    ``sequential_vs_concatenation``, concatenation minus sequential averaged over n >= 2, each
    bootstrapped whole. On text that is not parallel, point estimates (floats).

    >>> t = {"order": ("a",), "reference": {"a": [2, 2]}, "sequential": {"a": [2, 2]}, "concatenation": {"a": [2, 4]}}
    >>> union_nsl({2: [t]}, largest=True)["concatenation_nsl_max"].value
    1.5
    """
    columns = {f"reference|{lang}": tok for trials in lines.values() for t in trials for lang, tok in t["reference"].items()}
    columns |= {f"{kind}|{n}|{i}|{lang}": tok for n, trials in lines.items() for i, t in enumerate(trials)
                for kind in ("sequential", "concatenation") for lang, tok in t[kind].items()}

    def means(tot) -> dict:  # "<kind> <n>": the mean over subsets and their languages of tokens / reference tokens
        return {f"{kind} {n}": np.mean([tot[f"{kind}|{n}|{i}|{lang}"] / tot[f"reference|{lang}"]
                                        for i, t in enumerate(trials) for lang in t["order"]], axis=0)
                for n, trials in lines.items() for kind in ("sequential", "concatenation")}

    def claims(tot) -> dict:
        m, multi = means(tot), [n for n in lines if n >= 2]
        return {"union_nsl_max": np.max([m[f"sequential {n}"] for n in multi], axis=0),
                "concatenation_nsl_max": np.max([m[f"concatenation {n}"] for n in multi], axis=0),
                "sequential_vs_concatenation": np.mean([m[f"concatenation {n}"] - m[f"sequential {n}"]
                                                        for n in multi], axis=0)}
    return paper_vs_here.over_lines(columns, claims if largest else means)


def paper_values(fidelity: dict, lines: dict[int, list[dict]], growth: list[dict]) -> dict:
    """The measured values of the ``modular_tokenizers_sequential`` claims (``paper_figures.toml``)
    from :meth:`SequentialStudy.fidelity`, ``{n: SequentialStudy.union_lines(n, ...)}`` and
    :meth:`SequentialStudy.vocab_growth`. The worst subtokenizer's and global tokenizer's NSL
    carry their interval over evaluation lines when ``fidelity`` has its ``line_tokens``
    (:func:`modtok.studies.paper_vs_here.over_lines`: the maximum over languages bootstrapped
    whole); so do the unions (:func:`union_nsl`), aggregated as the paper's Table 7: the mean
    over subsets (and orders) for each n, "max" the largest of those means over n >= 2. Their
    rules' tolerance is the paper's std across languages, which our point value is compared
    with; :meth:`SequentialStudy.union_table` shows our std across languages beside it.

    >>> fid = {"rows": [{"NSL subtokenizer": 1.0, "NSL global": 0.9}, {"NSL subtokenizer": 1.03, "NSL global": 0.95}]}
    >>> one = {"order": ("a",), "reference": {"a": [1]}, "sequential": {"a": [1]}, "concatenation": {"a": [1]}}
    >>> two = {"order": ("a", "b"), "reference": {"a": [1], "b": [1]}, "sequential": {"a": [1], "b": [1]},
    ...        "concatenation": {"a": [1], "b": [2]}}
    >>> growth = [{"sequential": 500, "no sharing": 500}, {"sequential": 800, "no sharing": 1000}]
    >>> {k: round(float(v), 3) for k, v in paper_values(fid, {1: [one], 2: [two]}, growth).items()}
    {'subtokenizer_nsl_max': 1.03, 'global_nsl_max': 0.95, 'union_nsl_max': 1.0, 'concatenation_nsl_max': 1.5, 'sequential_vs_concatenation': 0.5, 'vocab_growth_share': 0.8}
    >>> paper_values(fid, {1: [one]}, growth)["union_nsl_max"].reason
    'needs unions of at least 2 languages'
    """
    rows = fidelity["rows"]
    if fidelity.get("line_tokens"):  # the worst NSL over languages with its interval over lines
        columns = {f"{name}|{lang}": t for lang, by in fidelity["line_tokens"].items() for name, t in by.items()}
        langs = list(fidelity["line_tokens"])
        out: dict = paper_vs_here.over_lines(columns, lambda t: {
            f"{name}_nsl_max": np.max([t[f"{name}|{lang}"] / t[f"reference|{lang}"] for lang in langs], axis=0)
            for name in ("subtokenizer", "global")})
    else:
        out = {"subtokenizer_nsl_max": float(max(r["NSL subtokenizer"] for r in rows)),
               "global_nsl_max": float(max(r["NSL global"] for r in rows))}
    if any(n >= 2 for n in lines):  # a "union" of one language is the language's own subtokenizer
        out |= union_nsl(lines, largest=True)
    else:
        none = NotMeasured("needs unions of at least 2 languages")
        out |= {"union_nsl_max": none, "concatenation_nsl_max": none, "sequential_vs_concatenation": none}
    out["vocab_growth_share"] = growth[-1]["sequential"] / growth[-1]["no sharing"]
    return out


def reasons(here: dict, fidelity: dict, growth: list[dict], unions: list[dict] = ()) -> dict[str, str]:
    """A measured reason for each claim of ``here`` (:func:`paper_values`) that does not
    hold: for the subtokenizer's and the global tokenizer's worst NSL, the language, its place
    in the training order and how many of its tokens it took over from the languages before it
    (learnt on their text, not on its own); for the vocabulary growth, the tokens shared and
    those the languages' text never gave (vocabularies short of k: "no sharing, as trained"); for
    the unions (``unions``: :meth:`SequentialStudy.union_table`'s rows), each n's means with
    their intervals and our std across languages (the paper's is the rule's tolerance).

    >>> fid = {"order": ("a", "b"), "rows": [{"language": "A (a)", "position": 1, "|V_ℓ|": 300, "reused": 0,
    ...        "NSL subtokenizer": 1.0, "NSL global": 1.0}, {"language": "B (b)", "position": 2, "|V_ℓ|": 300,
    ...        "reused": 20, "NSL subtokenizer": 1.08, "NSL global": 1.02}]}
    >>> growth = [{"sequential": 300, "no sharing": 300}, {"sequential": 580, "no sharing": 644}]
    >>> reasons(paper_values(fid, {}, growth), fid, growth)["subtokenizer_nsl_max"]
    "the worst is B (b), trained 2nd of 2: 20 of its 300 tokens (bytes aside) were learnt on the languages before it, and its subtokenizer has 1.080 times the monolingual BPE's tokens"
    >>> short = [{"sequential": 300, "no sharing": 1000, "no sharing, as trained": 300},
    ...          {"sequential": 579, "no sharing": 1744, "no sharing, as trained": 580}]
    >>> reasons({"vocab_growth_share": 579 / 1744}, fid, short)["vocab_growth_share"]
    'the global vocabulary has 579 of the 1,744 of 2 languages at k without sharing: 1 fewer because the languages share tokens, 1,164 because their own vocabularies stopped short of k (their text ran out of pairs)'
    """
    claims = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_sequential")}
    failing = [k for k, v in here.items() if not isinstance(v, NotMeasured) and claims[k].verdict(v) == "does not hold"]
    rows = fidelity["rows"]

    def worst(column: str, what: str) -> str:
        row = max(rows, key=lambda r: r[column])
        return (f"the worst is {row['language']}, trained {_ordinal(row['position'])} of {len(rows)}: {row['reused']} of "
                f"its {row['|V_ℓ|']} tokens (bytes aside) were learnt on the languages before it, and {what} has "
                f"{row[column]:.3f} times the monolingual BPE's tokens")

    out = {}
    for key in failing:
        if key == "subtokenizer_nsl_max":
            out[key] = worst("NSL subtokenizer", "its subtokenizer")
        elif key == "global_nsl_max":
            out[key] = worst("NSL global", "the global tokenizer")
        elif key in UNION_KINDS and unions:
            kinds = UNION_KINDS[key]
            out[key] = "; ".join(f"n = {r['n']} ({r['subsets']} subsets, {r['languages']} languages): " + ", ".join(
                f"{kind} {r[f'{kind} mean']:.3f} {r[f'{kind} interval']}, std across languages "
                f"{r[f'{kind} std across languages']:.3f}" for kind in kinds) for r in unions if r["n"] >= 2)
        elif key == "vocab_growth_share":
            last = growth[-1]
            unshared = last.get("no sharing, as trained", last["no sharing"])
            if unshared < last["no sharing"]:  # the text ran out before k: no sharing explains that part
                out[key] = (f"the global vocabulary has {last['sequential']:,} of the {last['no sharing']:,} of "
                            f"{len(growth)} languages at k without sharing: {unshared - last['sequential']:,} fewer "
                            f"because the languages share tokens, {last['no sharing'] - unshared:,} because their own "
                            "vocabularies stopped short of k (their text ran out of pairs)")
            else:
                out[key] = (f"the {len(growth)} languages share tokens: the global vocabulary has {last['sequential']:,} "
                            f"of the {last['no sharing']:,} it would have without sharing")
    return out


# the union claims and the kinds of union their reason shows
UNION_KINDS = {"union_nsl_max": ("sequential",), "concatenation_nsl_max": ("concatenation",),
               "sequential_vs_concatenation": ("sequential", "concatenation")}


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
