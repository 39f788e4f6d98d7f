"""The cross-script sweep (Table V analog): R1 vs R2 beyond Nepali.

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" repeats its
Nepali study on seven other languages whose scripts have combining marks
(:data:`PAPER_MARKED`: Bengali, Hindi, Tamil, Telugu, Sinhala, Burmese, Thai;
§VII-A, Table V), and on Amharic and Korean, without marks, as controls. Per language
``x`` and one K, against English on aligned lines (:mod:`modtok.evaluation.audit`):

- the original premium (95% paired-bootstrap CI), its pre-token floor under
  the original regex and under the repaired one, the mark-initial share;
- continued BPE on the language's own training text with the original regex
  (R1) and the repaired one (R2), K merges each, filtered by the language's
  own script's characters (:meth:`modtok.adapt.filters.BlockFilter.for_script`), and the premium of
  each.

One merge filter for the whole sweep: the audit of the paper reports
that the paper uses one rule for its sweep; which one is our reading, App. H's
*as worded* (it is the appendix that extends §V to these scripts), the default: a kept token holds a complete code point of
the language's script or is "a byte piece of a target-script character"
(one character, after an optional leading space;
:class:`~modtok.adapt.filters.BlockFilter`, ``pieces="character"``). The pieces
matter where the base vocabulary lacks whole characters of the script: the
first merge of a word then joins bytes of one character (space + e0 b4 in
Malayalam), which the strict §V filter drops together with every merge built
on it. ``rule="strict"`` runs the sweep under §V instead, and ``"App. H (runs)"``
under the looser rule this project used before (a byte substring of a run of
block characters). Every row also gives R2's premium under the strict filter
(``R2_strict_premium``) and the share of merges the strict filter keeps
(``strict_share``), so the choice is visible; it is not switched per language
(the project once switched where strict kept < 95%: not the paper's setup).

The paper's K is 32k (``PAPER_K``); a row's ``R1_learned`` / ``R2_learned`` say
when the text ran out of pairs seen twice before K. The shared pool (at most 3 MB
a language) does not allow 32k: on Llama-3, Nepali (1.6 MB), Sinhala, Odia and
Assamese give R1 3,461 / 4,608 / 5,120 / 5,352 merges and R2 16,466 / 16,437 /
19,281 / 20,277 (bench/RESULTS.md, "Figures cited in docstrings"), so at K = 32k each arm runs until its
pairs seen twice are exhausted, R1 much earlier (its letters-only pre-tokens
are short and few), which is not the paper's 1 GB setting. The paper's no-mark controls
are Amharic and Korean (``PAPER_CONTROLS``); the shared pool has neither, so
Russian and Greek stand as controls where they are absent.

English invariance under App. H: a kept token that valid UTF-8 can hold and
that is only a byte piece of a 3-byte block character contains the lead byte
e0-ef or two continuation bytes in a row, and neither occurs in text of
characters below U+0800 (ASCII, Latin, Greek, Cyrillic, ...), so ids there
cannot move (``tests/test_repair.py`` checks it with hypothesis); text of other
3-byte scripts is not covered by this argument.

Controls (Amharic, Korean, Russian, Greek): the repaired regex cuts text without ``\\p{M}``
exactly like the original, so R1 and R2 see the same pre-tokens, learn the
same merges and give the same ids (``r1_equals_r2``). Every extension must
leave the English ids unchanged (``english_unchanged``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from modtok.adapt import extend, filters
from modtok.cache import size_text
from modtok.errors import ConfigError, DataError, UnknownLanguageError
from modtok.evaluation import audit, metrics
from modtok.studies.languages import Choice, choose
from modtok.text import data

from .floor import RESULTS, base_key

# Table V's languages (App. H; §VII-A): the seven "other languages written with combining marks"
# besides Nepali, and the no-mark controls, the paper's (Amharic, Korean) first, then ours (Russian,
# Greek), used where those are absent. The shared pool has Hindi, Bengali, Tamil, Telugu and
# Sinhala of the seven; Burmese and Thai (and both paper controls) have no pool text, and
# pool_table names what it leaves out. (This project once swept 15 pool languages of its own
# choosing, which is not the paper's table.)
PAPER_MARKED = ("hin_Deva", "ben_Beng", "tam_Taml", "tel_Telu", "sin_Sinh", "mya_Mymr", "tha_Thai")
PAPER_CONTROLS = ("amh_Ethi", "kor_Hang")
CONTROLS = PAPER_CONTROLS + ("rus_Cyrl", "ell_Grek")
PAPER_K = 32_000  # the paper's K for the sweep
RULES = ("App. H", "strict", "App. H (runs)")
COLUMNS = ["base", "language", "filter", "strict_share", "premium", "CI", "floor", "floor_repaired", "mark_initial",
           "R1_learned", "R1_kept", "R1_premium", "R1 CI", "R2_kept", "R2_premium", "R2 CI", "R2_strict_premium",
           "r1_equals_r2", "english_unchanged"]  # notebook 07's table (CIs as plots.ci_table names them)


def block_filter(script: str, rule: str = "App. H") -> filters.BlockFilter:
    """The merge filter of ``script`` under ``rule`` (:data:`RULES`).

    >>> [block_filter("Deva", r).name for r in RULES]
    ['App. H', 'strict', 'App. H (runs)']
    """
    if rule not in RULES:
        raise ConfigError(f"cross-script filter {rule!r} is not one of: {', '.join(RULES)}")
    return filters.BlockFilter.for_script(script, relaxed=rule != "strict",
                                         pieces="run" if rule == "App. H (runs)" else "character")


def strict_share(base: extend.Base, learned: Sequence[Sequence[tuple[bytes, bytes]]], keep: filters.BlockFilter,
                 script: str) -> float:
    """Merges the strict §V filter keeps over those ``keep`` keeps, the smallest
    over the merge lists ``learned`` (one per arm): how much the rule matters."""
    strict, ids = filters.BlockFilter.for_script(script), set(base.id_of)
    return min(len(filters.filter_merges(m, strict.keeps, ids)) / max(1, len(filters.filter_merges(m, keep.keeps, ids)))
               for m in learned)


def ids_of(tokenizer, lines: Sequence[str]) -> list[list[int]]:
    """Token ids of each line (no special tokens)."""
    return [e.ids for e in tokenizer.encode_batch(list(lines), add_special_tokens=False)]


def _filtered(base: extend.Base, merges, keep: filters.BlockFilter, arm: str) -> extend.Extension:
    """The extension of ``base`` by the ``merges`` that ``keep`` accepts, with the arm's regex."""
    return extend.Extension(base, filters.filter_merges(merges, keep.keeps, set(base.id_of)),
                            extend.arm_pattern(base.regex, arm))


