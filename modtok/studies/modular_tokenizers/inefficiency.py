"""Why one vocabulary fails many languages (notebook 01; the paper's §3.1, §5.1, Tables 1, 2, 10).

A joint byte-level BPE trained on a set of languages with one total budget V, and the
deployed tokenizers, against a monolingual HF BPE of k tokens per language
(:class:`~.reference.Monolingual`), by NSL; and the premium of one language over
English on parallel lines (a measure of this project, not of the paper).

>>> from modtok.text.data import Corpora
>>> text = {"eng_Latn": ["aa ab aab"] * 30, "deu_Latn": ["bb ba bba"] * 30}
>>> study = InefficiencyStudy(Corpora(text, text, "toy"), k=260)   # references: 4 merges each
>>> result = study.nsl_table(["eng_Latn", "deu_Latn"], 262)         # a joint BPE of 6 merges
>>> [(row["language"], row["NSL joint BPE 0k"]) for row in result["rows"]]
[('English', 1.25), ('German', 1.25)]
>>> study.joint(("eng_Latn", "deu_Latn"), 262) is study.joint(["eng_Latn", "deu_Latn"], 262)  # trained once
True
>>> here = paper_values(result)                                       # the notebook's "paper vs here" values
>>> here["joint_mean_nsl"].value, here["deployed_max_nsl"].reason   # with its interval over lines
(1.25, "no deployed tokenizer installed (pip install 'modtok[deployed]')")
>>> paper_joint_budget(21, 24_000)                                   # the paper's Multi 21 at 128k
128000
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from modtok.artifacts import baselines
from modtok.bpe import standard
from modtok.bpe.engine import Engine
from modtok.bpe.export import hf_tokenizer
from modtok.bpe.model import BPEModel
from modtok.cache import AHEAD, Results, ahead
from modtok.evaluation import metrics
from modtok.mixture.dev import LinePieces
from modtok.studies import paper_vs_here
from modtok.studies.contract import Study
from modtok.studies.paper_vs_here import NotMeasured
from modtok.studies.setting import corpus_fields, pretokenization
from modtok.text import data
from modtok.text.data import Corpora
from modtok.text.lexer import WordCounts
from modtok.text.pretokenize import count_arrays

from . import PAPER
from .reference import Monolingual

# The paper's joint baseline "Multi 21" of Tables 1 and 10: 128k tokens over 21 languages whose
# monolingual references have 24k each, i.e. about a quarter of a reference budget per language.
PAPER_JOINT_SHARE = 128 / (21 * 24)
REFERENCE = "reference"  # the monolingual reference's key in nsl_table's line_tokens


def paper_joint_budget(n_langs: int, k: int, step: int = 2_000) -> int:
    """The joint budget V that gives each of ``n_langs`` languages the paper's share
    (:data:`PAPER_JOINT_SHARE`) of a reference budget ``k``, rounded to ``step``."""
    return max(step, round(PAPER_JOINT_SHARE * n_langs * k / step) * step)


class InefficiencyStudy(Study):
    """Joint BPE of any language subset and budget (cached), and the ``deployed``
    tokenizers (``{name: tokenizer}``), against monolingual HF BPE of ``k`` tokens. Both
    BPEs pre-tokenize with ``scheme`` (default ``"whitespace"``: the notebook's setting since
    it was written, kept explicit when the project's default became ``llama3``)."""

    name, paper, notebook = "modular_tokenizers_inefficiency", PAPER, "01_multilingual_inefficiency"

    def __init__(self, corpora: Corpora, k: int, deployed: Mapping[str, object] | None = None,
                 scheme: str = "whitespace", train_at: int | None = None):
        self.corpora, self.k, self.deployed, self.scheme = corpora, k, dict(deployed or {}), scheme
        # every joint budget up to train_at of the study's whole language set is cut from one training
        # at train_at (notebook 01 passes its slider's maximum: a budget move of the default view never
        # trains, see joint()); a subset trains at the budget asked
        self.train_at = train_at
        # the trainings on disk too (modtok.cache), keyed on the text and the pre-tokenizer
        self.results = Results("inefficiency", (corpora.train, scheme))
        self.mono = Monolingual(lambda lang, k: self.results.get("monolingual", (lang, k), lambda: baselines.train_hf_bpe(
            corpora.train[lang], k, scheme)), corpora.eval)
        self._joint: dict[tuple[tuple[str, ...], int], object] = {}  # (langs, budget) -> HF tokenizer
        self._trained: dict[tuple[str, ...], tuple[int, BPEModel]] = {}  # langs -> (size trained at, model)
        self._engine: tuple[tuple[str, ...], Engine, BPEModel] | None = None  # the last subset's, to train on

    def _test_pieces(self) -> LinePieces:
        """Every language's test lines cut into pre-tokens once, by the pipeline of every joint BPE of
        the study (the scheme's; the export of the bytes alone stands for them), and kept in the
        results cache: what :meth:`_nsl_table` counts each joint BPE's tokens per line from."""
        def cut() -> LinePieces:
            return LinePieces.of(hf_tokenizer(BPEModel([], self.scheme)), self.corpora.eval)
        return self._once(("test pieces",), lambda: self.results.get("test pieces", self.corpora.eval, cut))

    def _kept(self, name: str, tokenizer, lang: str) -> metrics.Encoded:
        """The Encoded test lines of ``lang`` under a tokenizer that never changes (a deployed one,
        a reference), kept for the kernel (a widget change encodes only the new joint BPE), its
        token counts (all NSL reads) set from :meth:`_test_tokens`: read back from the results
        cache, nothing is encoded and a deployed tokenizer is not even loaded."""
        def make() -> metrics.Encoded:
            return _with_tokens(metrics.Encoded(tokenizer, self.corpora.eval[lang], lang),
                                self._test_tokens(name, tokenizer, lang))
        return self._once(("encoded", name, lang), make)

    def _test_tokens(self, name: str, tokenizer, lang: str) -> np.ndarray:
        """Tokens per test line of ``lang`` under ``tokenizer``, in the results cache: a deployed
        tokenizer's for every language at once (one entry each, keyed on its handle, i.e. its
        file: ``deployed.Lazy``, and on the test text), a reference's per language (keyed on its
        language and budget: the training text is the study's). 01's second Run All spent 31 s
        encoding the ten deployed tokenizers and 15 s loading them (smoke, load 10-16)."""
        ev = self.corpora.eval
        if name in self.deployed:
            return self._once(("deployed test tokens", name), lambda: self.results.get(
                "deployed test tokens", (tokenizer, ev), lambda: {
                    lang: metrics.token_counts(tokenizer, lines) for lang, lines in ev.items()}))[lang]
        return self.results.get("reference test tokens", (name, lang, ev[lang]),
                                lambda: metrics.token_counts(tokenizer, ev[lang]))

    def joint(self, langs: Sequence[str], budget: int):
        """Byte-level BPE of vocab_size ``budget`` on the training text of ``langs``, as an
        HF tokenizer: the export of :meth:`joint_model`, made once per (languages, budget).

        >>> from modtok.text.data import Corpora
        >>> text = {"eng_Latn": ["aa ab aab"] * 30, "deu_Latn": ["bb ba bba"] * 30}
        >>> study = InefficiencyStudy(Corpora(text, text, "toy"), k=260)
        >>> study.joint(["eng_Latn"], 261).get_vocab_size()
        261
        """
        key = (tuple(langs), budget)
        if key not in self._joint:
            self._joint[key] = hf_tokenizer(self.joint_model(langs, budget))
        return self._joint[key]

    def joint_model(self, langs: Sequence[str], budget: int) -> BPEModel:
        """The joint BPE of ``langs`` at ``budget`` as a :class:`~modtok.bpe.model.BPEModel`: modtok's
        standard BPE (:mod:`modtok.bpe.standard`) from each language's pre-token counts (counted once),
        stopping, as HF ``BpeTrainer`` does, when no pair occurs twice — the merges HF's trainer makes
        on the same text (``tests/test_study_modular_tokenizers.py``), 4x faster: a new subset of the
        39 pool languages at 128k, 1M characters each, took 9.9 s + 0.8 s export against 41.8 s for
        ``train_hf_bpe`` (2 cores, session 15).

        A smaller budget of the same languages is a prefix of a larger one's merges
        (:meth:`~modtok.bpe.model.BPEModel.prefix`: the training stopped there), so once a larger
        budget is trained a smaller one is cut from it: moving notebook 01's budget slider down
        answers without training. The study's whole language set (``corpora.languages``, the
        notebook's default view, trained by its Run All) is trained at ``train_at`` (≥ ``budget``),
        so that moving the slider up does not train either; so is a subset whose training at
        ``train_at`` is in the results cache (``make demo`` trains the subsets that leave one
        language out there, :meth:`subsets_ahead`). Any other subset trains at the budget asked,
        and a larger budget later continues that training where it stopped (the kernel keeps the
        last subset's engine, about 0.4 GB for 38 of the pool's languages) instead of training
        again: a new 38-language subset at its 78k took 8.4 s when it trained at the 128k ceiling
        (session 21, quiet), of which 0.55 s were the 50k merges above 78k.

        >>> from modtok.text.data import Corpora
        >>> text = {"eng_Latn": ["aa ab aab"] * 30, "deu_Latn": ["bb ba bba"] * 30}
        >>> study = InefficiencyStudy(Corpora(text, text, "toy"), k=260, train_at=268)
        >>> len(study.joint_model(["eng_Latn"], 258)), study.trained(["eng_Latn"])        # a subset: as asked
        (258, 258)
        >>> len(study.joint_model(["eng_Latn"], 260)), study.trained(["eng_Latn"])        # trained on
        (260, 260)
        >>> len(study.joint_model(["eng_Latn", "deu_Latn"], 261)), study.trained(["eng_Latn", "deu_Latn"])
        (261, 268)
        """
        langs = tuple(langs)
        asked, model = self._trained.get(langs, (0, None))
        if budget > asked:  # nothing trained this far for these languages in this kernel
            ceiling = max(budget, self.train_at or 0)
            at = ceiling if langs == tuple(self.corpora.languages) or self.results.stored(
                "joint", (langs, ceiling)) else budget
            model = self.results.get("joint", (langs, at), lambda: self._train(langs, at))
            self._trained[langs] = (at, model)
        return model.prefix(budget)

    def _train(self, langs: tuple[str, ...], size: int) -> BPEModel:
        """:meth:`joint_model`'s training of ``langs`` to ``size`` tokens: on from the kept engine
        when it holds a smaller training of the same languages, else from a new one; the engine
        is kept when ``size`` is below ``train_at`` (a larger budget may follow)."""
        kept = self._engine
        if kept is not None and kept[0] == langs and len(kept[2]) < size:
            engine, model = kept[1], kept[2]
        else:
            self._engine = None  # its memory before the new engine's
            # one column of summed counts: the merges depend on the totals only (the engine's
            # tie-break reads no word order), and the engine's per-language columns cost 2.1 s of
            # a 38-language subset's 10.6 s
            engine = Engine.from_word_counts(self._summed(langs), ["all"], capacity=size + 1)
            model = BPEModel([], self.scheme)
        standard.learn(engine, model, size, min_frequency=2)
        self._engine = (langs, engine, model) if size < (self.train_at or 0) else None
        return model.copy()  # the kept one grows on; what joint_model hands out does not

    def trained(self, langs: Sequence[str]) -> int:
        """The vocabulary size the joint BPE of ``langs`` was trained at in this kernel (0: not yet):
        every budget up to it is a prefix of that training (:meth:`joint`)."""
        return self._trained.get(tuple(langs), (0, None))[0]

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, dict[str, tuple[np.ndarray, np.ndarray]]]:
        """Every language's pre-token counts of its training text, counted once for all (the compiled
        lexer, :func:`~modtok.text.pretokenize.count_arrays`) and kept in the results cache:
        ``(data, lengths, {lang: (words, counts)})``, the distinct words' UTF-8 bytes as
        :class:`~modtok.text.lexer.WordCounts` has them and, per language, the words it holds and
        their counts (the dense words x languages matrix, 39 columns, is dropped: a subset reads
        only its columns' rows). Counting a Counter per language and adding them took 1.2 s of
        a 20-language subset at load 6 (session 19)."""
        def count():
            wc = count_arrays(self.corpora.train, self.scheme)
            columns = {}
            for col, lang in enumerate(wc.languages):
                words = np.flatnonzero(wc.counts[:, col])
                columns[lang] = (words, wc.counts[words, col])
            return wc.data, wc.lengths, columns
        return self._once(("pretoken arrays",), lambda: self.results.get("pretoken arrays", (), count))

    def _summed(self, langs: tuple[str, ...]) -> WordCounts:
        """The pre-token counts of ``langs`` summed into one column, ``"all"``, over every word of
        the study (0 where ``langs`` have none: the engine's ``languages=["all"]`` leaves those out).

        >>> from modtok.text.data import Corpora
        >>> text = {"eng_Latn": ["ab ab b"], "deu_Latn": ["b ab"]}
        >>> study = InefficiencyStudy(Corpora(text, text, "toy"), k=260)
        >>> wc = study._summed(("eng_Latn",))
        >>> wc.words(), wc.counts.tolist()
        ([b'ab', b' ab', b' b', b'b'], [[1], [1], [1], [0]])
        >>> study._summed(("eng_Latn", "deu_Latn")).counts.ravel().tolist()
        [1, 2, 1, 1]
        """
        data, lengths, columns = self._arrays()
        # bincount sums in float64: exact for counts below 2**53
        total = np.bincount(np.concatenate([columns[lang][0] for lang in langs]),
                            np.concatenate([columns[lang][1] for lang in langs]), len(lengths))
        return WordCounts(["all"], data, lengths, total.astype(np.int64)[:, None])

    def nsl_table(self, langs: Sequence[str], budget: int) -> dict:
        """The analysis behind notebook 01's panel: ``{"langs", "budget", "rows", "long"}``.

        ``long`` is :func:`modtok.evaluation.metrics.language_table` (one row per language x
        tokenizer: the joint BPE of ``langs`` at ``budget``, then the deployed ones); ``rows``
        has one row per language: its name, script, the reference's tokens per character and
        an ``"NSL <tokenizer>"`` column per tokenizer; ``line_tokens[lang][name]`` the tokens of
        each evaluation line under each tokenizer and under ``"reference"`` (the NSLs' intervals
        over lines, :func:`paper_values`).
        """
        langs = tuple(langs)
        if not langs:
            return {"langs": (), "budget": budget, "rows": [], "long": [], "line_tokens": {}}
        # the whole table in the results cache too (a second Run All draws the panel without encoding
        # anything), keyed on what it reads besides the study's training text: the deployed tokenizers
        # (their handles: their files), the references' budget, the joint's training size and the test lines
        return self.results.get("nsl table", self._table_key(langs, budget), lambda: self._nsl_table(langs, budget))

    def _table_key(self, langs: tuple[str, ...], budget: int) -> tuple:
        """:meth:`nsl_table`'s key in the results cache."""
        return (langs, budget, self.k, self.train_at, self.deployed, {lang: self.corpora.eval[lang] for lang in langs})

    def _nsl_table(self, langs: tuple[str, ...], budget: int) -> dict:
        joint, name = self.joint_model(langs, budget), f"joint BPE {budget // 1000}k"
        # tokens per test line, the numbers HF's encode_batch gives (tests/test_study_modular_tokenizers.py)
        # without encoding: each distinct pre-token segmented by the merge kernel (LinePieces) under the
        # BPEModel itself, no HF export (HF's encoding of a 38-language subset's test lines took 16.8 s of
        # its 41 s at load 6, session 19; the export and its state read back 0.9 s quiet, session 21)
        tokens = self._test_pieces().line_tokens(joint, langs)
        reference = {lang: self._kept(f"mono {self.k}", self.mono(lang, self.k), lang) for lang in langs}
        encoded = {lang: {name: _with_tokens(metrics.Encoded(joint, self.corpora.eval[lang], lang), tokens[lang],
                                             reference[lang]),
                          **{d: self._kept(d, tok, lang) for d, tok in self.deployed.items()}} for lang in langs}
        long = metrics.language_table_of(encoded, reference)
        rows = []
        for lang in langs:
            mine = [r for r in long if r["lang"] == lang]
            rows.append({
                "lang": lang, "language": data.lang_name(lang), "script": data.script_of(lang),
                # the reference's tokens per character: tokens/char of any tokenizer over its NSL
                f"mono {self.k // 1000}k tok/char": mine[0]["tokens_per_char"] / mine[0]["nsl"],
                **{f"NSL {r['tokenizer']}": r["nsl"] for r in mine},
            })
        line_tokens = {lang: {n: e.tokens.tolist() for n, e in {**encoded[lang], REFERENCE: reference[lang]}.items()}
                       for lang in langs}  # lists: results compare with ==
        return {"langs": langs, "budget": budget, "rows": rows, "long": long, "line_tokens": line_tokens}

    def subsets_ahead(self, budget: Callable[[int], int]) -> str:
        """Every subset that leaves one language out of the study's, at ``budget(n)`` for its ``n``
        languages (notebook 01's picker sets the paper's share, :func:`paper_joint_budget`), so that
        unticking a language answers from the results cache: its :meth:`nsl_table` computed now when
        ``$MODTOK_AHEAD`` is set (``make demo`` sets it, :mod:`modtok.ui.demo`), else only looked up.
        One line: how many were computed (and how long they took) or are in the cache. Why: such a
        subset is most of the text (38 of 39 languages: 8.9 s of CPU, 82 s at load 22, session 19),
        where a new subset of a few languages answers in one or two seconds.

        >>> from modtok.text.data import Corpora
        >>> text = {"eng_Latn": ["aa ab aab"] * 30, "deu_Latn": ["bb ba bba"] * 30, "fra_Latn": ["ab ba"] * 30}
        >>> InefficiencyStudy(Corpora(text, text, "toy"), k=260).subsets_ahead(lambda n: 262)
        'the 3 subsets that leave one language out: 0 in the results cache, 3 computed when picked (make demo computes them ahead)'
        """
        langs = tuple(self.corpora.languages)
        subsets = [langs[:i] + langs[i + 1:] for i in range(len(langs))] if len(langs) > 2 else []
        what = f"the {len(subsets)} subsets that leave one language out"
        if ahead():
            t0, there = time.perf_counter(), 0
            for subset in subsets:
                # at the slider's ceiling, so that a class moving the budget up reads it back too
                ceiling, n = max(budget(len(subset)), self.train_at or 0), budget(len(subset))
                if self.results.stored("joint", (subset, ceiling)) and self.results.stored(
                        "nsl table", self._table_key(subset, n)):
                    there += 1  # a second make demo: nothing to compute
                    continue
                self.joint_model(subset, ceiling)
                self.nsl_table(subset, n)
                self._trained.pop(subset, None)  # on disk; this kernel keeps none of the trainings (39 at 128k: GBs)
                self._joint = {key: tok for key, tok in self._joint.items() if key[0] != subset}
            return (f"{what}, computed ahead into the results cache (${AHEAD}, make demo): {len(subsets) - there} "
                    f"in {time.perf_counter() - t0:.0f} s" + (f", {there} there already" if there else ""))
        there = sum(bool(self.results.stored("nsl table", self._table_key(subset, budget(len(subset)))))
                    for subset in subsets)
        return (f"{what}: {there} in the results cache, {len(subsets) - there} computed when picked"
                + (" (make demo computes them ahead)" if there < len(subsets) else ""))

    def rows(self, langs: Sequence[str], budget: int) -> list[dict]:
        """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`): each
        language of ``langs`` under the joint BPE at ``budget`` and each deployed tokenizer,
        against the monolingual reference."""
        return self.nsl_table(langs, budget)["long"]

    def measured(self, result: dict) -> dict:
        """The value of each claim (:func:`paper_values` of :meth:`nsl_table`'s ``result``)."""
        return paper_values(result)

    def setting(self, langs: Sequence[str], budget: int) -> dict[str, str]:
        """This run's setting, in the fields of the paper's (``paper_figures.toml``)."""
        langs = list(langs)
        share = budget / (len(langs) * self.k) if langs else float("nan")
        deployed = ", ".join(self.deployed) or "none installed"
        short = sorted(n for n in (self.mono(lang, self.k).get_vocab_size() for lang in langs) if n < self.k)
        refs = f"{self.k:,} tokens" + (f" ({len(short)} of them short of it: {short[0]:,}–{short[-1]:,}, their text "
                                        "gave no more)" if short else "")
        got = len(self.joint_model(langs, budget)) if langs else budget
        joint = f"{budget:,}" if got >= budget else f"{got:,} ({budget:,} asked: its text gave no more)"
        return {**corpus_fields(self.corpora, langs),
                "vocabulary": f"monolingual BPE references of {refs}; joint BPE of {joint} over "
                              f"{len(langs)} languages ({share:.2f} of a reference budget per language); "
                              f"deployed: {deployed}",
                "pretokenization": f"references and the joint BPE: {pretokenization(self.scheme, self.corpora)}"}

    def reasons(self, here: Mapping[str, float | NotMeasured], result: dict) -> dict[str, str]:
        """A measured reason for each claim of ``here`` (:func:`paper_values` of ``result``,
        :meth:`nsl_table`'s) that does not hold: for a deployed tokenizer's NSL, the
        reference it is measured against (its budget, its training characters, its and the
        tokenizer's token totals on the test lines; the paper's references have 24k tokens);
        for the joint BPE, the share of a reference budget each language got."""
        claims = {c.key: c for c in paper_vs_here.claims("modular_tokenizers_inefficiency")}
        failing = [k for k, v in here.items() if not isinstance(v, NotMeasured) and claims[k].verdict(v) == "does not hold"]
        rows = result["rows"]
        by_lang = {r["lang"]: r for r in rows}

        def against(lang: str, column: str) -> str:
            ref = self.mono.tokens(lang, self.k)
            chars = sum(len(line) for line in self.corpora.train[lang])
            size = _size(self.k, self.mono(lang, self.k).get_vocab_size())
            return (f"NSL against our {data.lang_name(lang)} reference of {size} trained on {chars:,} "
                    f"characters (the paper's references: 24k tokens): on the {len(self.corpora.eval[lang]):,} test "
                    f"lines it spends {ref:,} tokens, {column[4:]} {by_lang[lang][column] * ref:,.0f}")

        deployed = [c for c in (rows[0] if rows else {}) if c.startswith("NSL ") and not c.startswith("NSL joint")]
        where = {"nepali_nsl_llama3": ("npi_Deva", "NSL llama3"), "nepali_nsl_qwen3": ("npi_Deva", "NSL qwen3"),
                 "english_nsl_llama3": ("eng_Latn", "NSL llama3")}
        out = {}
        for key in failing:
            if key in where:
                out[key] = against(*where[key])
            elif key in ("deployed_max_nsl", "llama3_max_nsl"):
                columns = deployed if key == "deployed_max_nsl" else ["NSL llama3"]
                lang, column = max(((r["lang"], c) for r in rows for c in columns), key=lambda lc: by_lang[lc[0]][lc[1]])
                out[key] = against(lang, column)
            elif key == "joint_mean_nsl":
                share = result["budget"] / (len(rows) * self.k)
                size = _size(result["budget"], len(self.joint_model([r["lang"] for r in rows], result["budget"])))
                out[key] = (f"the joint BPE of {size} gives each of {len(rows)} languages "
                            f"{share:.2f} of a {self.k:,}-token reference budget (the paper's Multi 21: "
                            f"{PAPER_JOINT_SHARE:.2f} of 24k)")
        return out

    def premiums(self, budget: int, lang: str = "npi_Deva", pivot: str = "eng_Latn") -> list[dict]:
        """``lang``'s premium over ``pivot`` (Σ|T(s_lang)| / Σ|T(s_pivot)| on parallel lines)
        for the joint BPE of every language at ``budget`` and each deployed tokenizer:
        one row ``{"tokenizer", "premium <lang>/<pivot>"}`` each (3-letter codes)."""
        column, ev = f"premium {lang[:3]}/{pivot[:3]}", self.corpora.eval

        def compute() -> list[dict]:
            candidates = {f"joint BPE {budget // 1000}k": self.joint(self.corpora.languages, budget), **self.deployed}
            return [{"tokenizer": name, column: metrics.premium(tok, ev[lang], ev[pivot])}
                    for name, tok in candidates.items()]
        key = (budget, self.train_at, self.corpora.languages, self.deployed, ev[lang], ev[pivot])  # as nsl_table's
        return self.results.get("premiums", key, compute)


