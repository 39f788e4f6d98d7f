"""The AdaptMix outer loop: allocate -> sample -> train -> dev fertility -> update.

Iteration 0 trains on the initial mixture (uniform by default, i.e. the UniMix
baseline); every later one on the update (Eqs. 1-4, 7 of
:mod:`modtok.mixture.update`) of the previous. A :class:`History` records what
each iteration trained on and reached; it saves to JSON and a run resumes from
it exactly.

Which iteration is "AdaptMix": the paper iterates "until the optimal mixture
was reached" (§3.4), so its AdaptMix is the converged, i.e. the last, iteration:
:meth:`History.last`, with :meth:`History.converged` saying whether the mixture
had stopped moving. :meth:`History.best` (the iteration with the lowest mean dev
fertility, iteration 0 = UniMix included) is a selection the paper does not
make; report it only as a labelled addition.

When the mixture cannot change what is trained on — the budget T covers every
language's whole text (under the ``"cap"`` policy every mixture then takes all of
it), or the updates are too small to move a whole line — every iteration trains on
the same text and is the same tokenizer: :meth:`History.unchanging` says so, from
what the iterations recorded, and a report says that instead of comparing them.

Languages written without spaces take part with the fertility of
:func:`modtok.evaluation.metrics.pivot_fertility` (:class:`~modtok.mixture.dev.DevSet`),
or are left out only when asked (``exclude_spaceless``), and :attr:`History.excluded`
says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from modtok.errors import BudgetError, DataError, MixtureError
from modtok.evaluation import metrics
from modtok.mixture.dev import DevSet, mean
from modtok.mixture.pool import TextPool
from modtok.mixture.sizes import uniform
from modtok.mixture.trainers import Trainer
from modtok.mixture.update import Mixture, adaptmix_update, check_momentum, check_policy, normalise
from modtok.progress import bar as progress_bar


@dataclass
class History:
    """Everything an AdaptMix run did; ``steps[i]`` is iteration i:
    ``{"iteration", "mixture", "alloc", "used", "fertility", "mean_fertility"}``
    (the mixture and allocation it trained on, the dev fertility it reached).
    ``next_mixture`` is the update after the last step (where a resumed run starts).
    ``excluded``: languages of the text left out, with the reason; ``basis``: what each
    language's fertility divides by (:attr:`~modtok.mixture.dev.DevSet.basis`);
    ``available``: characters of text per language (what the budget is set against)."""

    langs: list[str]
    params: dict
    steps: list[dict] = field(default_factory=list)
    next_mixture: dict = field(default_factory=dict)
    excluded: dict = field(default_factory=dict)
    basis: dict = field(default_factory=dict)
    available: dict = field(default_factory=dict)
    tokenizers: list = field(default_factory=list, repr=False)  # per step, in memory only

    def to_json(self) -> dict:
        return {"langs": self.langs, "params": self.params, "steps": self.steps,
                "next_mixture": self.next_mixture, "excluded": self.excluded, "basis": self.basis,
                "available": self.available, "unchanging": self.unchanging()}

    @classmethod
    def from_json(cls, obj: Mapping) -> History:
        try:
            return cls(list(obj["langs"]), dict(obj["params"]), list(obj["steps"]),
                       dict(obj["next_mixture"]), dict(obj.get("excluded", {})), dict(obj.get("basis", {})),
                       dict(obj.get("available", {})))
        except (KeyError, TypeError) as e:
            raise MixtureError(f"not an AdaptMix history: {e}") from None

    def save(self, path) -> None:
        """Write the history as JSON, atomically (tokenizers are not saved)."""
        from modtok.atomic import write_json

        write_json(path, self.to_json())

    @classmethod
    def load(cls, path) -> History:
        import json
        from pathlib import Path

        try:
            obj = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise DataError(f"{path}: cannot read an AdaptMix history ({e})") from None
        return cls.from_json(obj)

    def best(self) -> int:
        """The iteration with the lowest mean dev fertility (ties: the earliest).
        A model selection on dev that the paper does not make (see the module docstring)."""
        return min(range(len(self.steps)), key=lambda i: (self.steps[i]["mean_fertility"], i))

    def last(self) -> int:
        """The paper's AdaptMix: the last iteration (§3.4 iterates "until the optimal
        mixture was reached"; whether it was, :meth:`converged` says)."""
        if not self.steps:
            raise MixtureError("an AdaptMix history with no iteration")
        return len(self.steps) - 1

    def mixture_changes(self) -> list[float]:
        """How far each update moved the mixture: entry i is the L1 distance
        Σ_l |m_l^{i+1} − m_l^i| between the mixture iteration i trained on and the
        next one (the last entry uses :attr:`next_mixture`); 0 is a fixed point.

        >>> h = History(["a", "b"], {}, [{"mixture": {"a": 0.5, "b": 0.5}}, {"mixture": {"a": 0.7, "b": 0.3}}],
        ...             {"a": 0.71, "b": 0.29})
        >>> [round(x, 6) for x in h.mixture_changes()]
        [0.4, 0.02]
        """
        mixtures = [s["mixture"] for s in self.steps] + ([self.next_mixture] if self.next_mixture else [])
        return [sum(abs(b[lang] - a[lang]) for lang in a) for a, b in zip(mixtures, mixtures[1:])]

    def branch(self, *, mu: float, eps: float, f_best: float | str = 1.0, clamp_delta: bool = False) -> History:
        """A new run that shares this one's iteration 0 and continues it with other
        update parameters: iteration 0 trains on the initial mixture, which μ, ε,
        ``f_best`` and ``clamp_delta`` do not touch, so its record and tokenizer are
        the same in every such run. Pass the result as ``resume=`` to :func:`adaptmix`
        (with the new parameters); it continues exactly as a fresh run would (tested)."""
        if not self.steps:
            raise MixtureError("an AdaptMix history with no iteration has nothing to branch from")
        first = self.steps[0]
        params = {**self.params, "mu": mu, "eps": eps, "f_best": f_best, "clamp_delta": bool(clamp_delta)}
        nxt = adaptmix_update(first["fertility"], first["mixture"], mu=mu, eps=eps, f_best=f_best,
                              clamp_delta=clamp_delta)
        return History(list(self.langs), params, [dict(first)], nxt, dict(self.excluded), dict(self.basis),
                       dict(self.available), self.tokenizers[:1])

    def prefix(self, n: int) -> History:
        """The run's first ``n`` iterations, as a run of ``n`` iterations with the same
        settings would have made them: iteration i depends only on the ones before it, so
        a shorter run is a prefix of a longer one (tested); its :attr:`next_mixture` is the
        mixture iteration ``n`` trained on. A copy, so resuming it leaves this run as it is.

        >>> h = History(["a", "b"], {}, [{"mixture": {"a": 0.5, "b": 0.5}}, {"mixture": {"a": 0.6, "b": 0.4}}],
        ...             {"a": 0.62, "b": 0.38})
        >>> h.prefix(1).next_mixture, len(h.prefix(2).steps), h.prefix(2).next_mixture
        ({'a': 0.6, 'b': 0.4}, 2, {'a': 0.62, 'b': 0.38})
        """
        if not 1 <= n <= len(self.steps):
            raise MixtureError(f"an AdaptMix run of {len(self.steps)} iterations has no prefix of {n}")
        nxt = self.steps[n]["mixture"] if n < len(self.steps) else self.next_mixture
        return History(list(self.langs), dict(self.params), [dict(s) for s in self.steps[:n]], dict(nxt),
                       dict(self.excluded), dict(self.basis), dict(self.available), self.tokenizers[:n])

    def converged(self, tol: float = 0.01) -> bool:
        """True when the update after the last iteration moves less than ``tol`` of
        the budget (L1, :meth:`mixture_changes`): the mixture has stopped moving.
        ``tol = 0.01`` (1% of T) is our reading; the paper gives no threshold."""
        changes = self.mixture_changes()
        return bool(changes) and changes[-1] < tol

    def unchanging(self) -> str | None:
        """Why every iteration trained on the same text — so is the same tokenizer, and
        UniMix (iteration 0) and AdaptMix (the last) are one result — or ``None``. From
        what the iterations recorded: every ``used`` equal, and either equal to
        :attr:`available` under the ``"cap"`` policy (the budget covers all the text, so
        *any* mixture that gives each language a share trains on all of it) or
        the same over several iterations (the updates moved the mixture by less than
        a line of text).

        >>> h = History(["a", "b"], {"budget_chars": 500, "policy": "cap"},
        ...             [{"used": {"a": 100, "b": 50}}] * 2, available={"a": 100, "b": 50})
        >>> h.unchanging()
        'the budget T = 500 characters covers all the text of every language (150 characters): every mixture trains on all of it, so every iteration is the same tokenizer'
        >>> History(["a", "b"], {}, [{"used": {"a": 9, "b": 5}}, {"used": {"a": 8, "b": 6}}]).unchanging() is None
        True
        """
        if not self.steps or any(s["used"] != self.steps[0]["used"] for s in self.steps):
            return None
        used = self.steps[0]["used"]
        if self.available and self.params.get("policy") == "cap" and used == self.available:
            return (f"the budget T = {self.params['budget_chars']:,} characters covers all the text of every "
                    f"language ({sum(self.available.values()):,} characters): every mixture trains on all of it, "
                    "so every iteration is the same tokenizer")
        if len(self.steps) > 1:
            return (f"all {len(self.steps)} iterations trained on the same text ({sum(used.values()):,} characters): "
                    "the updates moved the mixture by less than a line of text, so every iteration is the "
                    "same tokenizer")
        return None


