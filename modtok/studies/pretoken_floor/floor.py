"""The floor and the repair on deployed tokenizers: the K sweep of notebook 07 (c)–(e).

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§III–V, Fig. 5):
append K merges learned on target-language text to a deployed byte-level BPE
under its own regex (R1) or the repaired one (R2, :mod:`modtok.adapt.extend`) and
watch two numbers per K:

- the **cost**: on aligned text (FLORES-200, English as reference) the premium
  ΣT(x)/ΣT(en); without parallel text, tokens per character of held-out lines;
- its **floor**: the same with pre-tokens P instead of tokens
  (:func:`modtok.evaluation.audit.floor`). No merge crosses a pre-token border,
  so cost >= floor at every K; R1 stalls at its floor, R2's is lower.

:func:`k_sweep` runs one continued-BPE run per base and arm and reads every K
off it as a prefix (:func:`modtok.adapt.extend.sweep`); :func:`moved_ids` is the
English-invariance check (Proposition 1); :func:`segment` shows one sentence
under one extension, token by token.

>>> from modtok.bpe.export import to_tokenizer_json
>>> from modtok.bpe.model import BPEModel
>>> base = Base(to_tokenizer_json(BPEModel([], "llama3")))      # bytes only: 256 ids
>>> tok = base.tokenizer
>>> cost(tok, ["नमस्ते"], ["Hi"]), cost(tok, ["नमस्ते"], ["Hi"], floor=True)   # 18 bytes, 3 pre-tokens / 2 tokens
(9.0, 1.5)
>>> segment(tok, "ab क")["segmentation"]                  # क is three byte tokens here
'a | b | ␣ | <e0> | <a4> | <95>'
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from modtok.adapt import extend
from modtok.adapt.extend import Base, Extension
from modtok.bpe.tree import label
from modtok.artifacts import deployed
from modtok.cache import Results, fingerprint
from modtok.evaluation import audit, metrics
from modtok.text import pretokenize
from modtok.text.pretokenize import from_byte_level

ARMS = ("R1", "R2")  # the two arms the sweep compares

Key = tuple[str, str, int]  # (base name, arm, K)


def pretoken_rows(phrase: str, schemes: Mapping[str, str]) -> list[dict]:
    """Fig. 4: ``{"regex", "pre-tokens", "count"}`` of ``phrase`` under each named
    scheme (``{shown name: scheme of modtok.text.pretokenize}``).

    >>> [r["count"] for r in pretoken_rows("नेपालको सरकार", {"letters-only": "llama3", "repaired": "llama3-marks"})]
    [6, 2]
    """
    rows = []
    for name, scheme in schemes.items():
        pieces = pretokenize.pretokenize(phrase, scheme)
        rows.append({"regex": name, "pre-tokens": " | ".join(pieces), "count": len(pieces)})
    return rows


def cost(tokenizer, lines: Sequence[str], ref_lines: Sequence[str] | None = None, floor: bool = False) -> float:
    """The premium of ``lines`` over the aligned ``ref_lines`` (``floor=True``: the
    pre-token floor); with ``ref_lines=None``, tokens (pre-tokens) per character
    of ``lines``."""
    if ref_lines is not None:
        return audit.floor(tokenizer, lines, ref_lines) if floor else metrics.premium(tokenizer, lines, ref_lines)
    counts = audit.pretoken_counts(tokenizer, lines) if floor else metrics.token_counts(tokenizer, lines)
    return counts.sum() / sum(map(len, lines))


@dataclass
class Sweep:
    """What :func:`k_sweep` returns.

    ``rows``: one per (base, arm, K) in run order, keys ``base``, ``arm``, ``K``,
    ``merges kept`` (after the §V filter), ``cost``, ``floor``; ``extensions``
    and ``tokenizers``: the :class:`~modtok.adapt.extend.Extension` and its HF
    tokenizer per ``(base, arm, K)`` (a sweep read back from the results cache builds a
    tokenizer when it is first asked for: eight of them were 38 s of 07's second Run All).
    """

    rows: list[dict]
    extensions: dict[Key, Extension]
    tokenizers: Mapping[Key, object]

    def of(self, base: str, arm: str) -> list[dict]:
        """The rows of one base and arm, by increasing K."""
        return [r for r in self.rows if (r["base"], r["arm"]) == (base, arm)]

    def curves(self) -> dict[str, tuple[list[int], list[float]]]:
        """``{"<base> <arm>": (Ks, costs), "<base> <arm> floor": (Ks, floors)}`` for
        :func:`modtok.ui.plots.lines`."""
        out = {}
        for base, arm in dict.fromkeys((r["base"], r["arm"]) for r in self.rows):
            rows = self.of(base, arm)
            out[f"{base} {arm}"] = ([r["K"] for r in rows], [r["cost"] for r in rows])
            out[f"{base} {arm} floor"] = ([r["K"] for r in rows], [r["floor"] for r in rows])
        return out


# Notebook 07's sweeps, tables and runs (this module's, cross_script's, added_tokens', cpt's),
# kept on disk (modtok.cache): cache_note() says which a kernel read back
RESULTS = Results("pretoken_floor")


def cache_note() -> str:
    """One line: which of notebook 07's results came from the results cache, and when they were computed."""
    return RESULTS.note()


class DeployedBase(Base):
    """The deployed tokenizer ``name`` as a :class:`~modtok.adapt.extend.Base`, read
    (``Base.load(name)``: 2.8 s for Llama-3, 3.5 s for Qwen3 on a quiet machine) on first use
    of anything but its name, and keyed by its shipped file (:func:`base_key`): a second Run
    All of notebook 07, whose sweeps and tables the results cache holds, never reads it.

    >>> base = DeployedBase("llama3")                         # doctest: +SKIP
    >>> base.loaded, base_key(base) == base_key(DeployedBase("llama3")), base.loaded   # doctest: +SKIP
    (False, True, False)
    >>> base.next_id, base.loaded                             # doctest: +SKIP
    (128256, True)
    """

    def __init__(self, name: str):  # noqa: the base's fields come from Base.load on first use (__getattr__)
        self.name = deployed.canonical(name)
        deployed.resource_path(self.name)  # not installed: said now, as Base.load would

    @property
    def loaded(self) -> bool:
        return "json" in self.__dict__

    def file_key(self) -> tuple:
        """:func:`modtok.artifacts.deployed.file_key`: of the file as it was read, once loaded."""
        return self.__dict__.get("_file_key") or deployed.file_key(self.name)

    def __getattr__(self, attr: str):  # only for what __init__ did not set: every field of a loaded Base
        if attr.startswith("__") or self.loaded:
            raise AttributeError(attr)
        key = deployed.file_key(self.name)
        self.__dict__.update(vars(Base.load(self.name)), _file_key=key)
        return getattr(self, attr)


def deployed_bases(names: Sequence[str]) -> dict[str, DeployedBase]:
    """``{name: DeployedBase(name)}``: notebook 07's bases, read on first use."""
    return {name: DeployedBase(name) for name in names}


# id(base) -> (base, its key): a base is hashed once per kernel (the base object is kept so that its
# id stays its own; a Base is never changed after it is made, extensions copy it)
_BASE_KEYS: dict[int, tuple[Base, str]] = {}


def base_key(base: Base) -> str:
    """What a base is, for a results cache key: a :class:`DeployedBase` by its shipped file
    (:func:`modtok.artifacts.deployed.file_key`: what ``Base.load`` reads it from, with the
    code that reads it in every key), any other by the SHA-256 of its name, settings and
    ``tokenizer.json`` (written out first: a JSON of 400k entries hashes in one pass, not entry by
    entry; 0.2-0.3 s for Llama-3 or Qwen3, once per base and kernel)."""
    if isinstance(base, DeployedBase):
        return fingerprint("deployed base", base.file_key())
    if id(base) not in _BASE_KEYS:
        _BASE_KEYS[id(base)] = base, fingerprint(base.name, base.config, json.dumps(base.json, ensure_ascii=False))
    return _BASE_KEYS[id(base)][1]


def extension_key(ext: Extension) -> str:
    """What an extension is, for a results cache key: its base's key, its merges and regex
    (all an :class:`~modtok.adapt.extend.Extension` holds), without building its tokenizer."""
    return fingerprint(base_key(ext.base), ext.merges, ext.regex)


def audit_rows(tokenizers: Mapping[str, object], lines: Sequence[str], ref_lines: Sequence[str],
               n_boot: int = 1000, seed: int = 0) -> dict[str, dict]:
    """``{name: audit.audit(tokenizer, lines, ref_lines, n_boot, seed)}``: notebook 07's (b), Table
    III, each row kept in the results cache keyed on the tokenizer (a ``deployed.Lazy`` handle by
    its file: read back, it is never loaded) and the lines. The notebook called ``audit.audit``
    itself: 41 s of its second Run All (smoke, load 10-16)."""
    return {name: RESULTS.get("audit", (tok, lines, ref_lines, n_boot, seed),
                              lambda tok=tok: audit.audit(tok, lines, ref_lines, n_boot=n_boot, seed=seed))
            for name, tok in tokenizers.items()}


def k_sweep(bases: Mapping[str, Base], train: Sequence[str], ks: Sequence[int], lines: Sequence[str],
            ref_lines: Sequence[str] | None = None, arms: Sequence[str] = ARMS) -> Sweep:
    """Continued BPE on every base (``{name: Base}``) and arm, learned on ``train``
    with the arm's regex (strict §V filter), at every K of ``ks``; cost and floor
    of each on ``lines`` (and ``ref_lines``, as in :func:`cost`). The rows and each extension's
    merges are kept in the results cache; read back, the extensions are rebuilt on ``bases`` (the
    same, by their key) with their tokenizers: a pickle of the bases and tokenizers was 119 MB at
    smoke size and took as long to read (33.5 s) as the sweep to compute (34.0 s)."""
    built: dict[Key, object] = {}  # the tokenizers made by a computed sweep (read back: built below)

    def make() -> tuple[list[dict], dict[Key, tuple[list, str]]]:
        rows, learned = [], {}
        for name, base in bases.items():
            for arm in arms:
                counts = extend.count_words(base, train, extend.arm_pattern(base.regex, arm))
                for k, ext in extend.sweep(base, counts, ks, arm).items():
                    tok = built[name, arm, k] = ext.tokenizer()
                    learned[name, arm, k] = ext.merges, ext.regex
                    rows.append({"base": name, "arm": arm, "K": k, "merges kept": len(ext.merges),
                                 "cost": cost(tok, lines, ref_lines), "floor": cost(tok, lines, ref_lines, floor=True)})
        return rows, learned
    keys = {name: base_key(base) for name, base in bases.items()}
    rows, learned = RESULTS.get("k sweep", (keys, train, list(ks), lines, ref_lines, list(arms)), make)
    extensions = {key: Extension(bases[key[0]], merges, regex) for key, (merges, regex) in learned.items()}
    return Sweep(rows, extensions, Built(extensions, built))


class Built(Mapping):
    """``{key: extensions[key].tokenizer()}``, each built when first asked for and kept
    (``built``: those already made)."""

    def __init__(self, extensions: Mapping[Key, Extension], built: Mapping[Key, object] | None = None):
        self.extensions, self._built = extensions, dict(built or {})

    def __getitem__(self, key: Key):
        if key not in self._built:
            self._built[key] = self.extensions[key].tokenizer()
        return self._built[key]

    def __iter__(self):
        return iter(self.extensions)

    def __len__(self) -> int:
        return len(self.extensions)


def language_rows(bases: Mapping[str, Base], tokenizers: Mapping[Key, object],
                  corpus: Mapping[str, Sequence[str]]) -> list[dict]:
    """The per-language rows (:func:`modtok.evaluation.metrics.language_table_of`) of each
    deployed base and of its extensions in ``tokenizers`` (``{(base, arm, K): tokenizer}``,
    e.g. :attr:`Sweep.tokenizers`) on ``corpus`` (``{lang: lines}``): one row per language
    and tokenizer ("<base>", "<base> <arm> K=<K>"), NSL against the deployed base itself."""
    rows = []
    for name, base in bases.items():
        plain = {lang: metrics.Encoded(base.tokenizer, lines, lang) for lang, lines in corpus.items()}
        encoded = {lang: {name: plain[lang], **{f"{name} {arm} K={k}": metrics.Encoded(tok, lines, lang)
                                                for (b, arm, k), tok in tokenizers.items() if b == name}}
                   for lang, lines in corpus.items()}
        rows += metrics.language_table_of(encoded, plain)
    return rows


def ids_of(tokenizer, lines: Sequence[str]) -> list[list[int]]:
    """Token ids of each line (no special tokens)."""
    return [e.ids for e in tokenizer.encode_batch(list(lines), add_special_tokens=False)]


def moved_ids(bases: Mapping[str, Base], tokenizers: Mapping[Key, object], lines: Sequence[str]) -> list[Key]:
    """The keys ``(base, arm, K)`` of ``tokenizers`` whose ids on ``lines`` differ
    from their base's (Proposition 1: none, on text without the target block). A sweep's
    tokenizers (:class:`Built`) are checked through the results cache, keyed on the bases, each
    extension (:func:`extension_key`) and the lines: read back, nothing is built or encoded (the
    check was 17 s of 07's second Run All at smoke)."""
    def check() -> list[Key]:
        want = {name: ids_of(base.tokenizer, lines) for name, base in bases.items()}
        return [key for key, tok in tokenizers.items() if ids_of(tok, lines) != want[key[0]]]
    if not isinstance(tokenizers, Built):
        return check()
    exts = {key: extension_key(ext) for key, ext in tokenizers.extensions.items()}
    return RESULTS.get("moved ids", ({name: base_key(base) for name, base in bases.items()}, exts, lines), check)


def segment(tokenizer, sentence: str) -> dict:
    """``{"tokens", "segmentation", "pieces"}``: the number of tokens of
    ``sentence``, their bytes as readable labels joined by `` | ``
    (:func:`modtok.bpe.tree.label`), and each token's bytes. A lone token is
    never decoded to text: a partial character would become U+FFFD."""
    ids = tokenizer.encode(sentence, add_special_tokens=False).ids
    pieces = [from_byte_level(tokenizer.id_to_token(i)) for i in ids]
    return {"tokens": len(ids), "segmentation": " | ".join(label(piece) for piece in pieces), "pieces": pieces}


def base_tokenizers(bases: Mapping[str, Base], arms: Sequence[str] = ARMS) -> dict[Key, object]:
    """``{(base, arm, 0): tokenizer}``: every base under each arm's regex with no merge added
    (R1 at K = 0 is the base itself, R2 its repaired regex): :func:`segmenter`'s tokenizers where
    the data has no Devanagari language to learn merges on."""
    return {(name, arm, 0): extend.Extension(base, [], extend.arm_pattern(base.regex, arm)).tokenizer()
            for name, base in bases.items() for arm in arms}


def segmenter(tokenizers: Mapping[Key, object], sentence: str) -> Callable[..., dict]:
    """``fn(base, arm, k)`` -> ``{"base", "arm", "K", **segment(...)}`` of
    ``sentence`` under ``tokenizers[base, arm, k]``: a widget panel's function. A sweep's
    tokenizers (:class:`Built`) segment through the results cache, keyed on the extension
    (:func:`extension_key`) and the sentence: the panel's first draw after a second Run All
    neither reads the base nor builds its tokenizer."""
    def fn(base: str, arm: str, k: int) -> dict:
        if isinstance(tokenizers, Built):
            seg = RESULTS.get("segment", (extension_key(tokenizers.extensions[base, arm, k]), sentence),
                              lambda: segment(tokenizers[base, arm, k], sentence))
        else:
            seg = segment(tokenizers[base, arm, k], sentence)
        return {"base": base, "arm": arm, "K": k, **seg}

    return fn


def long_rows(rows: Sequence[dict], x: str, series: Mapping[str, str], value: str = "value",
              color: str = "measure") -> list[dict]:
    """Wide rows to long ones for grouped bars: one row ``{x, color: label, value}``
    per row and ``series`` key (``{key: label}``), row by row.

    >>> long_rows([{"t": "a", "p": 1.0, "q": 0.5}], "t", {"p": "premium", "q": "share"})
    [{'t': 'a', 'measure': 'premium', 'value': 1.0}, {'t': 'a', 'measure': 'share', 'value': 0.5}]
    """
    return [{x: r[x], color: name, value: r[key]} for r in rows for key, name in series.items()]
