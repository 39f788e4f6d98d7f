"""Plotly figures and HTML tables shared by the notebooks.

Figures are plain ``plotly.graph_objects.Figure`` objects: notebooks call
``fig.show()``. Call :func:`setup` once at the top of a notebook so figures
render both in JupyterLab and in the HTML reports written by ``make demo``
(plotly.js is embedded in the page, no network needed).

>>> fig = grouped_bars([{"lang": "a", "tok": "x", "nsl": 1.2}], x="lang", y="nsl", color="tok")
>>> [t.name for t in fig.data]
['x']
"""

from __future__ import annotations

import html
import json
import math
import sys
from collections.abc import Mapping, Sequence

import plotly.graph_objects as go
import plotly.io as pio
from plotly.subplots import make_subplots

from modtok.bpe.tree import Node, label
from modtok.text.data import lang_name


def setup() -> None:
    """Render figures in JupyterLab (mimetype) and in exported HTML (inline plotly.js).

    Embeds plotly.js once, in the output of the calling cell, so that every
    later figure (also those updated in place by widget panels) draws offline.
    """
    # plotly's renderers import nbformat -> jsonschema, whose format checkers import
    # rfc3987_syntax (installed with jupyter-events' jsonschema[format-nongpl]), which builds a
    # grammar on import: 4.2-5.3 s of every kernel's first cell against 0.4 s without it
    # (`import nbformat` five times each, load 9-10, bench/RESULTS.md "Session 17"). Neither
    # plotly nor nbformat checks the IRI formats it serves, so it is hidden while they import,
    # then made importable again.
    hidden = "rfc3987_syntax" not in sys.modules and "jsonschema" not in sys.modules
    if hidden:
        sys.modules["rfc3987_syntax"] = None  # an import of it raises ImportError meanwhile
    try:
        pio.renderers.default = "plotly_mimetype+notebook"
        pio.templates.default = "plotly_white"
        # What pio.show() does before its first figure (plotly has no public name for it).
        pio.renderers._activate_pending_renderers()
    finally:
        if hidden:
            del sys.modules["rfc3987_syntax"]


PLOTLY_MIME = "application/vnd.plotly.v1+json"


def mimebundle(obj):
    """``(data, raw)`` for ``IPython.display.display``: a plotly figure becomes its
    mime bundle (so it can be shown and updated under a display id), anything
    else is passed through."""
    if isinstance(obj, go.Figure):
        bundle = {
            PLOTLY_MIME: json.loads(obj.to_json()),  # JupyterLab
            "text/html": obj.to_html(include_plotlyjs=False, full_html=False),  # HTML reports
        }
        return bundle, True
    return obj, False


# The legend in one wrapped row between title and plot: at the right (plotly's
# default) long tokenizer names squeeze the plot and get cut in a narrow output.
_LEGEND_ABOVE = dict(legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0), margin=dict(t=110))


def grouped_bars(
    rows: Sequence[dict],
    x: str,
    y: str,
    color: str,
    title: str = "",
    hline: float | None = None,
    x_label: dict | None = None,
    ci: tuple[str, str] | None = None,
) -> go.Figure:
    """One bar per (x, color) pair, grouped by ``x``; ``hline`` draws a dashed reference.

    ``x_label`` maps raw x values to display labels (e.g. language names); ``ci`` names the
    keys of each row's interval ``(lo, hi)``, drawn as error bars.
    """
    fig = go.Figure()
    series = list(dict.fromkeys(r[color] for r in rows))
    for name in series:
        part = [r for r in rows if r[color] == name]
        fig.add_bar(
            name=str(name),
            x=[(x_label or {}).get(r[x], r[x]) for r in part],
            y=[r[y] for r in part],
            error_y=None if ci is None else dict(type="data", symmetric=False,
                                                 array=[r[ci[1]] - r[y] for r in part],
                                                 arrayminus=[r[y] - r[ci[0]] for r in part]),
        )
    fig.update_layout(barmode="group", title=title, xaxis_title=x, yaxis_title=y, legend_title=color, **_LEGEND_ABOVE)
    if hline is not None:
        fig.add_hline(y=hline, line_dash="dash", line_color="gray")
    return fig


def lines(curves: dict[str, tuple[Sequence[float], Sequence[float]]], title: str = "", x_title: str = "", y_title: str = "") -> go.Figure:
    """One line per named ``(xs, ys)`` curve."""
    fig = go.Figure()
    for name, (xs, ys) in curves.items():
        fig.add_scatter(x=list(xs), y=list(ys), mode="lines+markers", name=name)
    fig.update_layout(title=title, xaxis_title=x_title, yaxis_title=y_title, **_LEGEND_ABOVE)
    return fig


