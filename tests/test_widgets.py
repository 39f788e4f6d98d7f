"""modtok.ui.widgets: the language picker and the panel's display path (headless).

What JupyterLab draws is checked by tests/browser; here the contract the browser
relies on: one recompute per user action, and every redraw replaces each output
(an empty HTML output first, then the new object) under the same display id.
"""

import IPython.display
import plotly.graph_objects as go
import pytest

from modtok import progress
from modtok.errors import ModtokError, UnknownLanguageError
from modtok.ui import plots, widgets

LANGS = ["eng_Latn", "npi_Deva", "deu_Latn", "rus_Cyrl"]


def test_picker_one_click_is_one_recompute():
    picker = widgets.language_picker(LANGS, ["npi_Deva"])
    panel = widgets.Panel(lambda langs: langs, {"langs": picker})
    picker._boxes["rus_Cyrl"].value = True  # what a click on the checkbox does
    assert panel.result == ("npi_Deva", "rus_Cyrl") and panel.runs == 2
    picker.select_all()
    assert panel.result == tuple(LANGS) and panel.runs == 3
    picker.select_none()
    assert panel.result == () and panel.runs == 4
    assert not any(box.value for box in picker._boxes.values())


def test_picker_value_is_in_option_order_and_ticks_the_boxes():
    picker = widgets.language_picker(LANGS, [])
    picker.value = ("deu_Latn", "eng_Latn")
    assert picker.value == ("eng_Latn", "deu_Latn")
    assert [c for c, box in picker._boxes.items() if box.value] == ["eng_Latn", "deu_Latn"]
    assert "2 of 4" in picker._title.value
    with pytest.raises(UnknownLanguageError, match="xxx_Latn"):
        picker.value = ("xxx_Latn",)


def test_picker_search_limits_all_and_none():
    picker = widgets.language_picker(LANGS, ["eng_Latn"])
    picker._search.value = "cyrl"
    assert [c for c, box in picker._boxes.items() if box.layout.display != "none"] == ["rus_Cyrl"]
    picker.select_all()
    assert picker.value == ("eng_Latn", "rus_Cyrl")
    picker._search.value = "eng"
    picker.select_none()
    assert picker.value == ("rus_Cyrl",)


def test_controls_fire_on_release_not_while_dragging_or_typing():
    assert not widgets.budget_slider(1, 0, 5, 1).continuous_update
    assert not widgets.float_slider(0.5, 0.0, 1.0, 0.1).continuous_update
    assert not widgets.text("eine").continuous_update
    for w in (widgets.choice(["a", "b"], description="language of the word"), widgets.text("", "word")):
        assert w.style.description_width == "initial"  # never cut to "language …"


class _Handle:
    def __init__(self, log, data):
        self.log = log
        log.append(("display", data))

    def update(self, obj, raw=False):
        self.log.append(("update", obj if raw else getattr(obj, "data", obj)))


def test_every_redraw_replaces_the_figure_with_a_blank_first_and_the_table_in_place(monkeypatch):
    log = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, display_id=None: _Handle(log, obj))
    k = widgets.budget_slider(1, 1, 9, 1, description="k")

    def render(k):
        return [IPython.display.HTML(f"<table><tr><td>{k}</td></tr></table>"), go.Figure(layout_title_text=f"k = {k}")]

    panel = widgets.Panel(lambda k: k, {"k": k}, render)
    panel.show()
    assert len(log) == 3  # the controls, the table, the figure
    for value in (7, 1):  # computed, then re-shown from the memo: the same messages
        del log[:]
        k.value = value
        assert [kind for kind, _ in log] == ["update"] * 3
        table, blank, figure = (obj for _, obj in log)
        assert f"<td>{value}</td>" in table  # HTML re-renders in place: no blank before it
        assert blank == ""  # an empty HTML output: Lab builds a fresh renderer for the figure
        assert figure[plots.PLOTLY_MIME]["layout"]["title"]["text"] == f"k = {value}"
        assert "text/html" in figure  # what nbconvert's HTML reports show
    assert panel.hits == 1


def test_render_may_not_grow_after_show(monkeypatch):
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, display_id=None: _Handle([], obj))
    k = widgets.budget_slider(1, 1, 9, 1)
    panel = widgets.Panel(lambda k: k, {"k": k}, lambda k: [IPython.display.HTML("x")] * k)
    panel.show()
    with pytest.raises(ModtokError, match="render returned 2 objects"):
        k.value = 2


