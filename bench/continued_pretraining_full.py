"""Notebook 07 (h) at its normal size, outside the notebook: the same data, the same
study call (``continued.study``), one torch thread as the notebook sets on a CPU.

    MODTOK_FLORES=... MODTOK_POOL=... PYTHONHASHSEED=0 python bench/continued_pretraining_full.py OUT_DIR
    MODTOK_FLORES=... MODTOK_POOL=... PYTHONHASHSEED=0 python bench/continued_pretraining_full.py OUT_DIR --pretrained

The preset is "gpu" where CUDA is present (``default_device``), else "cpu"; with
``--pretrained`` the pretrained-base regime ("pretrained-gpu" / "pretrained-cpu":
the base model pretrained on the 40 MB extra Nepali text and English until its
Nepali bits per byte flatten, tied embeddings, the paper's 1e-4 rate); the same
command runs unchanged on a GPU machine. ``--size NAME`` picks any preset
(``continued.PRESETS``).

writes OUT_DIR/result.pkl (the Result without models) and then OUT_DIR/table.md and
OUT_DIR/table.json (every arm, every comparison with its interval and labels, the
paper-vs-here rows of continued pretraining with their verdicts and measured reasons, the
paper's setting beside ours field by field); ``--report`` redoes the second step alone.
"""

import json
import pickle
import sys
import time
from pathlib import Path

import torch


def size_of(argv) -> str:
    from modtok.studies.pretoken_floor import cpt as continued

    if "--size" in argv:
        return argv[argv.index("--size") + 1]
    return ("pretrained-" if "--pretrained" in argv else "") + continued.machine_size(smoke=False)  # notebook 07's


def compute(out: Path, size: str):
    from modtok.lm.train import default_device
    from modtok.studies.pretoken_floor import cpt as continued
    from modtok.text import data

    if default_device().type != "cuda":
        torch.set_num_threads(1)  # as notebook 07 does on a CPU
    corpora = data.default_corpora(["eng_Latn", "npi_Deva", "rus_Cyrl"], train_chars=10**9)  # notebook 07, full size
    train = list(corpora.train["npi_Deva"])
    extra = data.extra_text_path("npi_Deva.large.txt")
    extra_lines = data.read_lines(extra) if extra else None
    pretrained = continued.preset(size)[0].flatten is not None
    if extra_lines and not pretrained:  # the first regime reads the pool, then the extra text, as notebook 07 does
        train += extra_lines
    t0 = time.time()
    res = continued.study(size, corpora.train["eng_Latn"], train, corpora.eval["npi_Deva"], "Nepali", "npi_Deva",
                          corpora.eval_label, out / "work", progress=False,
                          extra_target=extra_lines if pretrained else None)
    res.arms[continued.BASE].model = None
    with open(out / "result.pkl", "wb") as f:
        pickle.dump({"result": res, "source": corpora.source, "wall_s": time.time() - t0, "size": size,
                     "eval_label": corpora.eval_label}, f)


def report(out: Path):
    from modtok.studies import paper_vs_here
    from modtok.studies.pretoken_floor import claims, cpt as continued

    saved = pickle.loads((out / "result.pkl").read_bytes())
    res = saved["result"]
    res.setup, res.sizes = continued.preset(saved.get("size", "cpu"))  # (a result pickled before they were fields)
    arms, comps, paper = res.table(), res.comparisons(), claims.cpt_rows(res)
    setup, sizes = continued.preset(saved.get("size", "cpu"))  # (a result saved before "size" was: the CPU run)
    ours = claims.cpt_setting(setup, sizes, "npi_Deva", saved.get("eval_label", "FLORES-200 devtest"), res)
    theirs = {c.key: c for c in paper_vs_here.claims("pretoken_floor")}["cpt_r0_lowest"].setting
    setting = [{"field": f, "paper (§VI, App. D)": theirs.get(f, "—"), "here": ours.get(f, "—")}
               for f in paper_vs_here.SETTING_FIELDS]
    summary = {ev: res.summary(ev) for ev in res.intervals}
    (out / "table.json").write_text(json.dumps({"source": saved["source"], "wall_s": saved["wall_s"],
                                                "roles": res.roles, "arms": arms, "comparisons": comps,
                                                "paper_vs_here": paper, "setting": setting,
                                                "summary": summary}, indent=1, default=str))

    def md(rows):
        cols = list(rows[0])
        fmt = lambda v: f"{v:.4f}" if isinstance(v, float) else str(v)  # noqa: E731
        return "\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
                         + ["| " + " | ".join(fmt(r[c]) for c in cols) + " |" for r in rows])

    text = [f"# Notebook 07 (h), preset {saved.get('size', 'cpu')} ({len(res.seeds)} seeds), wall "
            f"{saved['wall_s'] / 60:.0f} min", "", saved["source"], "", "roles: " + json.dumps(res.roles), "",
            *[f"- {line}" for line in res.describe("Nepali")], ""]
    text += [f"- {s}" for s in summary.values()]
    text += ["", "## Arms", "", md(arms), "", "## Comparisons", "", md(comps), "", "## Paper vs here", "", md(paper),
             "", "## Setting", "", md(setting)]
    (out / "table.md").write_text("\n".join(text) + "\n")


if __name__ == "__main__":
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    if "--report" not in sys.argv:
        compute(out, size_of(sys.argv))
    report(out)
