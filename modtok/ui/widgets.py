"""ipywidgets controls shared by the notebooks, and a panel that binds them.

A :class:`Panel` calls a plain function with the controls' values whenever one
changes, keeps the result in ``panel.result`` and redraws what it shows.
Because the callback is an ordinary function and traitlets observers run
synchronously, a notebook can test the widget logic headless:

>>> k = budget_slider(2, min=1, max=5, step=1, description="k")
>>> panel = Panel(lambda k: k * 10, {"k": k}, render=None)
>>> panel.result
20
>>> k.value = 3
>>> panel.result, panel.runs
(30, 2)

The controls are shaped for people: sliders and text boxes fire on release /
Enter (``continuous_update=False``), descriptions are never cut, and many
languages are picked in a searchable checkbox grid with "all" and "none":

>>> picker = language_picker(["eng_Latn", "npi_Deva", "deu_Latn"], ["npi_Deva"])
>>> picker.value
('npi_Deva',)
>>> picker.select_all()
>>> picker.value
('eng_Latn', 'npi_Deva', 'deu_Latn')
"""

from __future__ import annotations

import html
import sys
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence

import ipywidgets as W
import traitlets

from modtok import progress
from modtok.errors import ModtokError, UnknownLanguageError
from modtok.text.data import lang_name
from modtok.ui.plots import PLOTLY_MIME, mimebundle

_LABEL = {"description_width": "initial"}  # descriptions at their natural width, never "languag…"


class LanguagePicker(W.VBox):
    """Checkboxes for language codes (labelled "Nepali (npi_Deva)") in a
    scrollable grid, a search box that filters them, and "all" / "none"
    buttons that act on the languages the search shows.

    ``value`` is the tuple of ticked codes in ``options`` order; setting it
    ticks exactly those. One click (or "all", or "none") changes ``value``
    once, so a :class:`Panel` recomputes once.
    """

    value = traitlets.Tuple()

    def __init__(self, options: Sequence[str], value: Sequence[str] | None = None, description: str = "languages"):
        self.options = list(options)
        self._boxes = {
            code: W.Checkbox(value=False, description=f"{lang_name(code)} ({code})", indent=False,
                             layout=W.Layout(width="auto", margin="0 1em 0 0"), style=_LABEL)
            for code in self.options
        }
        self._syncing = False
        self._title = W.HTML()
        self._description = description
        self._search = W.Text(placeholder="search languages", continuous_update=True, layout=W.Layout(width="14em"))
        every, none = W.Button(description="all", layout=W.Layout(width="5em")), W.Button(description="none", layout=W.Layout(width="5em"))
        every.on_click(lambda _: self.select_all())
        none.on_click(lambda _: self.select_none())
        grid = W.GridBox(
            list(self._boxes.values()),
            layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(15em, 1fr))", max_height="10em",
                            overflow="auto", border="1px solid #ddd", padding="2px 4px", width="100%"),
        )
        super().__init__([W.HBox([self._title, self._search, every, none]), grid], layout=W.Layout(width="100%"))
        self.add_class("modtok-language-picker")
        for box in self._boxes.values():
            box.observe(self._ticked, names="value")
        self._search.observe(self._filter, names="value")
        self.observe(self._set, names="value")
        self.value = tuple(self.options if value is None else value)
        self._set(None)

    @traitlets.validate("value")
    def _valid(self, proposal):
        chosen = set(proposal["value"])
        for code in chosen - set(self.options):
            raise UnknownLanguageError(code, self.options)
        return tuple(code for code in self.options if code in chosen)

    def _shown(self) -> list[str]:
        needle = self._search.value.strip().lower()
        return [c for c in self.options if needle in self._boxes[c].description.lower()]

    def select_all(self) -> None:
        """Tick every language the search shows (all of them when it is empty)."""
        self.value = tuple(set(self.value) | set(self._shown()))

    def select_none(self) -> None:
        """Untick every language the search shows."""
        self.value = tuple(set(self.value) - set(self._shown()))

    def _ticked(self, _change) -> None:
        if not self._syncing:
            self.value = tuple(code for code, box in self._boxes.items() if box.value)

    def _set(self, _change) -> None:
        self._syncing = True
        try:
            for code, box in self._boxes.items():
                box.value = code in self.value
        finally:
            self._syncing = False
        self._title.value = f"<b>{self._description}</b> ({len(self.value)} of {len(self.options)})&nbsp;"

    def _filter(self, _change) -> None:
        shown = set(self._shown())
        for code, box in self._boxes.items():
            box.layout.display = None if code in shown else "none"


def language_picker(options: Sequence[str], value: Sequence[str] | None = None, description: str = "languages") -> LanguagePicker:
    """A :class:`LanguagePicker` of ``options`` with ``value`` ticked (default: all)."""
    return LanguagePicker(options, value, description)


def budget_slider(value: int, min: int, max: int, step: int, description: str = "vocab budget") -> W.IntSlider:
    """An integer slider that fires only on release (training is not instant)."""
    return W.IntSlider(value=value, min=min, max=max, step=step, description=description,
                       continuous_update=False, style=_LABEL)