def language_row(base: extend.Base, lang: str, train: Sequence[str], lines: Sequence[str], ref_lines: Sequence[str],
                 k: int, rule: str = "App. H", n_boot: int = 1000, seed: int = 0) -> dict:
    """One Table V row for ``lang``: ``train`` is its training text, ``lines`` its
    evaluation lines aligned with the English ``ref_lines``; K = ``k`` merges.

    Keys: ``language``, ``name``, ``script``, ``K``, ``filter`` (``rule``, one of
    :data:`RULES`) and ``strict_share`` (:func:`strict_share`); of the original tokenizer
    ``premium`` and ``premium_ci``, ``floor``, ``mark_initial``; per arm A in R1, R2
    ``A_learned`` (merges learned: fewer than K when pairs seen twice run out),
    ``A_kept`` (after the filter), ``A_premium``, ``A_ci``; ``floor_repaired``
    (under R2's regex), ``R2_strict_premium`` (R2 under the strict filter; NaN
    where ``rule`` is strict), ``english_unchanged`` (both extensions give the original ids on
    ``ref_lines``) and ``r1_equals_r2`` (the two give the same ids on ``lines``).
    """
    script = data.script_of(lang)
    original = base.tokenizer
    # each tokenizer encodes each side once (ids, tokens, pre-tokens), every column read from that
    x, ref = (e.with_ids() for e in audit.encode_aligned(original, lines, ref_lines))
    p, lo, hi = audit.premium_ci_of(x, ref, n_boot=n_boot, seed=seed)
    learned = {arm: extend.learn(base, extend.count_words(base, train, extend.arm_pattern(base.regex, arm)), k)
               for arm in ("R1", "R2")}
    keep = block_filter(script, rule)
    row = {"language": lang, "name": data.lang_name(lang), "script": script, "K": k,
           "filter": keep.name, "strict_share": strict_share(base, list(learned.values()), keep, script),
           "premium": p, "premium_ci": [lo, hi], "floor": audit.floor_of(x, ref),
           "mark_initial": audit.mark_initial_of(x)}
    english = ref.ids
    unchanged, target_ids = True, {}
    for arm, merges in learned.items():
        ext = _filtered(base, merges, keep, arm)
        x, ref = (e.with_ids() for e in audit.encode_aligned(ext.tokenizer(), lines, ref_lines))
        p, lo, hi = audit.premium_ci_of(x, ref, n_boot=n_boot, seed=seed)
        row |= {f"{arm}_learned": len(merges), f"{arm}_kept": len(ext.merges), f"{arm}_premium": p,
                f"{arm}_ci": [lo, hi]}
        unchanged = unchanged and ref.ids == english
        target_ids[arm] = x.ids
    row["floor_repaired"] = audit.floor_of(x, ref)  # x, ref: R2's, the repaired regex
    strict = _filtered(base, learned["R2"], filters.BlockFilter.for_script(script), "R2")
    if rule == "strict":
        row["R2_strict_premium"] = float("nan")
    elif strict.merges == ext.merges:  # ext: R2's; the same merges kept, the same tokenizer
        row["R2_strict_premium"] = row["R2_premium"]
    else:
        row["R2_strict_premium"] = metrics.premium(strict.tokenizer(), lines, ref_lines)
    row["english_unchanged"] = unchanged
    row["r1_equals_r2"] = target_ids["R1"] == target_ids["R2"]
    return row


