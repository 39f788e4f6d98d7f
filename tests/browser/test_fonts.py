"""Every script of the pool renders as glyphs in the browser the suite (and `make lab`) uses.

Headless Chromium on a bare Debian has no Indic fonts: Devanagari showed as boxes in the
screenshots. The Makefile's chromium target installs Debian's fonts-noto-core; this test
draws a word of each script on a canvas and compares its pixels with those of unassigned
code points, which every browser draws as the same missing-glyph box.
"""

from __future__ import annotations

import pytest

SAMPLES = {  # a word per script of the pool (data/pool: 14 scripts) and of make test's any-data fixture
    "Deva": "नमस्ते", "Beng": "নমস্কার", "Guru": "ਸਤਿ", "Gujr": "નમસ્તે", "Orya": "ନମସ୍କାର",
    "Taml": "வணக்கம்", "Telu": "నమస్తే", "Knda": "ನಮಸ್ಕಾರ", "Mlym": "നമസ്കാരം", "Sinh": "ආයුබෝවන්",
    "Arab": "سلام", "Cyrl": "привет", "Grek": "γειά", "Latn": "hello",
    # modtok example-corpus --scripts (fonts-noto-cjk for Han, kana and Hangul)
    "Hans": "你好", "Jpan": "こんにちは", "Hang": "안녕하세요", "Thai": "สวัสดี", "Khmr": "សួស្តី",
    "Mymr": "မင်္ဂလာပါ", "Ethi": "ሰላም",
}
BOXES = "\u0378\u0379\u0380\u0381\u0382\u0383"  # unassigned (Greek block): the missing-glyph box

DRAW = """([text, boxes]) => {
  const draw = (s) => {
    const c = document.createElement("canvas"); c.width = 400; c.height = 60;
    const g = c.getContext("2d"); g.font = "32px sans-serif"; g.fillText(s, 4, 44);
    return Array.from(g.getImageData(0, 0, 400, 60).data).join(",");
  };
  const chars = Array.from(text);
  return {word: draw(text), boxes: draw(Array.from(boxes).slice(0, 1).join("").repeat(chars.length)),
          blank: draw("")};
}"""


@pytest.fixture(scope="module")
def page(browser_context):
    p = browser_context.new_page()
    p.set_content("<html><body></body></html>")
    yield p
    p.close()


@pytest.mark.parametrize("script", sorted(SAMPLES))
def test_the_script_renders_as_glyphs_not_boxes(page, script):
    drawn = page.evaluate(DRAW, [SAMPLES[script], BOXES])
    assert drawn["boxes"] != drawn["blank"]  # the box itself is drawn (the check can tell)
    assert drawn["word"] != drawn["boxes"], f"{script} ({SAMPLES[script]}) is drawn as missing-glyph boxes"