def step(trainer: Trainer, pool: TextPool, mixture: Mapping[str, float], budget_chars: int,
         dev: DevSet, *, mu: float, eps: float, f_best: float | str = 1.0,
         policy: str = "cap", clamp_delta: bool = False) -> tuple[dict, Mixture, object]:
    """One AdaptMix iteration: allocate (Eq. 5) -> sample -> train -> dev
    fertility -> update (Eqs. 1-4, 7). Returns ``(record, next mixture, tokenizer)``."""
    sample = pool.sample(mixture, budget_chars, policy)
    tokenizer = trainer.train(trainer.data(sample))
    fert = dev.fertility(tokenizer)
    nxt = adaptmix_update(fert, mixture, mu=mu, eps=eps, f_best=f_best, clamp_delta=clamp_delta)
    record = {"mixture": dict(mixture), "alloc": sample.alloc, "used": sample.used(),
              "fertility": fert, "mean_fertility": mean(fert)}
    return record, nxt, tokenizer


EXCLUDED_SPACELESS = "written without spaces: left out as exclude_spaceless asks"


def fertility_languages(langs: Sequence[str], exclude_spaceless: bool = False) -> tuple[list[str], dict[str, str]]:
    """``(languages AdaptMix runs on, {left-out language: reason})``: every language,
    unless ``exclude_spaceless`` leaves out those written without spaces (never silently:
    the reason is :data:`EXCLUDED_SPACELESS`, which a report prints).

    >>> fertility_languages(["eng_Latn", "tha_Thai"])
    (['eng_Latn', 'tha_Thai'], {})
    >>> fertility_languages(["eng_Latn", "tha_Thai"], exclude_spaceless=True)[1]
    {'tha_Thai': 'written without spaces: left out as exclude_spaceless asks'}
    """
    excluded = {lang: EXCLUDED_SPACELESS for lang in langs if exclude_spaceless and metrics.written_without_spaces(lang)}
    return [lang for lang in langs if lang not in excluded], excluded