def sweep(base: extend.Base, train: Mapping[str, Sequence[str]], flores: Mapping[str, Sequence[str]], k: int,
          ref: str = "eng_Latn", rule: str = "App. H", n_boot: int = 1000, seed: int = 0) -> list[dict]:
    """:func:`language_row` for every language of ``train`` (which ``flores``, the
    aligned evaluation lines, must hold together with ``ref``)."""
    missing = [lang for lang in [*train, ref] if lang not in flores]
    if missing:
        raise UnknownLanguageError(missing[0], flores)
    return [language_row(base, lang, train[lang], flores[lang], flores[ref], k, rule, n_boot, seed)
            for lang in train]


def figure_rows(rows: Sequence[dict], base: str = "llama3") -> list[dict]:
    """Long rows ``{"language", "tokenizer", "premium"}`` of one base's rows for the
    grouped bars: the original premium, both floors and both arms."""
    out = []
    for r in rows:
        if r["base"] != base:
            continue
        for key, name in {"premium": "original", "floor": "floor, original regex", "R1_premium": f"R1, K = {r['K']:,}",
                          "R2_premium": f"R2, K = {r['K']:,}", "floor_repaired": "floor, repaired regex"}.items():
            out.append({"language": r["language"], "tokenizer": name, "premium": r[key]})
    return out


