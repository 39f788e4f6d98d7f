"""The README's two pictures, rendered headless (``make images``).

- ``docs/images/playground.png``: one Nepali sentence (the first FLORES-200 devtest line, with
  its parallel English line as the premium's reference) under Llama-3 and under a BPE trained
  here on the pool's Nepali text, as :func:`modtok.ui.playground.render` draws the playground's
  pills;
- ``docs/images/stepper-03-lattice.png``: notebook 03's "Learn it small" stepper at its lattice
  step (:func:`modtok.studies.lessons.unigram.trace`, drawn by
  :func:`modtok.ui.stepper.render_step`, the HTML the stepper shows).

Each page is the HTML the widget shows, opened in Debian's headless Chromium through Playwright
(as tests/browser does; Playwright's own browser download is never used) and cut to its content.
It needs the shared pool + FLORES-200 with Nepali (``MODTOK_POOL`` / ``MODTOK_FLORES``, which
the Makefile sets when ``../shared`` exists) and the deployed Llama-3 tokenizer
(``modtok[deployed]``)::

    .venv/bin/python bench/readme_images.py [--out docs/images]

Each PNG is written whole or not at all (a temporary file, then renamed) and must stay under
300 KB (the script fails, naming the file, when one does not).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
MAX_BYTES = 300_000
LANG, K = "npi_Deva", 8_000  # notebook 01's monolingual reference: k = 8000 at its normal size
PAGE = ('<html><head><meta charset="utf-8"></head><body style="margin:0;background:#fff"><div id="shot" '
        'style="display:inline-block;padding:12px;max-width:{width}px;font-family:sans-serif">{body}</div></body></html>')


def playground_page() -> str:
    """The playground's rows for the Nepali sentence: Llama-3, then the BPE trained here."""
    from modtok.artifacts import baselines
    from modtok.text import data
    from modtok.text.training import TRAINING_SCHEME
    from modtok.ui import playground

    corpora = data.default_corpora([LANG, "eng_Latn"], train_chars=1_000_000)
    if LANG not in corpora.train or not corpora.parallel_eval:
        sys.exit(f"readme_images: needs {LANG} with a parallel English line (the pool + FLORES-200); "
                 f"the data configured is {corpora.source}")
    bpe = baselines.train_hf_bpe(corpora.train[LANG], K, scheme=TRAINING_SCHEME)
    tokenizers = {"Llama-3": "llama3", f"BPE trained here on the pool's Nepali ({K:,} tokens)": bpe}
    return playground.render(corpora.eval[LANG][0], tokenizers, reference=corpora.eval["eng_Latn"][0], merges=False)


def stepper_page() -> str:
    """Notebook 03's stepper at its lattice step."""
    from modtok.studies.lessons import unigram
    from modtok.ui.stepper import render_step

    steps = unigram.trace()
    [at] = [i for i, s in enumerate(steps) if s.title.startswith("the lattice")]
    return render_step(steps[at], at, len(steps) + 1)  # + 1: the notebook's last step is the engine's


def shoot(pages: dict[str, tuple[str, int]], out: Path) -> list[str]:
    """Each ``{file: (html, width)}`` as a PNG of its body's content; the lines to print."""
    from playwright.sync_api import sync_playwright

    out.mkdir(parents=True, exist_ok=True)
    said = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page(device_scale_factor=1.5)
            for name, (body, width) in pages.items():
                page.set_content(PAGE.format(width=width, body=body))
                target, part = out / name, out / f".part-{name}"  # the suffix tells Playwright the format
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
    pages = {"playground.png": (playground_page(), 860), "stepper-03-lattice.png": (stepper_page(), 640)}
    print("\n".join(shoot(pages, args.out.resolve())))


if __name__ == "__main__":
    main()