def adaptmix(
    trainer: Trainer,
    corpora: Mapping[str, Sequence[str]] | TextPool,
    budget_chars: int,
    iterations: int,
    mu: float,
    eps: float,
    dev: Mapping[str, Sequence[str]] | DevSet,
    *,
    f_best: float | str = 1.0,
    clamp_delta: bool = False,
    initial: Mapping[str, float] | None = None,
    policy: str = "cap",
    seed: int = 0,
    resume: History | None = None,
    checkpoint=None,
    keep_tokenizers: bool = False,
    exclude_spaceless: bool = False,
    progress: bool = False,
) -> History:
    """Run AdaptMix for ``iterations`` iterations (in all, counting resumed ones).

    Iteration 0 trains on ``initial`` (default: uniform, i.e. UniMix) and every
    later one on the update of the previous. A language whose script is written
    without spaces (:func:`modtok.evaluation.metrics.written_without_spaces`) takes
    part with its fertility against a spaced pivot on parallel dev text
    (:class:`~modtok.mixture.dev.DevSet`; refused, naming the languages and what to do,
    when ``dev`` is not parallel or has no spaced language), or, with
    ``exclude_spaceless``, is left out and listed in ``history.excluded`` with the
    reason. ``dev`` is the dev lines per language, or a :class:`DevSet` of exactly
    the languages the run uses (:func:`fertility_languages`). ``resume`` continues a saved :class:`History` (same
    settings required); ``checkpoint`` (a path) saves the history after every
    iteration. ``keep_tokenizers`` keeps every iteration's tokenizer in memory
    (else only the last one). ``f_best`` and ``clamp_delta`` (δ clamped at 0; off
    by default, as the paper's Eq. 1) are :func:`~modtok.mixture.update.adaptmix_update`'s.
    Same inputs and seed give the same history.
    """
    check_momentum(mu, eps)
    if not isinstance(iterations, int) or iterations < 1:
        raise MixtureError(f"iterations must be a positive integer, got {iterations!r}")
    check_policy(policy)
    pool = corpora if isinstance(corpora, TextPool) else TextPool(corpora, seed)
    langs, excluded = fertility_languages(pool.languages, exclude_spaceless)
    if not langs:
        raise DataError(f"no language left to run AdaptMix on: every one ({', '.join(excluded)}) is written "
                        "without spaces and exclude_spaceless leaves them out")
    if not isinstance(budget_chars, (int, np.integer)) or budget_chars < len(langs):
        raise BudgetError(f"character budget T={budget_chars!r} is smaller than the number of languages ({len(langs)})")
    devset = dev if isinstance(dev, DevSet) else DevSet(dev, langs)
    if list(devset.lines) != langs:
        raise MixtureError(f"the DevSet is for {', '.join(devset.lines)}; the run's languages are {', '.join(langs)}")
    params = {"trainer": trainer.name, "budget_chars": int(budget_chars), "mu": mu, "eps": eps,
              "f_best": f_best, "clamp_delta": bool(clamp_delta), "policy": policy, "seed": pool.seed,
              "exclude_spaceless": bool(exclude_spaceless), "fertility_pivot": devset.pivot}
    if resume is not None:
        if resume.params != params or resume.langs != langs:
            raise MixtureError(f"cannot resume: the saved run has {resume.params} on {resume.langs}, "
                               f"this one {params} on {langs}")
        history, mixture = resume, dict(resume.next_mixture)
    else:
        if initial is None:
            mixture = uniform(langs)
        else:
            if set(initial) != set(langs):
                raise MixtureError(f"initial mixture languages {sorted(initial)} differ from {sorted(langs)}")
            mixture = normalise({lang: initial[lang] for lang in langs}, "initial mixture")
        history = History(langs, params, excluded=excluded, basis=dict(devset.basis),
                          available=pool.available(langs))
    with progress_bar(total=iterations, initial=len(history.steps), desc="AdaptMix", enabled=progress) as bar:
        while len(history.steps) < iterations:
            record, mixture, tokenizer = step(trainer, pool, mixture, int(budget_chars), devset,
                                              mu=mu, eps=eps, f_best=f_best, policy=policy,
                                              clamp_delta=clamp_delta)
            history.steps.append({"iteration": len(history.steps), **record})
            history.next_mixture = mixture
            history.tokenizers = (history.tokenizers if keep_tokenizers else []) + [tokenizer]
            if checkpoint is not None:
                history.save(checkpoint)
            bar.update(1)
    return history


def train_on(trainer: Trainer, pool: TextPool, mixture: Mapping[str, float], budget_chars: int,
             policy: str = "cap") -> tuple[object, dict[str, int]]:
    """A tokenizer trained on one fixed mixture (a baseline): ``(tokenizer, allocation)``."""
    sample = pool.sample(mixture, budget_chars, policy)
    return trainer.train(trainer.data(sample)), sample.alloc