@dataclass
class PoolTable:
    """What :func:`pool_table` returns: the rows (:func:`language_row` with the
    ``base`` name first), the UTF-8 bytes of training text per language, and the
    languages asked for that were left out, with the reason (``left_out``)."""

    rows: list[dict]
    train_bytes: dict[str, int]
    left_out: dict[str, str]

    def lines(self) -> list[str]:
        """What the table was made of, in words: K and the filter, the training text
        per language, which of Table V's languages and controls were used, and every
        language asked for that was left out, with its reason.

        >>> t = PoolTable([{"K": 300, "filter": "App. H"}], {"hin_Deva": 2_500_000, "rus_Cyrl": 10**6},
        ...               {"amh_Ethi": "not in the data"})
        >>> print("\\n".join(t.lines()))
        K = 300, filter App. H; training text per language: hin_Deva 2.5 MB, rus_Cyrl 1.0 MB
        Table V's languages with marks used: hin_Deva | no-mark controls used: rus_Cyrl
        left out: amh_Ethi (not in the data)
        >>> print(PoolTable([], {}, {"tha_Thai": "no evaluation text"}).lines()[0])
        no language of Table V could be swept; left out: tha_Thai (no evaluation text)
        """
        left = "left out: " + ("; ".join(f"{x} ({why})" for x, why in self.left_out.items()) or "none")
        if not self.rows:
            return [f"no language of Table V could be swept; {left}"]
        used = lambda names: ", ".join(x for x in names if x in self.train_bytes) or "none"  # noqa: E731
        return [f"K = {self.rows[0]['K']:,}, filter {self.rows[0]['filter']}; training text per language: "
                + ", ".join(f"{x} {size_text(n)}" for x, n in self.train_bytes.items()),
                f"Table V's languages with marks used: {used(PAPER_MARKED)} | no-mark controls used: {used(CONTROLS)}",
                left]


SMOKE_LANGUAGES = ("hin_Deva", "tam_Taml", "rus_Cyrl")  # CI's smoke sweep on the shared pool


def wanted(available: Sequence[str], smoke: bool) -> tuple[str, ...]:
    """The languages to sweep: Table V's (:data:`PAPER_MARKED` + :data:`CONTROLS`); under
    smoke three of them, :data:`SMOKE_LANGUAGES` where the data has them all, else the
    first three of Table V's that it has.

    >>> wanted(["eng_Latn", "tha_Thai", "kor_Hang", "amh_Ethi", "mya_Mymr"], smoke=True)
    ('mya_Mymr', 'tha_Thai', 'amh_Ethi')
    """
    if not smoke:
        return PAPER_MARKED + CONTROLS
    if set(SMOKE_LANGUAGES) <= set(available):
        return SMOKE_LANGUAGES
    return tuple(x for x in PAPER_MARKED + CONTROLS if x in available)[:3]


def narrow(choice: Choice, smoke: bool, available: Sequence[str] | None = None) -> str | None:
    """Narrow notebook 07's ``choice`` (:func:`~modtok.studies.languages.choose` of Nepali,
    English, Russian) to what sections (b)-(f) and (h) use, and return their Devanagari
    target: Nepali, else the data's first Devanagari language under its own code (None when
    there is none).

    Those sections use the target, English and Russian; section (g) asks for Table V's
    languages on its own (:func:`wanted` over ``available``, default the data's). So a
    language of one's corpus left out here is left out *of (b)-(f) and (h)*, and one that (g)
    asks for says so: the header never calls a language left out that (g) then sweeps
    (session 21's trial on UDHR eng/zho/tha/amh/rus/hin printed "left out: tha_Thai (07 uses
    a Devanagari target, English, Russian)", then (g) swept tha_Thai and amh_Ethi). Whether
    (g) could sweep it (training and evaluation text, a merge filter) its own cell says.

    >>> langs = ["eng_Latn", "zho_Hans", "tha_Thai", "rus_Cyrl", "hin_Deva"]
    >>> c = choose(["npi_Deva", "eng_Latn", "rus_Cyrl"], 0, available=langs, asked=langs)
    >>> narrow(c, True, available=langs), c.used
    ('hin_Deva', ['eng_Latn', 'rus_Cyrl', 'hin_Deva'])
    >>> print("\\n".join(c.lines()[1:]))
    left out: zho_Hans (not used by (b)-(f) and (h), which use a Devanagari target, English and Russian)
    left out: tha_Thai (not used by (b)-(f) and (h), which use a Devanagari target, English and Russian; (g) asks for it: one of Table V's)
    """
    target = next((x for x in choice.used if x.endswith("_Deva")), None)
    swept = wanted(data.available_languages() if available is None else available, smoke)
    for lang in [x for x in choice.used if x not in ("eng_Latn", target, "rus_Cyrl")]:
        choice.leave_out(lang, "not used by (b)-(f) and (h), which use a Devanagari target, English and Russian"
                         + ("; (g) asks for it: one of Table V's" if lang in swept else ""))
    return target


