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
from typing import TYPE_CHECKING

from modtok.studies.paper_vs_here import NotMeasured
from modtok.studies.pretoken_floor import cross_script

if TYPE_CHECKING:  # torch is not needed to read a result
    from modtok.studies.pretoken_floor.continued_pretraining import Result

KEYS = ("llama3_floor", "llama3_premium", "qwen3_floor", "r2_floor_llama3", "r1_stalls", "r2_below_r1_floor",
        "english_ids_moved", "indic_r2_below_r1", "controls_r1_differs", "cpt_r0_lowest", "cpt_r2_minus_r0")


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
        indic = [r for r in table_v if r["language"] not in cross_script.CONTROLS]
        controls = [r for r in table_v if r["language"] in cross_script.CONTROLS]
        out["indic_r2_below_r1"] = (sum(r["R2_premium"] < r["R1_premium"] for r in indic) / len(indic) if indic
                                    else NotMeasured("no Indic language in the cross-script table"))
        out["controls_r1_differs"] = (float(sum(not r["r1_equals_r2"] for r in controls)) if controls
                                      else NotMeasured("no no-mark control language in the cross-script table"))
    else:
        out["indic_r2_below_r1"] = out["controls_r1_differs"] = NotMeasured(
            "needs the training pool and FLORES-200 for several scripts (section (g) skipped)")
    if cpt is not None and target == "npi_Deva":
        bpb = {a: cpt.intervals["Nepali"][a][0] for a in ("R0", "R1", "R2")}
        out["cpt_r0_lowest"] = bpb["R0"] - min(bpb["R1"], bpb["R2"])
        out["cpt_r2_minus_r0"] = bpb["R2"] - bpb["R0"]
    elif cpt is not None:
        out["cpt_r0_lowest"] = out["cpt_r2_minus_r0"] = NotMeasured(f"needs Nepali; section (h) ran on {target}")
    return out