def _size(asked: int, got: int) -> str:
    """A vocabulary's size in words, with the budget asked when its text gave fewer.

    >>> _size(8_000, 8_000), _size(8_000, 740)
    ('8,000 tokens', '740 tokens (8,000 asked: its text gave no more)')
    """
    return f"{got:,} tokens" + (f" ({asked:,} asked: its text gave no more)" if got < asked else "")


def _with_tokens(encoded: metrics.Encoded, tokens: np.ndarray, text: metrics.Encoded | None = None) -> metrics.Encoded:
    """``encoded`` with its tokens per line set to ``tokens`` (counted elsewhere: read back from the
    results cache, or from pre-tokens), and the measures of its text (characters, bytes, words)
    taken from ``text``, another Encoded of the same lines kept for the kernel (the reference's:
    counting them for every new joint BPE took 0.7 s of a 38-language subset at load 11):
    Encoded keeps each measure as a functools.cached_property, in its ``__dict__``, so they go
    where it would keep its own."""
    encoded.__dict__["tokens"] = tokens
    if text is not None:
        encoded.__dict__.update({m: getattr(text, m) for m in ("chars", "nbytes", "words")})
    return encoded


def paper_values(result: dict) -> dict:
    """The measured values of the ``modular_tokenizers_inefficiency`` claims (``paper_figures.toml``)
    from :meth:`InefficiencyStudy.nsl_table`'s ``result``. With its ``line_tokens`` every NSL
    claim carries its interval over evaluation lines
    (:func:`modtok.studies.paper_vs_here.over_lines`: line ``i`` of every language, tokenizer
    and reference drawn together, so a maximum or a mean over languages is bootstrapped whole);
    without them (or on text that is not parallel) the point estimates.

    >>> rows = [{"lang": "npi_Deva", "NSL joint BPE 8k": 1.5, "NSL llama3": 3.0}, {"lang": "eng_Latn", "NSL joint BPE 8k": 0.9, "NSL llama3": 1.0}]
    >>> here = paper_values({"rows": rows})
    >>> here["joint_mean_nsl"], here["deployed_max_nsl"], here["nepali_nsl_llama3"], here["english_nsl_llama3"]
    (1.2, 3.0, 3.0, 1.0)
    >>> here["nepali_nsl_qwen3"].reason
    'qwen3 is not installed'

    With the lines (two of them; llama3 spends 3 and 9 tokens on Nepali where the reference
    spends 2 and 2, so its NSL is 3 and a replicate draws 1.5, 3 or 4.5):

    >>> lines = {"npi_Deva": {"joint BPE 8k": [3, 3], "llama3": [3, 9], "reference": [2, 2]},
    ...          "eng_Latn": {"joint BPE 8k": [2, 2], "llama3": [2, 2], "reference": [2, 2]}}
    >>> paper_values({"rows": rows, "line_tokens": lines})["nepali_nsl_llama3"]
    Measured(value=3.0, lo=1.5, hi=4.5, over='lines')
    """
    rows = result["rows"]
    keys = ("deployed_max_nsl", "llama3_max_nsl", "nepali_nsl_llama3", "nepali_nsl_qwen3", "english_nsl_llama3",
            "joint_mean_nsl")
    if not rows:
        return dict.fromkeys(keys, NotMeasured("no language selected"))
    joint = next(k for k in rows[0] if k.startswith("NSL joint"))[4:]
    deployed = [k[4:] for k in rows[0] if k.startswith("NSL ") and k[4:] != joint]
    langs = [r["lang"] for r in rows]
    out: dict = {}
    if not deployed:
        out["deployed_max_nsl"] = NotMeasured("no deployed tokenizer installed (pip install 'modtok[deployed]')")
    for key, name, lang in (("llama3_max_nsl", "llama3", None), ("nepali_nsl_llama3", "llama3", "npi_Deva"),
                            ("nepali_nsl_qwen3", "qwen3", "npi_Deva"), ("english_nsl_llama3", "llama3", "eng_Latn")):
        if name not in deployed:
            out[key] = NotMeasured(f"{name} is not installed")
        elif lang is not None and lang not in langs:
            out[key] = NotMeasured(f"{lang} is not among the languages")

    def nsl(t, name, lang):  # t: totals (floats for the point, replicates for the interval)
        return t[f"{name}|{lang}"] / t[f"{REFERENCE}|{lang}"]

    def statistic(t) -> dict:
        values = {"joint_mean_nsl": np.mean([nsl(t, joint, lang) for lang in langs], axis=0),
                  "deployed_max_nsl": np.max([nsl(t, n, lang) for n in deployed for lang in langs], axis=0)
                  if deployed else 0.0,
                  "llama3_max_nsl": np.max([nsl(t, "llama3", lang) for lang in langs], axis=0) if "llama3" in deployed
                  else 0.0}
        for key, name, lang in (("nepali_nsl_llama3", "llama3", "npi_Deva"), ("nepali_nsl_qwen3", "qwen3", "npi_Deva"),
                                ("english_nsl_llama3", "llama3", "eng_Latn")):
            values[key] = nsl(t, name, lang) if key not in out else 0.0
        return {k: v for k, v in values.items() if k not in out}

    if result.get("line_tokens"):
        columns = {f"{name}|{lang}": tokens for lang, by_name in result["line_tokens"].items()
                   for name, tokens in by_name.items()}
        return {**out, **paper_vs_here.over_lines(columns, statistic)}
    # the rows' NSLs alone (no per-line tokens): one "total" per tokenizer, the reference's 1
    totals = {f"{k[4:]}|{r['lang']}": float(r[k]) for r in rows for k in r if k.startswith("NSL ")}
    totals |= {f"{REFERENCE}|{lang}": 1.0 for lang in langs}
    return {**out, **{k: float(v) for k, v in statistic(totals).items()}}
