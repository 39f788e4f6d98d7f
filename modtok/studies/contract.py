"""The study contract: what every paper's study provides, under one set of names.

A *study* is the code behind one notebook's paper study (``modtok/studies/``): it wires an
algorithm to data, the paper's setting and its evaluation, and ends in the notebook's
"paper vs here" table. Every study is a subclass of :class:`Study` and provides:

==================  ============================================================================
``name``            its key in ``paper_figures.toml`` (where its claims are) and the name of
                    its saved table (``reports/paper_vs_here/<name>.json``)
``paper``           the :class:`Paper` it reproduces (a file of ``../shared/papers``, a title)
``notebook``        the notebook whose last cell builds its table (``notebooks/<notebook>.py``)
``figures``         the claims file (default :data:`FIGURES`, ``paper_figures.toml``)
``rows(...)``       its per-language rows, one per (language, tokenizer), built by the one
                    shared builder :func:`modtok.evaluation.metrics.language_table_of`: a
                    metric added to :data:`modtok.evaluation.metrics.LANGUAGE_METRICS`
                    is a column of every study's rows
``setting(...)``    its setting, in the fields of the paper's (``paper_vs_here.SETTING_FIELDS``:
                    data, size, vocabulary, ...), built from the run's own configuration
``measured(...)``   its measured values keyed by claim name: a float (a point estimate), a
                    ``paper_vs_here.Measured`` (with its interval), ``NotMeasured(why)`` or
                    ``NotComparable(why)``
``reasons(...)``    for each measured claim that does not hold, the measured reason
                    (``{claim: reason}``; a claim without one reads "reason not measured")
``cache_note()``    one line: what came from the results cache (:mod:`modtok.cache`), and when
==================  ============================================================================

The arguments of ``rows``, ``setting``, ``measured`` and ``reasons`` are the study's own (a
language subset and a budget, a settings object, the results of its sections): the names
are the contract, so a reader finds the same four things in every study. ``_once`` is the
one memo every study shares (remembered in the object, and kept in the results cache).

One table of a study is not built by the row builder, by design: notebook 07's Table V
(:func:`modtok.studies.pretoken_floor.cross_script.language_row`, the source of its
cross-script claims). A metric of :data:`~modtok.evaluation.metrics.LANGUAGE_METRICS` is
``f(lang, e, ref)``: one tokenizer's encoding ``e`` of one language's lines (``ref``: the
reference tokenizer's encoding of the same lines). A Table V row is one (base, language)
across three tokenizers of that language (the original, its R1 and R2 extensions learned
on the language's text), and its columns are of other shapes:

- ``premium``, ``premium_ci``, ``R1_premium``, ``R1_ci``, ``R2_premium``, ``R2_ci``,
  ``R2_strict_premium``: the language's tokens over English's on aligned lines, so two
  texts under one tokenizer, the interval a bootstrap over the line pairs;
- ``floor``, ``floor_repaired``: the language's pre-tokens over English's tokens (the same
  two texts), a bound set by the pre-tokenizer's regex, not by the vocabulary;
- ``R1_learned``, ``R1_kept``, ``R2_learned``, ``R2_kept``, ``strict_share``, ``filter``,
  ``K``: facts of the extensions' training and filtering, no encoding at all;
- ``english_unchanged``, ``r1_equals_r2``: identities between two tokenizers' ids;
- ``mark_initial``: the share of the original's tokens that begin with a combining mark,
  the one column of the registry's shape, kept out of it: it is Table V's measure of the
  original regex on scripts with marks, and as a registry column every study's rows would
  carry it;
- ``base``, ``language``, ``name``, ``script``: which row it is.

The per-(language, tokenizer) rows of notebook 07's tokenizers come from its study's
``rows`` like every study's (:func:`modtok.studies.pretoken_floor.floor.language_rows`).
``tests/test_contract.py`` checks that every column of a Table V row is named above, so a
new column is placed in one of these kinds or in the registry.

A study registers itself by being defined (:func:`declared` lists them all), so the
reproduction page (:mod:`modtok.ui.report`) and the paper-vs-here table
(:mod:`modtok.studies.paper_vs_here`) find a new one without an edit. A new paper's
notebook is three files and its algorithm: the study (a module under ``modtok/studies/``
with its :class:`Study`), its claims (``paper_figures.toml``), the notebook
(``notebooks/NN_<name>.py``).

>>> class Demo(Study):
...     name, paper, notebook = "demo_study", Paper("demo.txt", "A demo paper"), "99_demo"
...     def rows(self): return []
>>> declared()["demo_study"] is Demo, Demo.paper.title
(True, 'A demo paper')
>>> _ = REGISTRY.pop("demo_study")                    # (the doctest leaves no study behind)
"""

from __future__ import annotations

import ast
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from modtok.errors import ConfigError

FIGURES = Path(__file__).with_name("paper_figures.toml")  # the papers' figures, one table per study


