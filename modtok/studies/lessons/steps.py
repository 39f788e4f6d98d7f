r"""What a lesson hands the stepper and the prediction widget: plain records.

A lesson's trace is a list of :class:`Step`: a title, a one-line note, the raw values the
step computed (``data``, what the tests compare with the fast engine) and what to show
(``blocks``: tables and rows of token pills, plain dicts that :mod:`modtok.ui.stepper`
renders). A :class:`Prediction` is a question with options, the computed answer and a
one-line why.

>>> step = Step("merge 1", "u+g is the most frequent pair", [table(["pair", "count"], [["u g", 20]], mark=0)])
>>> step.blocks[0]["kind"], step.blocks[0]["mark"]
('table', 0)
>>> label(b"ab"), label("न".encode()[:2])       # a token's text, or its bytes when it splits a character
('ab', '\\xe0\\xa4')
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from modtok.errors import UsageError


@dataclass(frozen=True)
class Step:
    """One state of a worked run: ``title``, ``note`` (one line), ``blocks`` (what to show),
    ``data`` (the values computed, for checks)."""

    title: str
    note: str
    blocks: list[dict]
    data: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Prediction:
    """ "Predict, then run": ``question``, ``options`` (strings), the computed ``answer``
    (one of the options) and ``why`` (one line)."""

    question: str
    options: list[str]
    answer: str
    why: str

    def __post_init__(self):
        if self.answer not in self.options:  # a lesson bug, never the learner's
            raise UsageError(
                f"prediction {self.question!r}: answer {self.answer!r} is not among {self.options}"
            )


def table(
    columns: Sequence[str], rows: Sequence[Sequence], mark: int | None = None, caption: str = ""
) -> dict:
    """A table block; ``mark`` is the index of the row to highlight (the chosen one)."""
    return {
        "kind": "table",
        "columns": list(columns),
        "rows": [list(r) for r in rows],
        "mark": mark,
        "caption": caption,
    }


def pills(name: str, tokens: Sequence[str], mark: Sequence[int] = ()) -> dict:
    """A row of token pills named ``name``; ``mark`` lists the indexes to highlight."""
    return {"kind": "pills", "name": name, "tokens": list(tokens), "mark": list(mark)}


def label(token: bytes) -> str:
    """A token as text, or as its bytes (``\\xe0\\xa4``, as Python writes them) when it is not
    whole UTF-8: a piece of a character. No space in it, so a stepper's visible spaces stay text's."""
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(f"\\x{b:02x}" for b in token)


def is_piece(text: str) -> bool:
    """Whether a :func:`label` shows bytes (a piece of a character) rather than text.

    >>> is_piece(label("न".encode()[:2])), is_piece(label(b"ab"))
    (True, False)
    """
    return text.startswith("\\x")


def comparison(engine: str, rows: Sequence[tuple[str, object, object]]) -> Step:
    """The step that shows the same toy through the fast ``engine``: one row per quantity,
    ``(what, naive reference's value, engine's value)``, and whether they agree.

    >>> step = comparison("the numba engine", [("merges", [1, 2], [1, 2]), ("count", 3, 4)])
    >>> step.data["same"], step.blocks[0]["rows"][1][-1]
    (False, 'NO')
    """
    same = all(a == b for _, a, b in rows)
    note = (
        "the naive reference and the engine agree on every row"
        if same
        else "the naive reference and the engine DIFFER (a bug: please report it)"
    )
    return Step(
        f"the same toy through {engine}",
        note,
        [
            table(
                ["what", "naive reference", engine, "same"],
                [[what, str(a), str(b), "yes" if a == b else "NO"] for what, a, b in rows],
            )
        ],
        {"same": same, "rows": list(rows)},
    )