def _fmt(value, floatfmt: str) -> str:
    if isinstance(value, float):
        return "—" if math.isnan(value) else floatfmt.format(value)
    return html.escape(str(value))


def table_html(rows: Sequence[dict], columns: Sequence[str] | None = None, floatfmt: str = "{:.3f}") -> str:
    """An HTML table of ``rows`` (dicts); NaN prints as an em dash (undefined).

    >>> table_html([{"a": 1, "b": float("nan")}])
    '<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>—</td></tr></tbody></table>'
    """
    columns = list(columns or (rows[0].keys() if rows else []))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_fmt(r.get(c, ''), floatfmt)}</td>" for c in columns) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def table(rows: Sequence[dict], columns: Sequence[str] | None = None, floatfmt: str = "{:.3f}"):
    """:func:`table_html` wrapped for display in a notebook."""
    from IPython.display import HTML

    return HTML(table_html(rows, columns, floatfmt))


def nsl_panel(rows: Sequence[dict], long: Sequence[dict], y: str, title: str, langs: Sequence[str]) -> list:
    """What a per-language NSL panel shows: its table and the grouped bars of
    ``long`` (one row per language x tokenizer), NSL = 1 dashed; a hint when
    no language is selected (the same two outputs, as a Panel needs)."""
    from IPython.display import HTML

    from modtok.text.data import lang_name

    if not rows:
        return [HTML("<i>select at least one language</i>"), HTML("")]
    fig = grouped_bars(long, x="lang", y=y, color="tokenizer", hline=1.0, title=title,
                       x_label={lang: lang_name(lang) for lang in langs})
    return [table(rows), fig]


def merge_trees(word: str, traces: dict[str, list[list[Node]]], colors: dict[str, dict] | None = None,
                title: str = "") -> go.Figure:
    """One icicle per tokenizer (``traces``: name -> one :func:`modtok.bpe.tree.trace`
    per pre-token of ``word``): the word on top, its tokens below it, each split
    into the two tokens its merge joined, down to the bytes.

    ``colors[name][(piece, span)]`` colours one box (e.g. a token that cannot
    form elsewhere); tokens are dark blue, inner merges light blue, bytes grey.

    >>> from modtok.bpe.model import BPEModel
    >>> from modtok.bpe.tree import trace
    >>> fig = merge_trees("abc", {"m": [trace(BPEModel([(97, 98)]), b"abc")]})
    >>> list(fig.data[0].labels), list(fig.data[0].parents)
    (['abc', 'ab', 'a', 'b', 'c'], ['', 'word', '0:0-2', '0:0-2', 'word'])
    """
    colors = colors or {}
    fig = make_subplots(rows=len(traces), cols=1, specs=[[{"type": "domain"}]] * len(traces), vertical_spacing=0.06,
                        subplot_titles=[f"{name} ({sum(map(len, t))} tokens)" for name, t in traces.items()])
    for row, (name, pieces) in enumerate(traces.items(), start=1):
        ids, labels, parents, values = ["word"], [label(word.encode())], [""], [len(word.encode())]
        fill, hover = ["#dddddd"], ["the word"]
        for p, nodes in enumerate(pieces):
            for top in nodes:
                stack = [(top, "word")]
                while stack:  # parents before children, left child first
                    n, parent = stack.pop()
                    nid = f"{p}:{n.start}-{n.end}"
                    ids.append(nid); labels.append(label(n.token)); parents.append(parent); values.append(len(n.token))
                    default = "#4c78a8" if n is top else ("#9ecae9" if n.children else "#e8eef5")
                    fill.append(colors.get(name, {}).get((p, n.span), default))
                    hover.append("byte" if n.step is None else f"merge rank {n.rank}, step {n.step} of the run")
                    stack += [(c, nid) for c in reversed(n.children)]
        fig.add_trace(go.Icicle(ids=ids, labels=labels, parents=parents, values=values, branchvalues="total",
                                marker=dict(colors=fill), tiling=dict(orientation="v"), hovertext=hover,
                                hovertemplate="%{label}<br>%{hovertext}<extra></extra>", textinfo="label",
                                textfont=dict(size=15), sort=False), row=row, col=1)
    fig.update_layout(height=330 * len(traces), margin=dict(t=60, l=10, r=10, b=10), title=title)
    return fig


def stacked_bars(
    series: dict[str, tuple[Sequence, Sequence[float]]],
    title: str = "",
    x_title: str = "",
    y_title: str = "",
) -> go.Figure:
    """One stacked bar per x: each named ``(xs, ys)`` series is one layer
    (e.g. each language's share of a training mixture, per iteration)."""
    fig = go.Figure()
    for name, (xs, ys) in series.items():
        fig.add_bar(x=list(xs), y=list(ys), name=str(name))
    fig.update_layout(barmode="stack", title=title, xaxis_title=x_title, yaxis_title=y_title)
    return fig


