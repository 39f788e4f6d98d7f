"""The README's three pictures, rendered headless (``make images``).

- ``docs/images/playground.png``: one Nepali sentence (the first FLORES-200 devtest line, with
  its parallel English line as the premium's reference) under Llama-3 (R0) and under its two
  extensions by continued BPE on the pool's Nepali (:mod:`modtok.adapt.extend`, as notebook 07
  builds its arms: K merges, strict §V filter), R1 with Llama-3's own split regex and R2 with the
  repaired one, as :func:`modtok.ui.playground.render` draws the playground's pills;
- ``docs/images/playground-merges.png``: R2's row of the same sentence with one pill selected,
  its merges unrolled down to bytes (the popup's font stack and the dotted circle before a
  lone vowel sign, :func:`modtok.ui.playground.shown`, drawn by Chromium);
- ``docs/images/stepper-03-lattice.png``: notebook 03's "Learn it small" stepper at its lattice
  step (:func:`modtok.studies.lessons.unigram.trace`, drawn by
  :func:`modtok.ui.stepper.render_step`, the HTML the stepper shows).

Each page is the HTML the widget shows, opened in Debian's headless Chromium through Playwright
(as tests/browser does; Playwright's own browser download is never used) and cut to its content.
It needs the shared pool + FLORES-200 with Nepali (``MODTOK_POOL`` / ``MODTOK_FLORES``, which
the Makefile sets when ``../shared`` exists) and the deployed Llama-3 tokenizer
(``modtok[deployed]``); the extensions are learned in each run (seconds; nothing is cached)::

    .venv/bin/python bench/readme_images.py [--out docs/images]

It prints what the pictures show (the sentence, each row's token count, the merges kept) for
the README's caption. Each PNG is written whole or not at all (a temporary file, then renamed)
and must stay under 300 KB (the script fails, naming the file, when one does not).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
MAX_BYTES = 300_000
# K = 2,000 merges on 1M characters of the pool's Nepali: both arms learn in seconds (R1 4.8-6.3 s,
# R2 3.2-4.5 s at load 9-11 on 2 cores, after the engine's one-off Numba compile) and the rows
# already differ (first FLORES line: R0 48 tokens, R1 39, R2 29).
LANG, K, TRAIN_CHARS = "npi_Deva", 2_000, 1_000_000
REGEX = {"R1": "Llama-3's own split regex", "R2": "the split regex repaired (marks join their letters)"}
PAGE = ('<html><head><meta charset="utf-8"></head><body style="margin:0;background:#fff"><div id="shot" '
        'style="display:inline-block;padding:12px;max-width:{width}px;font-family:sans-serif">{body}</div></body></html>')


def nepali_views() -> tuple[str, str, list, list[str]]:
    """The Nepali sentence, its English reference line, the views of R0, R1 and R2 (the
    playground's rows) and the lines to print."""
    from modtok.adapt import extend
    from modtok.text import data
    from modtok.ui import playground

    corpora = data.default_corpora([LANG, "eng_Latn"], train_chars=TRAIN_CHARS)
    if LANG not in corpora.train or not corpora.parallel_eval:
        sys.exit(f"readme_images: needs {LANG} with a parallel English line (the pool + FLORES-200); "
                 f"the data configured is {corpora.source}")
    text, reference = corpora.eval[LANG][0], corpora.eval["eng_Latn"][0]
    base = extend.Base.load("llama3")
    tokenizers, said = {"R0: Llama-3": "llama3"}, [corpora.source, f"sentence: {text}"]
    for arm in ("R1", "R2"):
        t0 = time.perf_counter()
        counts = extend.count_words(base, corpora.train[LANG], extend.arm_pattern(base.regex, arm))
        ext = extend.extend(base, counts, K, arm)
        name = f"{arm}: Llama-3 + {len(ext.merges):,} merges learned on Nepali, {REGEX[arm]}"
        tokenizers[name] = ext.tokenizer()
        said.append(f"{arm}: {len(ext.merges):,} of {K:,} merges kept (strict filter), learned in "
                    f"{time.perf_counter() - t0:.1f} s")
    views = playground.views(tokenizers)
    for v in views:
        ps = playground.pills(text, v.encode(text))
        said.append(f"{v.name.split(':')[0]}: {sum(len(p.tokens) for p in ps)} tokens, "
                    f"{len(v.encode(reference))} on the English line, {sum(len(p.tokens) > 1 for p in ps)} grouped pill(s)")
    return text, reference, views, said


def playground_page(text: str, reference: str, views: list) -> str:
    """The playground's rows for the Nepali sentence: R0, R1, R2."""
    from modtok.ui import playground

    return playground.render(text, views, reference=reference, merges=False)


def merges_page(text: str, views: list) -> str:
    """R2's row with its merges (a selected pill unrolls them)."""
    from modtok.ui import playground

    return playground.render(text, views[-1:])


def stepper_page() -> str:
    """Notebook 03's stepper at its lattice step."""
    from modtok.studies.lessons import unigram
    from modtok.ui.stepper import render_step

    steps = unigram.trace()
    [at] = [i for i, s in enumerate(steps) if s.title.startswith("the lattice")]
    return render_step(steps[at], at, len(steps) + 1)  # + 1: the notebook's last step is the engine's


# Select a pill (the first whose merges show a lone mark on its dotted circle, else the one with the
# most merge lines) and return the box to cut: the content and the popup below the pill.
SELECT = """() => {
  const pills = [...document.querySelectorAll(".mt-pill[data-m]")];
  const lines = (p) => p.dataset.m.split("\\n").length;
  const pill = pills.find((p) => p.dataset.m.includes("\\u25cc")) || pills.sort((a, b) => lines(b) - lines(a))[0];
  pill.focus();
  const shot = document.getElementById("shot").getBoundingClientRect(), at = pill.getBoundingClientRect();
  const pop = getComputedStyle(pill, "::before");
  const right = Math.max(shot.right, at.left + parseFloat(pop.width) + 24);
  const bottom = Math.max(shot.bottom, at.bottom + parseFloat(pop.height) + 24);
  return {x: shot.left, y: shot.top, width: right - shot.left, height: bottom - shot.top};
}"""


def shoot(pages: dict[str, tuple[str, int, bool]], out: Path) -> list[str]:
    """Each ``{file: (html, width, select)}`` as a PNG of its body's content (``select``: with a
    pill selected, its merges shown); the lines to print."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    said = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(device_scale_factor=1.5)
            for name, (body, width, select) in pages.items():
                page.set_content(PAGE.format(width=width, body=body))
                target, part = out / name, out / f".part-{name}"  # the suffix tells Playwright the format
                if select:
                    page.screenshot(path=str(part), clip=page.evaluate(SELECT), full_page=True)
                else:
                    page.locator("#shot").screenshot(path=str(part))
                size = part.stat().st_size
                if size > MAX_BYTES:
                    part.unlink()
                    sys.exit(f"readme_images: {target} would be {size:,} bytes (at most {MAX_BYTES:,})")
                os.replace(part, target)
                said.append(f"{target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}: {size:,} bytes")
        finally:
            browser.close()
    return said


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "images", help="where the PNGs go")
    args = ap.parse_args()
    if not CHROMIUM.exists():
        sys.exit(f"readme_images: {CHROMIUM} is missing (make chromium)")
    text, reference, views, said = nepali_views()
    pages = {"playground.png": (playground_page(text, reference, views), 860, False),
             "playground-merges.png": (merges_page(text, views), 640, True),
             "stepper-03-lattice.png": (stepper_page(), 640, False)}
    print("\n".join(said + shoot(pages, args.out.resolve())))


if __name__ == "__main__":
    main()