@dataclass(frozen=True)
class Paper:
    """A paper a study reproduces: its full text's file in the papers' folder
    (``../shared/papers``, or ``$MODTOK_PAPERS``) and a short title."""

    file: str
    title: str


REGISTRY: dict[str, type[Study]] = {}  # study name -> its class, filled as study classes are defined


class Study(ABC):
    """The base of every study (the module docstring is the guide). A subclass that sets
    ``name`` registers itself; ``rows``, ``setting`` and ``measured`` are the study's to
    define, with its own arguments (a study without one of them cannot be made: Python
    names the missing method); ``reasons`` and ``cache_note`` have defaults."""

    name: ClassVar[str]
    paper: ClassVar[Paper]
    notebook: ClassVar[str]
    figures: ClassVar[Path] = FIGURES
    results = None  # a modtok.cache.Results, where the study keeps its long computations

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:  # an intermediate base, not a study
            return
        for attr, kind in (("paper", Paper), ("notebook", str)):
            if not isinstance(getattr(cls, attr, None), kind):
                raise ConfigError(f"study {cls.name!r} ({cls.__qualname__}): {attr} must be a {kind.__name__}")
        other = REGISTRY.get(cls.name)
        if other is not None and other.__qualname__ != cls.__qualname__:  # a module reloaded is the same study
            raise ConfigError(f"study {cls.name!r} is declared twice: {other.__qualname__} and {cls.__qualname__}")
        REGISTRY[cls.name] = cls

    @abstractmethod
    def rows(self, *args, **kwargs) -> list[dict]:
        """Per-language rows from :func:`modtok.evaluation.metrics.language_table_of`."""

    @abstractmethod
    def setting(self, *args, **kwargs) -> dict[str, str]:
        """This run's setting, in the fields of the paper's."""

    @abstractmethod
    def measured(self, *args, **kwargs) -> dict:
        """The measured value of each claim (``{claim: float | Measured | NotMeasured}``)."""

    def reasons(self, here, *args, **kwargs) -> dict[str, str]:
        """The measured reason of each claim of ``here`` that does not hold (none by default)."""
        return {}

    def cache_note(self) -> str:
        """One line: which results came from the results cache, and when they were computed."""
        if self.results is None:
            return "nothing of this study is kept in the results cache"
        return self.results.note()

    def _once(self, key: tuple, make: Callable, keep: bool = False):
        """``make()``, computed on the first call with ``key`` and remembered; ``keep``: in the
        results cache too (:mod:`modtok.cache`, under ``key[0]`` with the parameters
        ``key[1:]``), so a new kernel reads it back (trainings and evaluations; a sample or
        a count is quicker made again than read)."""
        memo = self.__dict__.setdefault("_memo", {})
        if key not in memo:
            memo[key] = self.results.get(key[0], key[1:], make) if keep else make()
        return memo[key]


def declared() -> dict[str, type[Study]]:
    """Every study, by name, in notebook order. The study modules are imported to find them:
    those of ``modtok.studies`` and its packages (the lessons aside: they hold no paper's
    study) whose source imports this module (:func:`_imports_contract`); a study defined
    elsewhere (a test's fixture) is in it once it is defined. A module that declares no study
    is not imported: the continued-pretraining package would cost ``modtok report`` torch (5.6 s
    of its import at load 10) for nothing. A study module keeps torch out of its own imports (see
    ``modular_tokenizers/lm.py``); ``tests/test_contract.py`` checks that this call loads none."""
    # the files, not pkgutil.walk_packages: that imports every package to look inside it (the
    # continued-pretraining package imports torch)
    here = Path(__file__).parent
    for path in sorted(here.rglob("*.py")):
        parts = path.relative_to(here).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]  # a package's own module
        if parts[:1] != ("lessons",) and _imports_contract(path):
            importlib.import_module(".".join(("modtok.studies", *parts)))
    return dict(sorted(REGISTRY.items(), key=lambda kv: (kv[1].notebook, kv[0])))


def _imports_contract(path) -> bool:
    """Whether the module whose source is at ``path`` imports this one (``from
    modtok.studies.contract import ...``, ``from modtok.studies import contract``, or
    relatively, ``from ..contract import ...``), as a module must to declare a study; the
    source is read, not run.

    >>> here = Path(__file__).parent
    >>> _imports_contract(here / "parity_bpe.py"), _imports_contract(here / "setting.py")
    (True, False)
    """
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.module == __name__ or (node.level and node.module == "contract") or \
                (node.module == "modtok.studies" and any(alias.name == "contract" for alias in node.names)):
            return True
    return False


def study(name: str) -> type[Study]:
    """The study declared as ``name`` (the study modules are imported if it is not known yet)."""
    found = REGISTRY.get(name) or declared().get(name)
    if found is None:
        raise ConfigError(f"no study declares the name {name!r} (declared: {', '.join(declared())})")
    return found