def float_slider(value: float, min: float, max: float, step: float, description: str = "") -> W.FloatSlider:
    """A float slider that fires only on release."""
    return W.FloatSlider(value=value, min=min, max=max, step=step, description=description,
                         continuous_update=False, style=_LABEL)


def text(value: str, description: str = "") -> W.Text:
    """A text box that fires on Enter or when it loses focus, not on every keystroke."""
    return W.Text(value=value, description=description, continuous_update=False, style=_LABEL)


def number(value: int, min: int, max: int, description: str = "") -> W.BoundedIntText:
    """A whole-number box that fires on Enter or when it loses focus."""
    return W.BoundedIntText(value=value, min=min, max=max, description=description, continuous_update=False,
                            style=_LABEL, layout=W.Layout(width="11em"))


def toggle(value: bool, description: str) -> W.Checkbox:
    """A checkbox with its description to its right."""
    return W.Checkbox(value=value, description=description, indent=False, style=_LABEL, layout=W.Layout(width="auto"))


def choice(options: Sequence, value=None, description: str = "") -> W.Dropdown:
    """A dropdown."""
    return W.Dropdown(options=list(options), value=value if value is not None else options[0],
                      description=description, style=_LABEL)


def _short(value, limit: int = 60) -> str:
    """A control's value as the progress message shows it, cut to ``limit`` characters.

    >>> _short(("eng_Latn", "npi_Deva"))
    "('eng_Latn', 'npi_Deva')"
    >>> len(_short(tuple(range(100))))
    60
    """
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _send_now() -> None:
    """Let a kernel send the messages queued so far before the work goes on.

    ipykernel sends every message from its IOPub thread, which needs the GIL; work
    that opens with a long C call holding it (``json.loads`` of a tokenizer's state)
    held the status text back for the whole call: in notebook 01 after a new budget
    the kernel queued it 3-6 ms after the slider's message and the page got it 84-153
    ms later (a kernel-side timeline, session 15), 10-30 ms after a memo hit. In a
    kernel ``sys.stdout.flush()`` waits (GIL released) until the IOPub thread has sent
    everything queued before it (ipykernel's ``OutStream.flush``); elsewhere it only
    flushes stdout."""
    sys.stdout.flush()