# --- modular tokenizers (notebooks 01-04; data from modtok.studies.modular_tokenizers)


def union_boxes(spread: dict[int, dict[str, list[float]]], title: str = "") -> go.Figure:
    """Box plots (all points shown) of the mean NSL of union subtokenizers: one box per
    kind and number of languages n (``spread``: n -> kind -> values), NSL = 1 dashed.

    >>> fig = union_boxes({1: {"sequential": [1.0], "concatenation": [1.0]}, 2: {"sequential": [1.0], "concatenation": [1.2]}})
    >>> [(t.name, list(t.x)) for t in fig.data]
    [('sequential', [1, 2]), ('concatenation', [1, 2])]
    """
    fig = go.Figure()
    kinds = list(dict.fromkeys(kind for by_kind in spread.values() for kind in by_kind))
    for kind in kinds:
        xs = [n for n in spread for _ in spread[n][kind]]
        fig.add_box(x=xs, y=[v for n in spread for v in spread[n][kind]], name=kind, boxpoints="all", jitter=0.3)
    fig.update_layout(boxmode="group", title=title, xaxis_title="languages in the union (n)",
                      yaxis_title="mean NSL vs monolingual")
    fig.add_hline(y=1.0, line_dash="dash", line_color="gray")
    return fig


def concatenation_trees(result: dict) -> go.Figure:
    """The merge trees of :meth:`SequentialStudy.explore`'s ``result``
    (:mod:`modtok.studies.modular_tokenizers.sequential`). Red: tokens of the language's
    own tokenizers that cannot form under concatenation; orange: the merge in the way."""
    from modtok.text.data import lang_name

    red = {span: "#e45756" for span in result["blocked"]}
    orange = {span: "#f58518" for span in result["blockers"]}
    return merge_trees(
        result["word"], result["traces"], colors={"monolingual": red, "sequential": red, "concatenated": orange},
        title=f"Merge trees of «{label(result['word'].encode())}» ({lang_name(result['lang'])}) "
              f"in the union {' + '.join(result['order'])}")


def word_explorer(result: dict) -> list:
    """What the merge-hierarchy explorer shows for :meth:`SequentialStudy.explore`'s
    ``result``: the segmentations, why concatenation differs, the trees."""
    from IPython.display import HTML

    from modtok.studies.modular_tokenizers.sequential import segmentation_rows

    items = "".join(f"<li>{html.escape(r)}</li>" for r in result["reasons"])  # a reason may show "<e0 a4>"
    items = items or "<li>all tokens of the language's own tokenizers form under concatenation</li>"
    return [table(segmentation_rows(result)), HTML(f"<b>Why concatenation differs:</b><ul>{items}</ul>"),
            concatenation_trees(result)]


def vocab_growth(rows: Sequence[dict], title: str = "") -> go.Figure:
    """Global vocabulary size vs languages, from :meth:`SequentialStudy.vocab_growth`'s rows:
    sequential, concatenation and the no-sharing bound; the languages' own vocabularies without
    sharing too where they stopped short of k (the bound then is not what sharing saves)."""
    ns = [r["n"] for r in rows]
    curves = {"sequential": (ns, [r["sequential"] for r in rows]),
              "concatenation": (ns, [r["concatenation"] for r in rows]),
              "no sharing: 256 + n·(k − 256)": (ns, [r["no sharing"] for r in rows])}
    if any(r.get("no sharing, as trained", r["no sharing"]) < r["no sharing"] for r in rows):
        curves["no sharing, as trained: 256 + Σ(|V_ℓ| − 256)"] = (ns, [r["no sharing, as trained"] for r in rows])
    return lines(curves, title=title, x_title="languages", y_title="global vocabulary size")


def subtokenizer_bars(rows: Sequence[dict], title: str = "",
                      columns: Sequence[str] = ("subtokenizer", "full merged")) -> go.Figure:
    """Grouped NSL bars per language (rows with a ``language`` key), one bar per NSL column
    of ``columns``, NSL = 1 dashed."""
    bars = [{"language": r["language"], "tokenizer": c, "NSL": r[c]} for r in rows for c in columns]
    return grouped_bars(bars, x="language", y="NSL", color="tokenizer", hline=1.0, title=title)


def sampling_explorer(result: dict) -> list:
    """What notebook 04's sampling explorer shows for ``sampling_summary``'s ``result``
    (:mod:`modtok.studies.modular_tokenizers.lm`): the scheme's name, its table and the
    shares of subtokenizer kinds; the error in bold instead when the setting is impossible."""
    from IPython.display import HTML

    if result["error"]:
        return [HTML(f"<b>{html.escape(result['error'])}</b>"), HTML(""), HTML("")]
    fig = grouped_bars([dict(r, scheme=result["name"]) for r in result["rows"]], x="subtokenizer", y="share",
                       color="scheme", title=f"{result['name']}: subtokenizers of 500 batches")
    return [HTML(f"<b>{html.escape(result['name'])}</b>"), table(result["rows"], floatfmt="{:.3f}"), fig]


