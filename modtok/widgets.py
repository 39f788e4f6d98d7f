"""ipywidgets controls shared by the notebooks, and a panel that binds them.

A :class:`Panel` calls a plain function with the controls' values whenever one
changes, keeps the result in ``panel.result`` and redraws its outputs. Because
the callback is an ordinary function and traitlets observers run synchronously,
a notebook can test the widget logic headless:

>>> import ipywidgets as W
>>> k = W.IntSlider(value=2)
>>> panel = Panel(lambda k: k * 10, {"k": k}, render=None)
>>> panel.result
20
>>> k.value = 3
>>> panel.result
30
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ipywidgets as W

from modtok.data import lang_name
from modtok.plots import mimebundle


def language_picker(options: Sequence[str], value: Sequence[str] | None = None, description: str = "languages", rows: int = 8) -> W.SelectMultiple:
    """Multi-select of language codes, labelled "Nepali (npi_Deva)"."""
    return W.SelectMultiple(
        options=[(f"{lang_name(code)} ({code})", code) for code in options],
        value=tuple(value if value is not None else options),
        description=description,
        rows=min(rows, len(options)),
        style={"description_width": "initial"},
    )


def budget_slider(value: int, min: int, max: int, step: int, description: str = "vocab budget") -> W.IntSlider:
    """A vocabulary-budget slider that fires only on release (training is not instant)."""
    return W.IntSlider(
        value=value, min=min, max=max, step=step, description=description,
        continuous_update=False, style={"description_width": "initial"},
    )


def choice(options: Sequence, value=None, description: str = "") -> W.Dropdown:
    """A dropdown."""
    return W.Dropdown(options=list(options), value=value if value is not None else options[0], description=description)


class Panel:
    """Controls + a compute function + the outputs it renders.

    ``fn(**{name: control.value})`` runs once at construction and again on
    every change. ``render(result)`` returns what to show: one displayable
    object or a list of them (an HTML table, a plotly figure, ...).
    :meth:`show` displays the controls and those objects; after a change the
    same outputs are updated in place (IPython display handles, which also work
    in headless execution, unlike figures captured in an ``Output`` widget).
    """

    def __init__(self, fn: Callable, controls: dict[str, W.ValueWidget], render: Callable | None = None):
        self.fn, self.controls, self.render = fn, controls, render
        self.result = None
        self.runs = 0
        self._handles: list = []
        for control in controls.values():
            control.observe(self._changed, names="value")
        self.update()

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _rendered(self) -> list:
        if self.render is None:
            return []
        shown = self.render(self.result)
        return list(shown) if isinstance(shown, (list, tuple)) else [shown]

    def update(self):
        self.result = self.fn(**self.values())
        self.runs += 1
        if self._handles:
            from IPython.display import HTML

            shown = self._rendered()
            shown += [HTML("")] * (len(self._handles) - len(shown))
            for handle, obj in zip(self._handles, shown):
                data, raw = mimebundle(obj)
                handle.update(data, raw=raw)
        return self.result

    def _changed(self, _change) -> None:
        self.update()

    def widget(self) -> W.Widget:
        """The controls in a row."""
        return W.HBox(list(self.controls.values()))

    def show(self) -> None:
        """Display the controls, then the rendered result (updated on every change)."""
        from IPython.display import display

        display(self.widget())
        self._handles = []
        for obj in self._rendered():
            data, raw = mimebundle(obj)
            self._handles.append(display(data, raw=raw, display_id=True))
