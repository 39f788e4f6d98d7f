"""A stepper over precomputed steps, and a "predict, then run" prompt.

:class:`Stepper` shows one :class:`~modtok.studies.lessons.steps.Step` at a time in one
HTML output, with Back / Next / Play and a slider over the steps; every step is computed
before the widget is made, so moving is instant and never recomputes. What it shows is
:func:`render_step`, a pure function of the step (tables and token pills, whitespace made
visible), so it is tested without a browser:

>>> from modtok.studies.lessons.steps import Step, pills, table
>>> steps = [Step("start", "bytes", [pills("hug", ["h", "u", "g"])]),
...          Step("merge 1", "u + g", [table(["pair", "count"], [["u g", 20]], mark=0),
...                                    pills("hug", ["h", "ug"], [1])])]
>>> s = Stepper(steps)
>>> s.index, "merge 1" in s.html.value
(0, False)
>>> s.next.click(); s.index, "merge 1" in s.html.value, s.next.disabled
(1, True, True)
>>> s.back.click(); s.index, s.back.disabled
(0, True)

:class:`Predict` asks a question, lets the learner pick an answer and, on "Reveal", shows the
computed one with its one-line why:

>>> from modtok.studies.lessons.steps import Prediction
>>> p = Predict(Prediction("Which pair merges first?", ["u + g", "h + u"], "u + g", "20 times"))
>>> p.choice.value = "h + u"; p.reveal.click()
>>> "not quite" in p.answer.value, "u + g" in p.answer.value
(True, True)
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as W

from modtok.errors import UsageError

STYLE = """<style>
.mt-step table{border-collapse:collapse;margin:4px 0}
.mt-step td,.mt-step th{border:1px solid #ccc;padding:2px 8px;text-align:left}
.mt-step tr.mt-mark td{background:#fff3b0;font-weight:bold}
.mt-pill{display:inline-block;border-radius:6px;padding:1px 5px;margin:1px;background:#e3ecfa;
 font-family:monospace;white-space:pre}
.mt-pill.mt-mark{background:#ffd166;font-weight:bold}
</style>"""


def visible(text: str) -> str:
    """Whitespace made visible: a space is ``·``, a tab ``→``, a newline ``↵``.

    >>> visible(" hug\\n")
    '·hug↵'
    """
    return text.replace(" ", "·").replace("\t", "→").replace("\n", "↵")


def render_table(block: dict) -> str:
    """A table block as HTML; the ``mark`` row highlighted (cells are prose: spaces stay spaces).

    >>> render_table({"columns": ["a"], "rows": [[1], [2]], "mark": 1, "caption": ""}).count("mt-mark")
    1
    """
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in block["columns"])
    mark = ' class="mt-mark"'
    rows = "".join(
        f"<tr{mark if i == block.get('mark') else ''}>"
        + "".join(f"<td>{html.escape(str(v))}</td>" for v in row)
        + "</tr>"
        for i, row in enumerate(block["rows"])
    )
    caption = f"<caption>{html.escape(block['caption'])}</caption>" if block.get("caption") else ""
    return f"<table>{caption}<tr>{head}</tr>{rows}</table>"


def render_pills(block: dict) -> str:
    """A row of token pills as HTML, the ``mark`` ones highlighted.

    >>> render_pills({"name": "w", "tokens": [" h", "ug"], "mark": [1]})
    '<div><b>w</b> <span class="mt-pill">·h</span><span class="mt-pill mt-mark">ug</span> (2 tokens)</div>'
    """
    marked = set(block.get("mark", ()))
    spans = "".join(
        f'<span class="mt-pill{" mt-mark" if i in marked else ""}">{html.escape(visible(t))}</span>'
        for i, t in enumerate(block["tokens"])
    )
    n = len(block["tokens"])
    return f"<div><b>{html.escape(block['name'])}</b> {spans} ({n} token{'s' if n != 1 else ''})</div>"


RENDERERS = {"table": render_table, "pills": render_pills}


def render_step(step, index: int | None = None, total: int | None = None) -> str:
    """One step as HTML: its title (with ``index`` of ``total``), note and blocks."""
    where = f"step {index + 1} of {total}: " if index is not None and total else ""
    body = []
    for block in step.blocks:
        if block.get("kind") not in RENDERERS:
            raise UsageError(
                f"step {step.title!r}: unknown block kind {block.get('kind')!r} "
                f"(known: {', '.join(RENDERERS)})"
            )
        body.append(RENDERERS[block["kind"]](block))
    return (
        f'{STYLE}<div class="mt-step"><h4>{html.escape(where + step.title)}</h4>'
        f"<p>{html.escape(step.note)}</p>{''.join(body)}</div>"
    )


class Stepper(W.VBox):
    """Back / Next / Play and a slider over ``steps``; ``index`` is the step shown,
    ``html.value`` what it shows."""

    def __init__(self, steps: Sequence, interval_ms: int = 1200):
        if not steps:
            raise UsageError("a stepper needs at least one step")
        self.steps = list(steps)
        last = len(self.steps) - 1
        self.slider = W.IntSlider(
            0,
            min=0,
            max=last,
            description="step",
            continuous_update=True,
            style={"description_width": "initial"},
        )
        self.back = W.Button(description="◀ Back", tooltip="the previous step")
        self.next = W.Button(description="Next ▶", tooltip="the next step")
        self.play = W.Play(
            value=0, min=0, max=last, interval=interval_ms, description="play", tooltip="play the steps"
        )
        W.jslink(
            (self.play, "value"), (self.slider, "value")
        )  # in the browser; the kernel follows the slider
        self.html = W.HTML()
        self.back.on_click(lambda _: self.go(self.index - 1))
        self.next.on_click(lambda _: self.go(self.index + 1))
        self.slider.observe(lambda _: self._show(), "value")
        self._show()
        super().__init__([W.HBox([self.back, self.next, self.play, self.slider]), self.html])

    @property
    def index(self) -> int:
        return self.slider.value

    def go(self, index: int) -> None:
        """Show step ``index``, kept within the steps (Back at the first step stays there)."""
        self.slider.value = max(0, min(len(self.steps) - 1, index))

    def _show(self) -> None:
        i = self.index
        self.html.value = render_step(self.steps[i], i, len(self.steps))
        self.back.disabled = i == 0
        self.next.disabled = i == len(self.steps) - 1


class Predict(W.VBox):
    """A question, its options as toggle buttons, "Reveal", and the computed answer with its why."""

    def __init__(self, prediction):
        self.prediction = prediction
        self.choice = W.ToggleButtons(
            options=list(prediction.options),
            value=None,
            description="your answer",
            style={"description_width": "initial"},
        )
        self.reveal = W.Button(description="Reveal", button_style="info", tooltip="show the computed answer")
        self.answer = W.HTML()
        self.reveal.on_click(lambda _: self.show_answer())
        question = W.HTML(f"<b>Predict:</b> {html.escape(prediction.question)}")
        super().__init__([question, self.choice, self.reveal, self.answer])

    def show_answer(self) -> None:
        p = self.prediction
        if self.choice.value is None:
            verdict = "You did not pick one."
        elif self.choice.value == p.answer:
            verdict = "Right."
        else:
            verdict = f"Your answer was {html.escape(self.choice.value)}: not quite."
        self.answer.value = (
            f"<p>{verdict} The answer is <b>{html.escape(p.answer)}</b>: {html.escape(p.why)}.</p>"
        )