# --- AdaptMix (notebook 06)


def language_curves(steps: Sequence[Mapping[str, float]], langs: Sequence[str], title: str = "",
                    y_title: str = "", x_title: str = "iteration") -> go.Figure:
    """One curve per language across iterations, ``steps[i][lang]`` at x = i
    (e.g. each iteration's dev fertility); languages by their English names.

    >>> [t.name for t in language_curves([{"hin_Deva": 2.0}, {"hin_Deva": 1.9}], ["hin_Deva"]).data]
    ['Hindi']
    """
    its = list(range(len(steps)))
    return lines({lang_name(lang): (its, [s[lang] for s in steps]) for lang in langs},
                 title=title, x_title=x_title, y_title=y_title)


def language_layers(steps: Sequence[Mapping[str, float]], langs: Sequence[str], title: str = "",
                    y_title: str = "", x_title: str = "iteration") -> go.Figure:
    """One stacked bar per iteration i, one layer per language: ``steps[i][lang]``
    (e.g. the characters or the budget each language got)."""
    its = list(range(len(steps)))
    return stacked_bars({lang_name(lang): (its, [s[lang] for s in steps]) for lang in langs},
                        title=title, x_title=x_title, y_title=y_title)


def adaptmix_explorer(result: Mapping) -> list:
    """What notebook 06's widget shows for a result of
    :meth:`modtok.studies.adaptmix.AdaptMixStudy.explore`: its table and the dev
    fertility per iteration (a note instead when fewer than two languages are picked)."""
    from IPython.display import HTML

    if result.get("ask"):
        return [HTML(f"<i>{html.escape(result['ask'])}</i>")]
    if not result["rows"]:
        return [HTML("<i>select at least two languages</i>")]
    h = result["history"]
    fig = language_curves([s["fertility"] for s in h.steps], h.langs, y_title="tokens per word",
                          title=f"dev fertility per iteration ({result['trainer']}{'; ' * bool(result.get('source'))}"
                                f"{result.get('source', '')})")
    return [table(result["rows"], floatfmt="{:.3f}"), fig]


# --- pre-token floor (notebook 07)


def ci_table(rows: Sequence[dict], intervals: dict[str, str], columns: Sequence[str] | None = None):
    """:func:`table` of ``rows`` with each interval ``row[key] = [lo, hi]`` of
    ``intervals`` (``{key: column}``) shown as the text ``"[lo, hi]"`` in a
    column at the end (the interval key itself is left out).

    >>> print(ci_table([{"t": "a", "premium_ci": [1.0, 2.5]}], {"premium_ci": "CI"}).data)
    <table><thead><tr><th>t</th><th>CI</th></tr></thead><tbody><tr><td>a</td><td>[1.000, 2.500]</td></tr></tbody></table>
    """
    shown = [{**{k: v for k, v in r.items() if k not in intervals},
              **{name: "[{:.3f}, {:.3f}]".format(*r[key]) for key, name in intervals.items()}} for r in rows]
    return table(shown, columns)


def segmentation(r: dict) -> list:
    """What the one-sentence panel shows for a row of
    :func:`modtok.studies.pretoken_floor.floor.segmenter`: its table and the UTF-8
    bytes of each token as bars."""
    bars = [{"token": i + 1, "UTF-8 bytes": len(piece), "tokenizer": f"{r['base']} {r['arm']}"}
            for i, piece in enumerate(r["pieces"])]
    fig = grouped_bars(bars, x="token", y="UTF-8 bytes", color="tokenizer",
                       title=f"{r['base']} {r['arm']}, K = {r['K']:,}: {r['tokens']} tokens")
    return [table([r], columns=["base", "arm", "K", "tokens", "segmentation"]), fig]


# --- parity-aware BPE


def parity_explore(result: dict) -> list:
    """What notebook 05's Explore panel shows for a
    :meth:`modtok.studies.parity_bpe.ParityStudy.explore` result: its table and the
    devtest tokens per line of each language (classical vs the chosen variant); a
    hint when fewer than two languages are selected (the same two outputs)."""
    from IPython.display import HTML

    if not result["rows"]:
        return [HTML("<i>select at least two languages</i>"), HTML("")]
    return [table(result["rows"], floatfmt="{:.4f}"),
            grouped_bars(result["per_lang"], x="lang", y="tokens per line", color="tokenizer",
                         title="Devtest tokens per line")]