class Panel:
    """Controls + a compute function + the outputs it renders.

    ``fn(**{name: control.value})`` runs once at construction and again on
    every change. ``render(result)`` returns what to show: one displayable
    object or a list of them (an HTML table, a plotly figure, ...), the same
    number each time. :meth:`show` displays the controls and those objects.

    The one display path: every object sits in its own output under an
    IPython display id, and after a change each output is *replaced*; a
    plotly figure's output is first replaced by an empty HTML output. That is
    needed for figures: JupyterLab re-uses an output's renderer when the new data
    has the same mimetype, and jupyterlab-plotly's renderer returns early when
    a graph is already drawn (plotly.py #3053), so a figure updated in place
    never redraws; the empty output in between makes Lab build a new renderer.
    A table (HTML) re-renders in place, so it skips that round trip (one
    message less per change: ~20 ms in the browser's mutation timeline).
    Display ids (unlike an ``Output`` widget) also work in headless execution:
    nbconvert keeps the last update, so ``make demo`` reports show the figure.

    Progress: ``panel.status`` (an HTML widget, CSS class ``modtok-progress``,
    in the controls' box) says "computing … k = 3" while ``fn`` runs after a
    change and is emptied once the outputs are redrawn. Below it, every progress bar
    the library opens while ``fn`` runs shows its line, redrawn at most twice a second
    (:func:`modtok.progress.reporting`: "AdaptMix: 30% 3/10 [00:11<00:26, 3.7s/it]"), so
    a change that trains for a minute says how far it is. The status is sent before
    ``fn`` starts (:func:`_send_now`), so it shows while the kernel works
    (tests/browser checks it appears within 0.3 s). If ``fn`` or
    ``render`` raises, the status keeps the error visible (the outputs still
    show the last good result) and the exception propagates, so a headless
    ``control.value = x`` fails loudly. A memo keeps the last ``memo`` results and their
    rendered outputs by the controls' values, so a value seen before is re-shown without
    recomputing (a re-render answers within 0.3 s; the browser bench measured 0.3-0.9 s
    of recomputation on smoke-size panels before). So ``fn`` must be a function of its controls'
    values alone, as every notebook's is (a study method on the notebook's fixed data);
    ``memo=0`` turns it off.

    ``only_for = (selector, {control: values})``: each named control is disabled while the
    selector's value is not among its values (so a control that does nothing for the choice made
    cannot be moved); the state follows every change of the selector:

    >>> kind, n = choice(["mono", "sub"], "mono"), budget_slider(2, 1, 5, 1, description="n")
    >>> panel = Panel(lambda kind, n: kind, {"kind": kind, "n": n}, only_for=("kind", {"n": ("sub",)}))
    >>> n.disabled, panel.runs
    (True, 1)
    >>> kind.value = "sub"
    >>> n.disabled, panel.runs
    (False, 2)

    ``runs`` counts the changes answered, ``hits`` those re-shown from the memo:

    >>> k = budget_slider(2, 0, 9, 1, description="k")
    >>> panel = Panel(lambda k: 10 // k, {"k": k}, render=None)
    >>> k.value = 0
    Traceback (most recent call last):
    ...
    ZeroDivisionError: integer division or modulo by zero
    >>> panel.status.value
    '<span style="color:#b00">k = 0 failed: ZeroDivisionError: integer division or modulo by zero</span>'
    >>> k.value = 5; k.value = 2; k.value = 5
    >>> panel.result, panel.runs, panel.hits
    (2, 4, 2)
    """

    def __init__(self, fn: Callable, controls: dict[str, W.ValueWidget], render: Callable | None = None,
                 memo: int = 32, only_for: tuple[str, Mapping[str, Collection]] | None = None):
        self.fn, self.controls, self.render = fn, controls, render
        self.only_for = only_for
        if only_for is not None:
            unknown = ({only_for[0]} | set(only_for[1])) - set(controls)
            if unknown:
                raise ModtokError(f"only_for names controls the panel does not have: {', '.join(sorted(unknown))}")
            self._enable()
        self.result = None
        self.runs = 0  # changes answered (computed or re-shown)
        self.hits = 0  # of which re-shown from the memo
        self.memo = memo
        self._memo: OrderedDict = OrderedDict()  # values -> (result, rendered bundles or None)
        self._handles: list = []
        self._setting = None  # the change being answered, named in the status while fn runs
        self.status = W.HTML("")
        self.status.add_class("modtok-progress")
        for control in controls.values():
            control.observe(self._changed, names="value")
        self.update()

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _enable(self) -> None:
        """Disable each control of ``only_for`` that the selector's current value does not use."""
        selector, used = self.only_for
        chosen = self.controls[selector].value
        for name, values in used.items():
            self.controls[name].disabled = chosen not in values

    def _rendered(self) -> list:
        if self.render is None:
            return []
        shown = self.render(self.result)
        return list(shown) if isinstance(shown, (list, tuple)) else [shown]

    def _key(self):
        """The controls' values as a memo key (lists as tuples); None when one is unhashable."""
        key = tuple((n, tuple(v) if isinstance(v, list) else v) for n, v in self.values().items())
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def update(self):
        """Recompute ``result`` (or take it from the memo) and, once shown, redraw every output."""
        key = self._key() if self.memo else None
        if key in self._memo:
            self._memo.move_to_end(key)
            self.result, bundles = self._memo[key]
            self.hits += 1
        else:
            with progress.reporting(self._show_progress):
                self.result, bundles = self.fn(**self.values()), None
        self.runs += 1
        if self._handles:
            from IPython.display import HTML

            if bundles is None:
                shown = self._rendered()
                if len(shown) > len(self._handles):
                    raise ModtokError(f"render returned {len(shown)} objects but the panel shows "
                                      f"{len(self._handles)} outputs")
                bundles = [mimebundle(obj) for obj in shown + [HTML("")] * (len(self._handles) - len(shown))]
            for handle, (data, raw) in zip(self._handles, bundles):
                if raw and PLOTLY_MIME in data:
                    handle.update(HTML(""))  # a fresh renderer for the figure (see the class docstring)
                handle.update(data, raw=raw)
        if key is not None:
            self._memo[key] = (self.result, bundles)
            while len(self._memo) > self.memo:
                self._memo.popitem(last=False)
        return self.result

    def _show_progress(self, bars: str) -> None:
        """The status while ``fn`` runs after a change: the change, then each open progress
        bar's line (nothing for the first run, which no one is waiting on in the status)."""
        if self._setting is None:
            return
        lines = [html.escape(line) for line in bars.splitlines()]
        self.status.value = "<br>".join([f"<i>computing … {html.escape(self._setting)}</i>", *lines])

    def _changed(self, change) -> None:
        name = next((n for n, c in self.controls.items() if c is change["owner"]), "a control")
        setting = self._setting = f"{name} = {_short(change['new'])}"
        if self.only_for is not None and name == self.only_for[0]:
            self._enable()
        self._show_progress("")
        _send_now()
        try:
            self.update()
        except Exception as error:
            self.status.value = f'<span style="color:#b00">{html.escape(f"{setting} failed: {type(error).__name__}: {error}")}</span>'
            raise
        finally:
            self._setting = None
        self.status.value = ""

    def widget(self) -> W.Widget:
        """The controls, wrapping onto several rows when they do not fit one."""
        box = W.HBox([*self.controls.values(), self.status],
                     layout=W.Layout(flex_flow="row wrap", align_items="center", width="100%"))
        box.add_class("modtok-panel")
        return box

    def show(self) -> None:
        """Display the controls, then the rendered result (redrawn on every change)."""
        from IPython.display import display

        display(self.widget())
        self._handles = []
        for obj in self._rendered():
            data, raw = mimebundle(obj)
            self._handles.append(display(data, raw=raw, display_id=True))