def pool_table(bases: Mapping[str, extend.Base], corpora: data.Corpora, wanted: Sequence[str], k: int,
               ref: str = "eng_Latn", rule: str = "App. H", n_boot: int = 1000, seed: int = 0) -> PoolTable:
    """Table V on the configured data: the languages of ``wanted`` that ``corpora`` (from
    :func:`modtok.text.data.default_corpora`: the pool or one's manifest, FLORES-200 devtest
    or one's own parallel evaluation text) has with training and evaluation text, trained on
    its training text and evaluated against ``ref`` on its aligned evaluation lines, on top
    of every base of ``bases`` (``{name: Base}``). A language whose script code has no merge
    filter (not an ISO 15924 code Unicode knows: :mod:`modtok.adapt.filters`) is left out with
    that reason, as is one the data lacks."""
    if not corpora.parallel_eval or ref not in corpora.eval:
        raise UnknownLanguageError(ref, corpora.eval)
    left_out, langs = {}, []
    for lang in wanted:
        if lang not in corpora.train or lang not in corpora.eval:
            left_out[lang] = "not in the data" if lang not in corpora.train else "no evaluation text"
            continue
        try:
            block_filter(data.script_of(lang), rule)
        except DataError as e:
            left_out[lang] = str(e).split(" (valid:")[0]  # the list of valid codes is long
            continue
        langs.append(lang)
    train = {lang: corpora.train[lang] for lang in langs}
    rows = RESULTS.get("table V", ({name: base_key(base) for name, base in bases.items()}, train, corpora.eval, k,
                                   ref, rule, n_boot, seed),
                       lambda: [{"base": name, **row} for name, base in bases.items()
                                for row in sweep(base, train, corpora.eval, k, ref, rule, n_boot=n_boot, seed=seed)])
    return PoolTable(rows, {lang: sum(len(s.encode("utf-8")) for s in train[lang]) for lang in langs}, left_out)


def configured_table(bases: Mapping[str, extend.Base], smoke: bool, k: int, train_chars: int | None = None,
                     ref: str = "eng_Latn", n_boot: int = 1000, seed: int = 0) -> tuple[PoolTable | None, list[str]]:
    """Notebook 07's section (g) on whatever data is configured (the pool and FLORES-200, or
    one's manifest and own evaluation text): :func:`pool_table` over the languages of
    :func:`wanted` that the data has, each with at most ``train_chars`` characters of training
    text; returns the table (None where it cannot be made) and lines that say what it was made of
    or why it was not (no ``ref``, none of Table V's languages, evaluation text not aligned)."""
    available = data.available_languages()
    asked = wanted(available, smoke)
    have = [lang for lang in asked if lang in available]
    if not have or ref not in available:
        return None, [f"the cross-script table needs {ref} and one of Table V's languages ({', '.join(asked)}); "
                      f"the data has {', '.join(available)}: skipped"]
    corpora = data.default_corpora([*have, ref], train_chars=train_chars)
    if not corpora.parallel_eval:
        return None, [f"the cross-script table needs aligned evaluation text; {corpora.eval_label} is not: skipped"]
    table = pool_table(bases, corpora, asked, k, ref, n_boot=n_boot, seed=seed)
    return table, table.lines()