def test_progress_shows_while_fn_runs_and_clears_after(monkeypatch):
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, display_id=None: _Handle([], obj))
    k = widgets.budget_slider(1, 1, 9, 1, description="k")
    seen = []

    def fn(k):  # records what the progress display shows while the work runs
        seen.append((panel.status.value, list(panel.status._dom_classes)) if seen else ("(constructing)", []))
        return k

    panel = widgets.Panel(fn, {"k": k}, lambda k: IPython.display.HTML(f"<b>{k}</b>"))
    panel.show()
    assert panel.status in panel.widget().children
    assert panel.status.value == ""
    k.value = 7
    status, classes = seen[-1]
    assert "computing" in status and "k = 7" in status and "modtok-progress" in classes
    assert panel.status.value == "" and panel.result == 7


# A panel in a real kernel whose work opens with one C call that holds the GIL for ~0.5 s.
_GIL_PANEL = """
import json, time
from modtok.ui.widgets import Panel, budget_slider
BIG = json.dumps([[i, str(i)] for i in range(1_000_000)])
t = time.perf_counter(); json.loads(BIG); LOADS = time.perf_counter() - t
k = budget_slider(1, 1, 9, 1, description="k")
panel = Panel(lambda k: len(json.loads(BIG)) + k, {"k": k}, render=None)
"""


@pytest.mark.slow  # a real ipykernel: a system test
def test_the_status_leaves_the_kernel_before_work_that_holds_the_gil():
    """The kernel sends from its IOPub thread, which needs the GIL: without _send_now
    the status text arrived only once the C call was over (together with the result)."""
    import time

    from jupyter_client.manager import start_new_kernel

    km, kc = start_new_kernel(kernel_name="python3")
    try:
        def run(code: str) -> dict[str, float]:
            """Execute ``code``; the arrival time of each kind of IOPub message (first one)."""
            msg_id = kc.execute(code)
            seen: dict[str, float] = {}
            while True:
                msg = kc.get_iopub_msg(timeout=60)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind = msg["msg_type"]
                if kind == "comm_msg" and "computing" in str(msg["content"]["data"].get("state", {}).get("value", "")):
                    kind = "computing"
                elif kind == "stream":
                    kind = f"stream {msg['content']['text'].strip()}"
                elif kind == "error":
                    raise AssertionError(msg["content"]["traceback"])
                seen.setdefault(kind, time.monotonic())
                if kind == "status" and msg["content"]["execution_state"] == "idle":
                    seen["idle"] = time.monotonic()
                    return seen

        run(_GIL_PANEL)
        loads = float(next(k for k in run("print(LOADS)") if k.startswith("stream")).split()[1])
        seen = run("k.value = 5")
        assert "computing" in seen
        assert loads > 0.2, loads  # the C call is long enough to tell the two apart
        # the status arrives before the work is half done, not with its end
        assert seen["idle"] - seen["computing"] > 0.5 * loads, (seen, loads)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_progress_bars_opened_while_fn_runs_show_in_the_status_one_line_each(monkeypatch):
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, display_id=None: _Handle([], obj))
    monkeypatch.setattr(progress, "TERMINAL_INTERVAL", 0.0)  # every step redraws (else twice a second)
    k = widgets.budget_slider(1, 1, 9, 1, description="k")

    def fn(k):  # an outer loop of k steps, each with an inner one (AdaptMix iterations, BPE merges)
        for _ in progress.bar(range(k), desc="outer", enabled=False):
            for _ in progress.bar(range(2), desc="inner", enabled=False):
                pass
        return k

    panel = widgets.Panel(fn, {"k": k}, lambda k: IPython.display.HTML(f"<b>{k}</b>"))
    panel.show()
    shown = []
    panel.status.observe(lambda change: shown.append(change["new"]), names="value")
    k.value = 3
    assert shown[0] == "<i>computing … k = 3</i>" and shown[-1] == ""
    lines = [value.split("<br>") for value in shown[1:-1]]
    assert all(line[0] == "<i>computing … k = 3</i>" for line in lines)
    assert any(len(line) == 3 and line[1].startswith("outer:  33% 1/3") and line[2].startswith("inner: 100% 2/2")
               for line in lines)  # the outer bar first, then the inner one
    assert lines[-2][1].startswith("outer: 100% 3/3") and len(lines[-2]) == 2  # the inner bar closed first
    assert lines[-1] == ["<i>computing … k = 3</i>"]  # then the outer one: fn returns, the outputs redraw
    with progress.bar(range(1), desc="outside", enabled=False) as b:  # outside fn: tqdm's own, disabled
        assert b.disable and panel.status.value == ""
    again = widgets.Panel(fn, {"k": widgets.budget_slider(2, 1, 9, 1)}, None)  # the first run opens bars too
    assert again.status.value == ""  # ... and leaves no "computing" behind


