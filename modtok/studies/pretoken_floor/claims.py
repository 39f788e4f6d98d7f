"""Notebook 07's measured values for the "paper vs here" table (``pretoken_floor``).

:func:`measured` turns what the notebook computed (the audit rows, the K sweep,
the English-ids check, the cross-script rows, the continued-pretraining result)
into ``{claim key: value}`` for :func:`modtok.studies.paper_vs_here.table`, the
claims and the paper's figures being ``[pretoken_floor.*]`` of
``paper_figures.toml``. What the data could not measure is a
:class:`~modtok.studies.paper_vs_here.NotMeasured` with the reason: the paper's
figures are about Nepali against English on aligned text (FLORES-200), so on
other data those rows say what is missing, never a stand-in's number.

>>> here = measured("hin_Deva", parallel=False)
>>> here["llama3_floor"].reason
'needs Nepali (npi_Deva) and English on aligned text; this run has hin_Deva on held-out lines'
>>> sorted(here) == sorted(KEYS)
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from modtok.cache import size_text
from modtok.studies.contract import Study
from modtok.studies.paper_vs_here import SETTING_FIELDS, Measured, NotMeasured, claims
from modtok.studies.pretoken_floor import PAPER, cross_script, floor

if TYPE_CHECKING:  # torch is not needed to read a result
    from modtok.studies.pretoken_floor.cpt import Result

KEYS = ("llama3_floor", "llama3_premium", "qwen3_floor", "r2_floor_llama3", "r1_stalls", "r2_below_r1_floor",
        "english_ids_moved", "marks_r2_below_r1", "controls_r1_differs", "cpt_r0_lowest", "cpt_r2_minus_r1",
        "cpt_r2m_minus_r1", "cpt_r2m_minus_r0", "cpt_r2_minus_r0", "cpt_english_control")
# continued pretraining: claim key -> (role of the held-out set, comparison "a − b", what is compared with the
# paper's figure: the difference, its absolute value, or the upper end of its interval); R2-m = "R2 (matched steps)"
CPT = {"cpt_r2_minus_r1": ("primary", "R2 − R1", "difference"),
       "cpt_r2m_minus_r1": ("primary", "R2 (matched steps) − R1", "|difference|"),
       "cpt_r2m_minus_r0": ("primary", "R2 (matched steps) − R0", "difference"),
       "cpt_r2_minus_r0": ("primary", "R2 − R0", "difference"),
       "cpt_english_control": ("control", "R2 − R0", "hi")}


def measured(target: str | None, parallel: bool, audit_rows: Mapping[str, dict] | None = None, sweep=None,
             moved: Sequence | None = None, table_v: Sequence[dict] | None = None,
             cpt: Result | None = None, min_stall_k: int = 8000) -> dict:
    """``{key: value or NotMeasured}`` for every claim of :data:`KEYS`.

    ``target``: the language the notebook studies (Nepali, or a Devanagari
    stand-in under its own code); ``parallel``: its evaluation text is aligned
    with English; ``audit_rows``: ``{tokenizer name: audit.audit row}``;
    ``sweep``: :class:`~modtok.studies.pretoken_floor.floor.Sweep`; ``moved``: the
    keys whose English ids moved (:func:`~modtok.studies.pretoken_floor.floor.moved_ids`);
    ``table_v``: the cross-script rows; ``cpt``: the continued-pretraining result.
    ``r1_stalls`` is read at K >= ``min_stall_k`` (the paper's stall is at large K).
    """
    nepali = target == "npi_Deva" and parallel
    where = f"this run has {target or 'no Devanagari language'} on {'aligned' if parallel else 'held-out'} lines"
    need = NotMeasured(f"needs Nepali (npi_Deva) and English on aligned text; {where}")
    out = {k: need for k in KEYS}
    if nepali and audit_rows:
        out |= {"llama3_floor": audit_rows["llama3"]["floor"], "llama3_premium": audit_rows["llama3"]["premium"]}
        out["qwen3_floor"] = (audit_rows["qwen3"]["floor"] if "qwen3" in audit_rows
                              else NotMeasured("the Qwen3 tokenizer is not installed"))
    if nepali and sweep is not None:
        out["r2_floor_llama3"] = sweep.of("llama3", "R2")[0]["floor"]
        stall = [r["cost"] / r["floor"] for r in sweep.of("llama3", "R1") if r["K"] >= min_stall_k]
        out["r1_stalls"] = max(stall) if stall else NotMeasured(f"no K >= {min_stall_k:,} in this run's sweep")
        out["r2_below_r1_floor"] = sweep.of("llama3", "R2")[-1]["cost"] - sweep.of("llama3", "R1")[0]["floor"]
    if moved is not None:
        out["english_ids_moved"] = float(len(moved))
    if table_v:
        marks = [r for r in table_v if r["language"] in cross_script.PAPER_MARKED]
        controls = [r for r in table_v if r["language"] in cross_script.CONTROLS]
        out["marks_r2_below_r1"] = (sum(r["R2_premium"] < r["R1_premium"] for r in marks) / len(marks) if marks
                                    else NotMeasured("none of Table V's languages with marks in the cross-script table"))
        out["controls_r1_differs"] = (float(sum(not r["r1_equals_r2"] for r in controls)) if controls
                                      else NotMeasured("no no-mark control language in the cross-script table"))
    else:
        out["marks_r2_below_r1"] = out["controls_r1_differs"] = NotMeasured(
            "needs the training pool and FLORES-200 for several scripts (section (g) skipped)")
    cpt_keys = ("cpt_r0_lowest", *CPT)
    if cpt is not None and target == "npi_Deva" and "primary" in cpt.roles:
        primary = cpt.intervals[cpt.roles["primary"]]
        better = min(("R1", "R2"), key=lambda a: primary[a][0])  # by the seeds' mean
        d, lo, hi = primary[f"{better} − R0"]
        out["cpt_r0_lowest"] = Measured(-d, -hi, -lo, "documents")  # R0 − the better arm: the pair's interval, negated
        for key, (role, pair, what) in CPT.items():
            out[key] = (cpt_value(cpt.intervals[cpt.roles[role]][pair], what) if role in cpt.roles
                        else NotMeasured(f"no {role} held-out text in this run"))
    elif cpt is not None:
        out |= {k: NotMeasured(f"needs Nepali; section (h) ran on {target}") for k in cpt_keys}
    elif nepali:
        out |= {k: NotMeasured("section (h) did not run") for k in cpt_keys}
    return out


def cpt_value(interval: tuple[float, float, float], what: str) -> float | Measured:
    """A continued-pretraining pair's ``(difference, lo, hi)`` (seeds' mean, 95% interval over
    documents) as its claim compares it (:data:`CPT`): the difference or its absolute value
    with their interval, or the interval's upper end (a number: it is the bound itself).

    >>> cpt_value((0.02, 0.01, 0.03), "difference").shown(), cpt_value((0.02, 0.01, 0.03), "hi")
    ('[0.01, 0.03] over documents', 0.03)
    >>> cpt_value((-0.01, -0.02, 0.005), "|difference|")   # the interval crosses 0: |d| from 0
    Measured(value=0.01, lo=0.0, hi=0.02, over='documents')
    """
    d, lo, hi = interval
    if what == "hi":
        return hi
    if what == "difference":
        return Measured(d, lo, hi, "documents")
    ends = sorted((abs(lo), abs(hi)))
    return Measured(abs(d), 0.0 if lo <= 0 <= hi else ends[0], ends[1], "documents")


def reasons(here: Mapping[str, float | NotMeasured], sweep=None, table_v: Sequence[dict] | None = None,
            moved: Sequence | None = None, cpt: Result | None = None) -> dict[str, str]:
    """The measured reason of every claim that does **not hold** here (and only
    those: a claim that holds, or was not measured, gets none), for the
    ``reasons`` of :func:`modtok.studies.paper_vs_here.table`, from what the
    notebook computed (``here`` from :func:`measured`, and the same inputs). A
    claim that does not hold and that nothing here bears on is left out: the
    table then says "reason not measured".

    - ``r1_stalls``, ``r2_below_r1_floor``: the K sweep's merges kept after the §V
      filter where fewer than K (the text ran out of pairs seen twice);
    - ``marks_r2_below_r1``, ``controls_r1_differs``: the languages that break the
      rule, with their merges learned per arm (marks) or mark-initial share (controls);
    - ``english_ids_moved``: the extended tokenizers whose English ids moved;
    - continued pretraining: :func:`cpt_reason`.

    >>> rows = [{"language": "tam_Taml", "R1_premium": 2.0, "R2_premium": 2.5, "R1_learned": 900, "R2_learned": 300}]
    >>> reasons({"marks_r2_below_r1": 0.0, "r1_stalls": 1.0}, table_v=rows)
    {'marks_r2_below_r1': 'measured: R2 is not below R1 for tam_Taml (merges learned R1 900, R2 300)'}
    """
    verdict = {c.key: c.verdict(here[c.key]) for c in claims("pretoken_floor")
               if c.key in here and not isinstance(here[c.key], NotMeasured)}
    out = {}
    if sweep is not None:
        for key, arm in (("r1_stalls", "R1"), ("r2_below_r1_floor", "R2")):
            short = [r for r in sweep.of("llama3", arm) if r["merges kept"] < r["K"]]
            if short:
                out[key] = ("measured: the text gave fewer merges than K (after the §V filter): "
                            + ", ".join(f"K = {r['K']:,} kept {r['merges kept']:,}" for r in short))
    if table_v:
        marks = [r for r in table_v if r["language"] in cross_script.PAPER_MARKED
                 and not r["R2_premium"] < r["R1_premium"]]
        if marks:
            out["marks_r2_below_r1"] = "measured: R2 is not below R1 for " + "; ".join(
                f"{r['language']} (merges learned R1 {r['R1_learned']:,}, R2 {r['R2_learned']:,})" for r in marks)
        differ = [r for r in table_v if r["language"] in cross_script.CONTROLS and not r["r1_equals_r2"]]
        if differ:
            out["controls_r1_differs"] = "measured: R1 and R2 differ for " + "; ".join(
                f"{r['language']} ({r['mark_initial']:.2%} of its tokens begin with a combining mark)" for r in differ)
    if moved:
        out["english_ids_moved"] = "measured: English ids moved under " + ", ".join(map(str, moved))
    if cpt is not None and cpt.roles:
        for key in ("cpt_r0_lowest", *CPT):
            role = CPT[key][0] if key in CPT else "primary"
            if role in cpt.roles:
                out[key] = cpt_reason(cpt, cpt.roles[role])
    return {k: v for k, v in out.items() if verdict.get(k) == "does not hold"}


def cpt_reason(cpt: Result, ev: str) -> str:
    """What this run measured that bears on a continued-pretraining verdict on held-out
    set ``ev`` differing from the paper's: how far the base model is from R0 (how much
    of what the arms gain is learning the text at all: our base model saw 5% Nepali,
    the paper's are pretrained 1B / 0.6B models), what R0's extra steps gave it (R0
    at R1's step count), and the arms' bytes per token. Measurements beside the
    verdict, not a tested cause."""
    from modtok.studies.pretoken_floor.cpt import BASE, R0_MATCHED  # (torch: only with a Result)

    bpb = {a: cpt.intervals[ev][a][0] for a in cpt.arms}
    per_token = {a: cpt.held_out[ev].nbytes / cpt.tokens[ev][a] for a in ("R0", "R1", "R2")} if cpt.tokens else {}
    return (f"measured on {ev}: base model − R0 {bpb[BASE] - bpb['R0']:+.3f} bits per byte (what continued "
            f"pretraining itself gave R0 on this text), R0 at R1's step count − R0 {bpb[R0_MATCHED] - bpb['R0']:+.3f} "
            "(what R0's extra steps gave it)"
            + ("; bytes per token " + ", ".join(f"{a} {v:.2f}" for a, v in per_token.items()) if per_token else ""))


def cpt_rows(cpt: Result) -> list[dict]:
    """The continued-pretraining rows the paper has (R2 − R1 at equal bytes, R2-m −
    R1 and R2-m − R0 at R1's step count, R2 − R0 on Nepali, the English control
    R2 − R0 on English), ours (mean over seeds, 95% interval over units, spread
    and each seed, §VI's label) beside the paper's figure, its source and claim
    from ``paper_figures.toml``, the value compared with it (``compared``: the
    difference, its absolute value or the interval's upper end), the verdict
    under the claim's rule and, where it does not hold, :func:`cpt_reason`; ``scale``: the
    claim's own in ``paper_figures.toml`` (the small-base regime, close to training from
    scratch), or for the pretrained-base arm "reduced: " and its regime
    (:func:`~modtok.studies.pretoken_floor.cpt.regime`)."""
    from modtok.studies.pretoken_floor.cpt import regime  # (torch: only with a Result)

    pretrained = cpt.setup is not None and cpt.setup.flatten is not None
    paper = {c.key: c for c in claims("pretoken_floor")}
    rows = []
    for key, (role, pair, what) in CPT.items():
        if role not in cpt.roles:
            continue
        ev = cpt.roles[role]
        c = next(r for r in cpt.comparisons() if r["held-out text"] == ev and r["comparison"] == pair)
        value = cpt_value(cpt.intervals[ev][pair], what)
        verdict = paper[key].verdict(value)
        rows.append({"held-out text": f"{ev} ({role})", "comparison": pair, "difference": c["difference"],
                     "CI": c["CI"], "± seeds": c["± seeds"], "per seed": c["per seed"], "label": c["label"],
                     "per-seed labels": c["per-seed labels"], "paper": paper[key].paper, "compared": what,
                     "here": float(value), "rule": paper[key].rule, "holds?": verdict,
                     "reason": cpt_reason(cpt, ev) if verdict == "does not hold" else "",
                     "scale": "reduced: " + regime(cpt, short=True) if pretrained else paper[key].scale,
                     "source": paper[key].source, "paper's claim": paper[key].claim})
    return rows


@dataclass(frozen=True)
class Settings:
    """Notebook 07's configuration, for :func:`setting`: the sweep's ``target``, its training
    bytes, its Ks, the evaluation text's label and the deployed bases; (h)'s :class:`Setup`,
    text sizes and result (``cpt_setup``, ``cpt_sizes``, ``cpt``: None without section (h));
    the cross-script table's K and languages (``k_cross``, ``cross``: None without it); the
    training text when it is not the pool (``training``: :func:`cpt_setting`'s)."""

    target: str | None
    train_bytes: int
    ks: Sequence[int]
    eval_label: str
    bases: Sequence[str]
    cpt_setup: object = None
    cpt_sizes: Mapping[str, int] | None = None
    cpt: Result | None = None
    k_cross: int | None = None
    cross: cross_script.PoolTable | None = None
    training: str | None = None  # what (c) and (h) trained on, when not the pool (cpt_setting's ``training``)


def setting(s: Settings) -> dict[str, str]:
    """Our setting in the fields of the paper's (:data:`paper_vs_here.SETTING_FIELDS`),
    from notebook 07's configuration ``s``: the sweep's target, training bytes, Ks, the
    evaluation text and the deployed bases; the cross-script table's K and languages
    (``cross``: those used, those left out and why); with (h)'s :class:`Setup` and text
    sizes, :func:`cpt_setting` after " | (h) " in each field.

    >>> out = setting(Settings("npi_Deva", 2_000_000, [0, 1000], "FLORES-200 devtest (/x)", ["llama3"]))
    >>> out["size"], out["heldout"]
    ('(c) 2.0 MB of npi_Deva', '(a)-(g) FLORES-200 devtest')
    >>> v = cross_script.PoolTable([], {"hin_Deva": 3_000_000}, {"tha_Thai": "no training text in the pool"})
    >>> setting(Settings("npi_Deva", 10**6, [0], "", ["llama3"], cross=v))["data"].split(" | ")[-1]
    '(g) languages swept: hin_Deva; left out: tha_Thai (no training text in the pool)'
    >>> "None" in str(setting(Settings(None, 0, [0], "own (/x)", ["llama3"])))  # no Devanagari language: said
    False
    """
    target, train_bytes, ks, eval_label, cross, k_cross = s.target, s.train_bytes, s.ks, s.eval_label, s.cross, s.k_cross
    label = eval_label.split(" (")[0] or "held-out lines"
    what = target or "no Devanagari language in the data: (b)-(f) and (h) skipped"
    out = {"data": f"(c) {what}: {s.training or 'the pool + extra text'} | (a)-(g) evaluated on {label}" if target
           else f"(c) {what} | (a)-(g) evaluated on {label}",
           "size": f"(c) {size_text(train_bytes)} of {target}" if target else f"(c) {what}",
           "vocabulary": f"(a)-(g) the deployed {', '.join(s.bases)} tokenizers + K merges",
           "iterations": f"(c) K up to {max(ks):,} merges" + (f" | (g) K = {k_cross:,}" if k_cross else ""),
           "pretokenization": "each base's own letters-only regex (R0, R1), the repaired regex (R2)",
           "heldout": f"(a)-(g) {label}"}
    if cross is not None:
        out["data"] += (f" | (g) languages swept: {', '.join(cross.train_bytes) or 'none'}; left out: "
                        + ("; ".join(f"{x} ({why})" for x, why in cross.left_out.items()) or "none"))
        if cross.train_bytes:
            sizes = sorted(cross.train_bytes.values())
            out["size"] += f" | (g) {size_text(sizes[0])} to {size_text(sizes[-1])} of training text a language"
    if s.cpt_setup is None:
        return out
    h = cpt_setting(s.cpt_setup, s.cpt_sizes, target, eval_label, s.cpt, s.training)
    return {k: f"{out[k]} | (h) {h[k]}" if k in out else f"(h) {h[k]}" for k in [*out, *(k for k in h if k not in out)]}


def cpt_setting(setup, sizes: Mapping[str, int], target: str | None, eval_label: str,
                cpt: Result | None = None, training: str | None = None) -> dict[str, str]:
    """Section (h)'s setting in the paper's fields, from its :class:`Setup`, its text
    sizes (:func:`~modtok.studies.pretoken_floor.cpt.preset`) and,
    once it ran, the result (parameters, step counts, the piece size chosen).

    >>> from modtok.studies.pretoken_floor.cpt import preset
    >>> s = cpt_setting(*preset("cpu"), "npi_Deva", "FLORES-200 devtest (/x)")
    >>> s["lr"]
    '1e-3 peak (3e-3 for the base model), 5% warm-up, cosine decay to 10%'
    >>> s["heldout"].split(";")[0]
    'a 200 KB held-out slice of the training text per language (primary), FLORES-200 devtest secondary'

    ``training``: what the text was when it is not the pool (one's own corpus), said instead
    of the pool's preparation:

    >>> cpt_setting(*preset("smoke"), "hin_Deva", "", training="manifest m.yaml")["data"]
    'the first lines of the English and hin_Deva of manifest m.yaml'
    """
    label = eval_label.split(" (")[0] or "held-out lines"
    params = ""
    if cpt is not None:
        from modtok.studies.pretoken_floor.cpt import BASE  # (torch: only with a Result)

        model = cpt.arms[BASE].model
        params = f", {sum(p.numel() for p in model.parameters()) / 1e6:.1f}M parameters" if model is not None else ""
    steps = (", ".join(f"{a} {cpt.arms[a].steps:,}" for a in ("R0", "R1", "R2")) + " steps") if cpt else "steps"
    context = cpt.seq_len if cpt else setup.seq_len
    from modtok.lm.model import config  # (torch: only with a Setup)

    cfg = config("mini", 1, max_seq_len=context, **setup.model)  # the model run() builds (vocabulary aside)
    pieces = (", ".join(f"{ev} <= {h.piece_bytes:,} B" for ev, h in cpt.held_out.items()) if cpt
              else f"<= {setup.piece_bytes:,} B, or smaller to fit")
    cpt_size = (f"continued pretraining {sizes['cpt'] / 1e6:g} MB ({setup.cpt_target_share:.0%} {target}, "
                f"{1 - setup.cpt_target_share:.0%} English by bytes), one pass")
    base_steps = f"{setup.base_steps:,} base steps"
    if setup.flatten is None:
        data = (f"the first lines of the training pool's English and {target} (NFC, deduplicated, filtered against "
                "FLORES-200: the pool's SOURCES.md)")
        size = f"base model {sizes['base'] / 1e6:g} MB ({1 - setup.base_target_share:.0%} English), {cpt_size}"
    else:
        f = setup.flatten
        data = (f"base model: pool English + the extra {target} text (disjoint from the pool); base tokenizer, "
                f"continued pretraining and held-out: the pool's English and {target} (its SOURCES.md)")
        size = (f"base model {sizes['base_model'] / 1e6:g} MB ({setup.model_target_share:.0%} {target}), base "
                f"tokenizer {sizes['base'] / 1e6:g} MB ({1 - setup.base_target_share:.0%} English), {cpt_size}")
        base_steps = (f"base pretrained at a constant rate until its {target} dev bits per byte flattened (the last "
                      f"{f.window + 1} evaluations, {f.eval_every:,} steps apart, within {f.min_gain:g}; at most "
                      f"{f.max_steps:,} steps), then a cosine decay to {f.decay_to:.0%} over {f.decay_share:.0%} of "
                      "the steps so far; the best evaluated step is used"
                      + (f"; {cpt.base_course()}" if cpt else ""))
    if training is not None:  # one's own corpus (a manifest): none of the pool's preparation is claimed
        data = f"the first lines of the English and {target} of {training}" + (
            f"; the base model: English and more {target} (the extra text, or at smoke size the lines the "
            "other slices leave)" if setup.flatten is not None else "")
    return {"data": data, "size": size,
            "vocabulary": f"own llama3-regex BPE of {setup.base_vocab:,} + K = {setup.merges:,} merges for R1, R2",
            "model": (f"a small LM pretrained here: {cfg.n_layers} layer{'s' if cfg.n_layers != 1 else ''}, d_model {cfg.d_model}, {cfg.n_heads} heads, "
                      f"context {context} ids{params}, {'tied' if setup.tie_embeddings else 'untied'} input and output "
                      f"embeddings; {base_steps}; {len(setup.seeds)} seeds"),
            "lr": f"{setup.lr:.0e} peak ({setup.base_lr:.0e} for the base model), {setup.warmup:.0%} warm-up, "
                  "cosine decay to 10%".replace("e-0", "e-"),
            "iterations": f"one pass per arm: {steps} of {setup.batch_size} x {context} ids",
            "pretokenization": "letters-only llama3 regex (R0, R1), repaired regex (R2)",
            "heldout": (f"a {sizes['heldout'] / 1e3:g} KB held-out slice of the training text per language (primary), "
                        f"{label} secondary; pieces ({pieces}) each in one {context}-id context; "
                        f"95% intervals from {setup.n_boot:,} resamples of documents")}


def cpt_plan(setup, sizes: Mapping[str, int], target: str | None, eval_label: str,
             training: str | None = None) -> list[str]:
    """What section (h) is about to run at one preset, before it runs: ``"field: ours"``
    for each field of :func:`cpt_setting` (the shares, K, the model, the rate and warm-up,
    the batch, the held-out slice and the piece size), so that notebook 07's prose names
    the settings and prints their values instead of typing them; the paper's beside ours,
    and what the run took, are :func:`cpt_setting_rows` after it.

    >>> from modtok.studies.pretoken_floor.cpt import preset
    >>> plan = cpt_plan(*preset("cpu"), "npi_Deva", "FLORES-200 devtest (/x)")
    >>> [line.split(":")[0] for line in plan]
    ['data', 'size', 'vocabulary', 'model', 'lr', 'iterations', 'pretokenization', 'heldout']
    >>> plan[2]
    'vocabulary: own llama3-regex BPE of 4,096 + K = 2,000 merges for R1, R2'
    >>> plan[5]
    'iterations: one pass per arm: steps of 4 x 512 ids'
    >>> "None" in str(cpt_plan(*preset("smoke"), None, ""))  # no target language in the data: said
    False
    """
    ours = cpt_setting(setup, sizes, target or "(no target language)", eval_label, training=training)
    return [f"{field}: {ours[field]}" for field in SETTING_FIELDS if field in ours]


def cpt_setting_rows(setup, sizes: Mapping[str, int], target: str | None, eval_label: str,
                     cpt: Result | None = None, training: str | None = None) -> list[dict]:
    """The paper's setting of section (h) (``[pretoken_floor.cpt_r0_lowest]``: §VI,
    App. D) beside ours (:func:`cpt_setting`), one row per setting field."""
    paper = {c.key: c for c in claims("pretoken_floor")}["cpt_r0_lowest"].setting
    ours = cpt_setting(setup, sizes, target, eval_label, cpt, training)
    return [{"field": f, "paper (§VI, App. D)": paper.get(f, "—"), "here": ours.get(f, "—")} for f in SETTING_FIELDS]


class PretokenFloorStudy(Study):
    """Notebook 07's study under the contract's names (:mod:`modtok.studies.contract`): its
    computations are the functions of this package, which the notebook calls."""

    name, paper, notebook = "pretoken_floor", PAPER, "07_pretoken_floor"
    results = floor.RESULTS

    def rows(self, bases, tokenizers, corpus: Mapping[str, Sequence[str]]) -> list[dict]:
        """:func:`modtok.studies.pretoken_floor.floor.language_rows`."""
        return floor.language_rows(bases, tokenizers, corpus)

    def setting(self, s: Settings) -> dict[str, str]:
        """:func:`setting`."""
        return setting(s)

    def measured(self, *args, **kwargs) -> dict:
        """:func:`measured`."""
        return measured(*args, **kwargs)

    def reasons(self, here, **kwargs) -> dict[str, str]:
        """:func:`reasons`."""
        return reasons(here, **kwargs)