def test_progress_keeps_the_error_visible_and_reraises(monkeypatch):
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, display_id=None: _Handle([], obj))
    k = widgets.budget_slider(2, 0, 9, 1, description="k")
    panel = widgets.Panel(lambda k: 10 // k, {"k": k}, lambda r: IPython.display.HTML(str(r)))
    panel.show()
    with pytest.raises(ZeroDivisionError):
        k.value = 0
    assert "k = 0 failed: ZeroDivisionError" in panel.status.value and panel.result == 5
    k.value = 5
    assert panel.status.value == "" and panel.result == 2


def test_a_value_seen_before_is_reshown_from_the_memo_without_recomputing(monkeypatch):
    """The redraw is the same (blank, then the same bundle) but fn and render do not run again;
    memo=0 recomputes every time."""
    log, calls = [], []
    monkeypatch.setattr(IPython.display, "display", lambda obj, raw=False, display_id=None: _Handle(log, obj))
    for memo, computed in ((32, [1, 2]), (0, [1, 2, 1, 2])):
        log.clear(), calls.clear()
        k = widgets.budget_slider(1, 1, 9, 1, description="k")
        panel = widgets.Panel(lambda k: calls.append(k) or k * 10, {"k": k},
                              lambda r: IPython.display.HTML(f"<b>{r}</b>"), memo=memo)
        panel.show()
        k.value = 2
        k.value = 1
        k.value = 2
        assert calls == computed and panel.result == 20 and panel.runs == 4
        shown = [data for what, data in log if what == "update" and data]
        assert shown == ["<b>20</b>", "<b>10</b>", "<b>20</b>"]


def test_05_explore_disables_the_controls_the_chosen_variant_does_not_read():
    """Notebook 05's Explore panel (issue 41): the window and α only for the window variant,
    J / K, the dev lines and the exhaustion rule not for classical BPE; the state follows the
    variant dropdown. And a disabled control does nothing: ``ParityStudy.spec`` gives the same
    run whatever its value (so the greyed-out set is exactly what the study ignores)."""
    from test_study_parity_bpe import _toy

    from modtok.studies import parity_bpe

    study = _toy()
    controls = {"variant": widgets.choice(["base", "window", "ratio", "classical"], description="variant"),
                "setting": widgets.choice([3.3, "balanced"], 3.3, description="mixture"),
                "j_frac": widgets.float_slider(0.0, min=0.0, max=0.9, step=0.1),
                "window": widgets.budget_slider(100, min=10, max=300, step=10),
                "alpha": widgets.float_slider(2.0, min=0.5, max=4.0, step=0.5),
                "dev_lines": widgets.choice([10, study.n_dev], study.n_dev), "vocab": widgets.budget_slider(300, 257, 400, 1),
                "langs": widgets.language_picker(study.langs, study.langs),
                "rule": widgets.choice(list(parity_bpe.RULES), parity_bpe.RULE)}
    panel = widgets.Panel(study.explore, controls, only_for=("variant", parity_bpe.USED_BY))
    disabled = lambda: {n for n, c in controls.items() if getattr(c, "disabled", False)}  # noqa: E731
    assert disabled() == {"window", "alpha"}
    controls["variant"].value = "window"
    assert disabled() == set() and panel.result["key"].variant == "window"
    controls["variant"].value = "classical"
    assert disabled() == {"j_frac", "window", "alpha", "dev_lines", "rule"} and panel.runs == 3
    other = {"j_frac": 0.5, "window": 50, "alpha": 1.0, "dev_lines": 10, "rule": "skip"}
    for variant in parity_bpe.RUN_VARIANTS:
        for name, value in other.items():
            changed = study.spec(variant=variant, **{name: value}) != study.spec(variant=variant)
            assert changed == (variant in parity_bpe.USED_BY[name]), (variant, name)
    with pytest.raises(ModtokError, match="nope"):
        widgets.Panel(study.explore, controls, only_for=("variant", {"nope": ("base",)}))
