"""Pre-token counts as an artifact, counted in one process or on Dask.

Counting is the only stage of tokenizer training that grows with the corpus;
every trainer then works on ``{lang: Counter(pre-token -> count)}``. This module
makes those counts from streamed corpora (:mod:`modtok.text.corpus`), saves them,
and loads them back for any trainer.

**Schema** of a counts directory (version 2)::

    DIR/meta.json        {"format": "modtok-counts", "version": 2, "scheme": "llama3",
                          "languages": {lang: {"file": "<lang>.parquet", "sha256": hex,
                                               "types": int, "tokens": int, "units": int,
                                               "chars": int, "skipped": {reason: int},
                                               "cut": {rule: int},
                                               "budget_cut": [chars, kept, where] | null}, ...},
                          "options": {"text_field", "max_chars", "sample", "seed", "skip_bad"}}
                         (text_field: one name, or {lang: name} where manifest entries name their own)
    DIR/<lang>.parquet   columns  pretoken: string (UTF-8), count: int64;
                         rows sorted by count descending, then pre-token by code point
    DIR/run.json         what made it (:mod:`modtok.outputs`): command, arguments, inputs,
                         lines and characters per language, the files and their sizes

``cut``: the pre-tokens a bounded scheme cut, by rule (``length``, ``script``: text without
spaces, :func:`modtok.text.pretokenize.bound_counts`; ``{}`` for other schemes and in counts
written before it was recorded). ``budget_cut``: the line that ``max_chars`` cut, when the
budget ran out inside a language's first line (its length, the characters kept, the boundary:
:func:`modtok.text.corpus.within_budget`; null when none, and in counts written before it was
recorded). ``languages`` keeps the manifest's order (the training order of sequential BPE).
The directory is written whole (:func:`modtok.outputs.output_dir`: a temporary sibling
renamed into place), so a crash leaves the earlier counts or none, never a mix. Reading
checks it (:func:`read_meta`): the files are exactly those its ``run.json`` records, at
their sizes, and each ``<lang>.parquet`` has the SHA-256 ``meta.json`` gives it; a
directory of version 1 (no hashes, no run.json) is refused with "count again".

**On Dask** (:func:`count_corpora` with a ``distributed.Client``): every file is
cut into parts (:func:`modtok.text.corpus.partition`: byte ranges of uncompressed
text/JSONL, row-group ranges of Parquet, whole compressed or Arrow files);
consecutive small parts are grouped up to ``partition_bytes`` per task
(:func:`group_parts`); each task is counted on a worker, and each language's parts'
words (arrays, :class:`Words`) are summed in a tree (``fan_in`` at a time, consecutive
parts, on the workers), so only one set of arrays per language comes back and becomes its
``Counter``. Units are cut and sampled exactly as in one process, and the sums keep the
order of first occurrence, so the result is identical to
:func:`modtok.text.pretokenize.count_by_language` on the same lines, order included.

>>> import tempfile, pathlib
>>> from modtok.text.corpus import open_corpus
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "eng.txt").write_text("the cat\\nthe mat\\n")
>>> counts = count_corpora(open_corpus({"eng_Latn": [str(d / "eng.txt")]}), "whitespace")
>>> sorted(counts.by_lang["eng_Latn"].items())
[(' cat', 1), (' mat', 1), ('the', 2)]
>>> _ = counts.save(d / "counts")
>>> load_counts(d / "counts") == counts.by_lang
True
>>> sorted(p.name for p in (d / "counts").iterdir())
['eng_Latn.parquet', 'meta.json', 'run.json']
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from modtok.atomic import write_bytes, write_json
from modtok.errors import DataError, UnknownLanguageError
from modtok.outputs import Run, check_output, output_dir
from modtok.progress import bar as progress_bar
from modtok.text import lexer
from modtok.text.corpus import Corpus, Part, ReadOptions, cut_note, read_part, within_budget
from modtok.text.pretokenize import (DEFAULT_SCHEME, bound_counts, count_chunk, counting_engine, counting_pattern,
                                     describe_cut, engine_note, pattern)

FORMAT, VERSION = "modtok-counts", 2
COMMAND = "count"  # the command whose output a counts directory is (its run.json says so)
# What is handed to the lexer (or the regex) at a time: CHUNK_CHARS characters, or CHUNK_UNITS
# units if that comes first (memory: one chunk of lines, and the lexer's 14 bytes a code point).
# Big chunks, because a chunk's distinct words are what :class:`Words` sums, and they grow slower
# than the chunk (Zipf text, 0.1 GB: 20k-line chunks of 1.8 MB held ~100k distinct words each).
CHUNK_CHARS = 1 << 24  # the lexer's own block (lexer.BLOCK)
CHUNK_UNITS = 1 << 18


class Words:
    """Distinct pre-tokens and their counts, as UTF-8 arrays in a few parts (stream order):
    what streaming counting keeps between chunks, and what a Dask task sends back.

    Each chunk's words come from the lexer as arrays (:func:`modtok.text.lexer.count_words`)
    and are pushed as a part of weight 1; the last two parts are summed
    (:func:`modtok.text.lexer.union`, numba) while they weigh the same, as the digits of a
    binary counter carry. So at most log2(chunks) + 1 parts are held, and a word is re-hashed
    once per level of that tree: on text whose distinct words grow as size^beta (beta < 1) the
    levels' sizes shrink geometrically upwards and the whole costs a few times the chunks' own
    distinct words. Evidence (the growth bench's Zipf text, 0.1 GB, 832k distinct
    words): adding each chunk's ``Counter`` to a running ``Counter`` (a Python string and a
    dict update per distinct word of every chunk) cost as much CPU as the lexer; summing
    each chunk into one running array re-hashes every distinct word once per chunk (5.9 s of
    CPU for 55 chunks, more than the Counters). Parts are summed in stream order and the union
    keeps the order of first occurrence, so :meth:`counter` is the one ``Counter`` of the
    whole stream, its order included.

    >>> w = Words()
    >>> for counts in (Counter({"ab": 1, "c": 2}), Counter({"c": 1}), Counter({"d": 1, "ab": 5})):
    ...     w.add(*lexer.words_of(counts))
    >>> [len(lengths) for _, lengths, _, _ in w.parts], w.counter()
    ([2, 2], Counter({'ab': 6, 'c': 3, 'd': 1}))
    """

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, int]] = []  # (data, lengths, counts, weight)

    def __len__(self) -> int:
        """Rows held (a word in two parts is two rows)."""
        return sum(len(p[1]) for p in self.parts)

    def add(self, data: np.ndarray, lengths: np.ndarray, counts: np.ndarray, weight: int = 1) -> None:
        """Push distinct words (UTF-8 ``data`` cut at ``lengths``) with their ``counts``, after
        every word already here (``weight``: the chunks they sum)."""
        self.parts.append((data, lengths, counts, weight))
        while len(self.parts) > 1 and self.parts[-2][3] <= self.parts[-1][3]:
            top = self.parts.pop()
            self.parts[-1] = (*_summed([self.parts[-1], top]), self.parts[-1][3] + top[3])

    def extend(self, other: Words) -> None:
        """Push ``other``'s parts (words that came after these)."""
        for part in other.parts:
            self.add(*part)

    def counter(self) -> Counter:
        """``Counter(pre-token -> count)`` of every word, in order of first occurrence. The
        words are decoded in one call and sliced at character offsets (a UTF-8 character
        starts at every byte that is not ``10xxxxxx``), as the lexer's own Counter is made."""
        data, lengths, counts = _summed(self.parts) if self.parts else (np.zeros(0, np.uint8),) * 3
        starts_char = np.cumsum((data & 0xC0) != 0x80)  # characters up to and including each byte
        ends = np.cumsum(lengths)
        char_ends = starts_char[ends - 1] if len(ends) else ends
        char_starts = np.concatenate([[0], char_ends[:-1]]).astype(np.int64)
        text = data.tobytes().decode("utf-8")
        out: Counter = Counter()
        dict.update(out, zip(map(text.__getitem__, map(slice, char_starts.tolist(), char_ends.tolist())),
                             counts.tolist()))
        return out


def _summed(parts: list[tuple]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(data, lengths, counts)`` of several parts (:func:`modtok.text.lexer.union`: a word's
    counts added, order of first occurrence)."""
    if len(parts) == 1:
        return parts[0][:3]
    merged = lexer.union(["_"], [(data, lengths, counts, 0) for data, lengths, counts, _ in parts])
    return merged.data, merged.lengths, merged.counts[:, 0]


@dataclass
class Tally:
    """What counting one part (or several, summed) gave: the words as arrays while counting
    goes on (:class:`Words`), then, once :meth:`finish` ran, ``counts`` (a ``Counter``) and
    ``cut`` (the pre-tokens a bounded scheme cut, by rule). ``budget_cut``: the one line a
    character budget cut, ``(chars, kept, where)`` (:func:`~modtok.text.corpus.within_budget`)."""

    words: Words = field(default_factory=Words)
    units: int = 0
    chars: int = 0
    skipped: Counter = field(default_factory=Counter)
    cut: Counter = field(default_factory=Counter)
    counts: Counter | None = None
    budget_cut: tuple[int, int, str] | None = None

    def add(self, other: Tally) -> Tally:
        self.words.extend(other.words)
        self.units += other.units
        self.chars += other.chars
        self.skipped.update(other.skipped)
        self.budget_cut = self.budget_cut or other.budget_cut
        return self

    def finish(self, scheme: str) -> Tally:
        """Make ``counts`` of the words, cut again where ``scheme`` is bounded (``cut``:
        :func:`modtok.text.pretokenize.bound_counts`, on the distinct words once, not per chunk)."""
        self.counts = self.words.counter()
        self.words = Words()
        self.cut = bound_counts(self.counts, scheme)
        return self


def count_units(units, scheme: str, progress=None, engine: str = "lexer") -> Tally:
    """Count the pre-tokens of an iterable of units, a chunk at a time (:func:`_chunks`)
    (the same per-line counting as :func:`modtok.text.pretokenize.count_pretokens`, the
    bound of text without spaces included: ``tally.cut``; ``engine`` as there); ``progress``
    (a bar) is advanced by the units of each chunk."""
    return _tally_units(units, scheme, progress, engine).finish(scheme)


def _tally_units(units, scheme: str, progress=None, engine: str = "lexer") -> Tally:
    """:func:`count_units` before :meth:`Tally.finish`: the words as arrays (what a Dask task
    returns). The lexer counts each chunk to arrays; the ``regex`` engine's chunk ``Counter``
    is converted (the reference: slow either way)."""
    tally, source = Tally(), counting_pattern(scheme)
    use_lexer = counting_engine(source, engine) == "lexer"
    for chunk, chars in _chunks(units):
        tally.chars += chars
        tally.units += len(chunk)
        if use_lexer:
            data, lengths, counts, _ = lexer.count_words(chunk, source)
        else:
            data, lengths, counts = _encoded(count_chunk((source, engine, chunk)))
        tally.words.add(data, lengths, counts)
        if progress is not None:
            progress.update(len(chunk))
    return tally


def _chunks(units):
    """``(units, characters)``: the units in lists of ``CHUNK_CHARS`` characters (the unit
    that crosses it included) or ``CHUNK_UNITS`` units, whichever comes first.

    >>> [(len(c), n) for c, n in _chunks(["ab"] * 5)]
    [(5, 10)]
    """
    chunk, chars = [], 0
    for unit in units:
        chunk.append(unit)
        chars += len(unit)
        if chars >= CHUNK_CHARS or len(chunk) == CHUNK_UNITS:
            yield chunk, chars
            chunk, chars = [], 0
    if chunk:
        yield chunk, chars


def _encoded(counts: Counter) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`modtok.text.lexer.words_of`, a lone surrogate (a Python string may hold one)
    refused as the lexer refuses it."""
    try:
        return lexer.words_of(counts)
    except UnicodeEncodeError as e:
        raise DataError(f"a lone surrogate in the text ({e.object[max(e.start - 10, 0):e.end + 10]!r}): "
                        "not UTF-8, so no byte-level pre-token") from None


def count_part(part: Part, options: ReadOptions, scheme: str, budget: tuple[int, bool] | None = None,
               engine: str = "lexer") -> Tally:
    """Count one part (what a Dask task runs); ``budget = (chars, first)`` cuts
    it as :func:`modtok.text.corpus.within_budget` does (the part where a language's
    budget runs out)."""
    skipped: Counter = Counter()
    cuts: list = []
    units = read_part(part, options, skipped)
    if budget is not None:
        units = within_budget(units, *budget, cuts=cuts)
    tally = _tally_units(units, scheme, engine=engine)
    tally.skipped, tally.budget_cut = skipped, (cuts[0] if cuts else None)
    return tally


def count_parts(parts: list[Part], budgets: list, options: ReadOptions, scheme: str, engine: str = "lexer") -> Tally:
    """Count several small parts in one task (their words summed on the worker)."""
    tally = Tally()
    for part, budget in zip(parts, budgets):
        tally.add(count_part(part, options, scheme, budget, engine))
    return tally


def group_parts(parts: list[Part], target_bytes: int) -> list[list[int]]:
    """Indices of consecutive parts, grouped while their sizes add up to at most
    ``target_bytes`` (a part bigger than that is a group of its own): many small
    shards make a few tasks, so few results travel.

    >>> from modtok.text.corpus import Source
    >>> group_parts([Part(Source("x", "text"), size=n) for n in (3, 3, 5, 9, 1)], 6)
    [[0, 1], [2], [3], [4]]
    """
    groups: list[list[int]] = []
    used = 0
    for i, part in enumerate(parts):
        if groups and used + part.size <= target_bytes:
            groups[-1].append(i)
            used += part.size
        else:
            groups.append([i])
            used = part.size
    return groups


def part_chars(part: Part, options: ReadOptions) -> int:
    """Characters of a part's units (bad records skipped: only the budget's cut
    point is wanted here; counting reports them)."""
    lenient = replace(options, skip_bad=True)
    return sum(map(len, read_part(part, lenient, Counter())))


def merge_tallies(*tallies: Tally) -> Tally:
    """Sum of tallies (a node of the tree reduction)."""
    out = Tally()
    for t in tallies:
        out.add(t)
    return out


@dataclass
class Counts:
    """``{lang: Counter}`` plus how it was made."""

    by_lang: dict[str, Counter]
    scheme: str
    stats: dict[str, dict] = field(default_factory=dict)  # {lang: {"units", "chars", "skipped"}}
    options: dict = field(default_factory=dict)
    engine: str = "lexer"  # what counted: "lexer" or "regex" (pretokenize.counting_engine; not saved)

    def save(self, directory, *, force: bool = False, args=None, inputs=()) -> Path:
        """Write the counts directory whole (schema in the module docstring) through
        :func:`modtok.outputs.output_dir`: ``force`` replaces an earlier counts directory,
        ``args`` and ``inputs`` (the counted files) go into its ``run.json``."""
        with output_dir(directory, command=COMMAND, force=force, inputs=inputs,
                        args=args if args is not None else {"scheme": self.scheme, **self.options}) as run:
            self.write_into(run)
        return Path(directory)

    def write_into(self, run: Run) -> None:
        """Write the files of a counts directory into ``run.path`` (a directory
        :func:`~modtok.outputs.output_dir` is writing) and record the lines and
        characters per language in its ``run.json``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        languages = {}
        for lang, counter in self.by_lang.items():
            items = sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))
            table = pa.table({"pretoken": pa.array([k for k, _ in items], pa.string()),
                              "count": pa.array([v for _, v in items], pa.int64())})
            sink = pa.BufferOutputStream()
            pq.write_table(table, sink, compression="zstd")
            name, data = f"{lang}.parquet", sink.getvalue().to_pybytes()
            write_bytes(run.path / name, data)
            stats = self.stats.get(lang, {})
            languages[lang] = {"file": name, "sha256": hashlib.sha256(data).hexdigest(), "types": len(counter),
                               "tokens": sum(counter.values()), "units": stats.get("units"),
                               "chars": stats.get("chars"), "skipped": dict(sorted(stats.get("skipped", {}).items())),
                               "cut": dict(sorted(stats.get("cut", {}).items())),
                               "budget_cut": stats.get("budget_cut")}
        write_json(run.path / "meta.json", {"format": FORMAT, "version": VERSION, "scheme": self.scheme,
                                            "languages": languages, "options": self.options}, indent=1)
        run.record(scheme=self.scheme, evaluation=None,  # counting reads no evaluation text
                   languages={lang: {"lines": m["units"], "chars": m["chars"], "pre_tokens": m["tokens"],
                                     "types": m["types"]} for lang, m in languages.items()})

    @classmethod
    def load(cls, directory, langs=None) -> Counts:
        """Read a counts directory (all languages, or ``langs`` in that order)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        directory = Path(directory)
        meta = read_meta(directory)
        available = meta["languages"]
        chosen = list(available) if langs is None else ([langs] if isinstance(langs, str) else list(langs))
        by_lang, stats = {}, {}
        for lang in chosen:
            if lang not in available:
                raise UnknownLanguageError(lang, available)
            path = directory / available[lang]["file"]
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != available[lang]["sha256"]:
                raise DataError(f"{path}: not the file meta.json describes (its SHA-256 differs): the "
                                f"directory mixes files of different counts; run `modtok count` again")
            try:
                table = pq.read_table(pa.BufferReader(data), columns=["pretoken", "count"])
            except (pa.ArrowException, OSError) as e:
                raise DataError(f"{path}: not a readable counts file ({e})") from None
            by_lang[lang] = Counter(dict(zip(table.column("pretoken").to_pylist(),
                                             table.column("count").to_pylist())))
            if len(by_lang[lang]) != available[lang]["types"]:
                raise DataError(f"{path}: {len(by_lang[lang])} pre-tokens, meta.json says {available[lang]['types']}")
            stats[lang] = {k: available[lang][k] for k in ("units", "chars", "skipped")}
            stats[lang]["cut"] = available[lang].get("cut", {})  # older counts did not record it
            stats[lang]["budget_cut"] = available[lang].get("budget_cut")  # nor this
        return cls(by_lang, meta["scheme"], stats, meta.get("options", {}))


def read_meta(directory) -> dict:
    """``meta.json`` of a counts directory, checked: the directory is one whole output of
    ``modtok count`` (:func:`modtok.outputs.check_output`), of this schema version."""
    path = Path(directory) / "meta.json"
    check_output(directory, COMMAND)
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{directory}: not a counts directory (no meta.json)") from None
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: unreadable ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DataError(f"{path}: not a modtok counts file")
    if meta.get("version") != VERSION:
        raise DataError(f"{path}: counts version {meta.get('version')}, this modtok reads version {VERSION}; "
                        "run `modtok count` again")
    return meta


def load_counts(directory, langs=None, scheme: str | None = None) -> dict[str, Counter]:
    """``{lang: Counter}`` from a counts directory, ready for any trainer;
    ``scheme`` (if given) must be the one the counts were made with."""
    counts = Counts.load(directory, langs)
    if scheme is not None and scheme != counts.scheme:
        raise DataError(f"{directory}: counts were made with pre-tokenizer {counts.scheme!r}, not {scheme!r}")
    return counts.by_lang


def count_corpora(corpora: Mapping[str, Corpus], scheme: str = DEFAULT_SCHEME, client=None,
                  partition_bytes: int = 64 << 20, fan_in: int = 8, progress: bool = False,
                  engine: str = "lexer") -> Counts:
    """Count every language of ``{lang: Corpus}`` (:func:`modtok.text.corpus.open_corpus`).

    Without ``client``: one process, streaming (memory: one chunk of units plus
    the distinct words, as arrays (:class:`Words`) until the end, then as a Counter). With a
    ``distributed.Client``: parts of about ``partition_bytes`` on its workers, their words
    summed in a tree of ``fan_in``
    (see the module docstring). A character budget (``max_chars``) is a
    stream-order cut: on Dask, a first pass measures every part's characters,
    then the parts before the cut are counted whole, the part where the budget
    runs out is cut inside, and the parts after it are not read -- the same
    units as one process.

    ``progress=True`` shows a bar (:mod:`modtok.progress`, on stderr, throttled): the lines
    counted per language in one process, the tasks done on Dask. ``engine``: ``"lexer"`` (the
    compiled pre-tokenizer, which implements every named scheme) or ``"regex"`` (the
    reference); the counts are the same, ``Counts.engine`` says which counted.
    """
    pattern(scheme)  # fail early on an unknown scheme
    used = counting_engine(counting_pattern(scheme), engine)  # and on an unknown engine
    if fan_in < 2:
        raise DataError(f"fan_in must be at least 2, got {fan_in}")
    first = next(iter(corpora.values()), None)
    options = first.options if first is not None else ReadOptions()
    tallies: dict[str, Tally] = {}
    if client is None:
        for lang, corpus in corpora.items():
            with progress_bar(desc=f"count {lang}", unit=" lines", enabled=progress) as shown:
                tallies[lang] = _tally_units(corpus, scheme, shown, engine)
            tallies[lang].skipped, tallies[lang].budget_cut = Counter(corpus.skipped), corpus.cut
    else:
        tallies = _count_on_dask(corpora, scheme, client, partition_bytes, fan_in, progress, engine)
    for tally in tallies.values():
        tally.finish(scheme)  # the arrays become Counters here, once per language
    for lang, tally in tallies.items():
        if tally.units == 0:
            raise DataError(f"language {lang!r}: empty corpus (no non-blank line)")
    stats = {lang: {"units": t.units, "chars": t.chars, "skipped": dict(t.skipped), "cut": dict(t.cut),
                    "budget_cut": list(t.budget_cut) if t.budget_cut else None} for lang, t in tallies.items()}
    fields = {lang: c.options.text_field for lang, c in corpora.items()}  # manifest entries may name their own
    opts = {"text_field": options.text_field if len(set(fields.values())) <= 1 else fields,
            "sample": options.sample, "seed": options.seed, "skip_bad": options.skip_bad,
            "max_chars": first.max_chars if first is not None else None}
    return Counts({lang: t.counts for lang, t in tallies.items()}, scheme, stats, opts, used)


def _count_on_dask(corpora, scheme, client, partition_bytes, fan_in, progress, engine) -> dict[str, Tally]:
    parts = {lang: corpus.parts(partition_bytes) for lang, corpus in corpora.items()}
    cuts = {lang: [None] * len(ps) for lang, ps in parts.items()}
    budgeted = [lang for lang, c in corpora.items() if c.max_chars is not None]
    sizes = client.gather({lang: client.map(part_chars, parts[lang], options=corpora[lang].options, pure=False)
                           for lang in budgeted})
    for lang in budgeted:
        budget, before = corpora[lang].max_chars, 0
        for i, chars in enumerate(sizes[lang]):
            if before + chars < budget:  # wholly inside the budget
                before += chars
                continue
            cuts[lang][i] = (budget - before, before == 0)  # the budget runs out in this part
            parts[lang], cuts[lang] = parts[lang][: i + 1], cuts[lang][: i + 1]
            break
    roots, leaves = {}, []
    for lang, corpus in corpora.items():
        groups = group_parts(parts[lang], partition_bytes)
        n = len(groups)
        level = client.map(count_parts, [[parts[lang][i] for i in g] for g in groups],
                           [[cuts[lang][i] for i in g] for g in groups], [corpus.options] * n, [scheme] * n,
                           [engine] * n, pure=False)
        leaves += level if progress else []
        while len(level) > 1:  # tree reduction on the workers
            level = [client.submit(merge_tallies, *level[i : i + fan_in], pure=False)
                     for i in range(0, len(level), fan_in)]
        roots[lang] = level[0]
    if leaves:
        from distributed import as_completed

        done = as_completed(leaves)
        with progress_bar(total=len(leaves), desc="count", unit=" tasks") as shown:
            leaves = None  # as_completed lets go of each task once done: its words are freed when merged
            for _ in done:
                shown.update(1)
    results = client.gather(list(roots.values()))
    return dict(zip(roots, results))


def local_client(workers: int, threads_per_worker: int = 1):
    """A ``distributed.Client`` on a ``LocalCluster`` of ``workers`` processes on
    this machine, listening on loopback only (a dashboard only if bokeh is installed, on a
    free loopback port). Close it (or use ``with``) when done."""
    from distributed import Client

    if workers < 1:
        raise DataError(f"workers must be at least 1, got {workers}")
    # Client(**kw) starts its own LocalCluster and closes it with the client. Its workers log a
    # failed task ("Compute Failed" + a traceback) at ERROR level before the exception reaches
    # the caller, who reports it once (the CLI as one line); only CRITICAL worker logs remain.
    return Client(n_workers=workers, threads_per_worker=threads_per_worker, processes=True,
                  host="127.0.0.1", dashboard_address="127.0.0.1:0", silence_logs=logging.CRITICAL)


@dataclass(frozen=True)
class CountOptions:
    """What ``modtok count`` is asked (:func:`run` reads the fields; the command line builds
    them from its flags, and ``run.json``'s ``args`` is their ``asdict``): ``manifest``'s
    corpora (``langs``, else all; read as :func:`modtok.text.corpus.open_corpus` reads them)
    counted with ``scheme`` into ``out``, in this process, on ``workers`` local processes or
    on the Dask ``scheduler`` at that address (``partition_mb`` of input per task).

    >>> CountOptions("m.json", "counts", workers=2).partition_mb
    64
    """

    manifest: object
    out: object
    scheme: str = DEFAULT_SCHEME
    langs: list[str] | None = None
    text_field: str = "text"
    max_chars: int | None = None
    sample: float | None = None
    seed: int = 0
    skip_bad: bool = False
    workers: int | None = None
    scheduler: str | None = None
    partition_mb: int = 64
    connect_timeout: float = 30


def run(options: CountOptions, *, force: bool = False) -> Counts:
    """``modtok count`` as ``options`` asks (:class:`CountOptions`; below, its fields by name):
    the pre-tokens of ``manifest``'s corpora (``langs``, else all) counted
    (:func:`count_corpora`: in this process, on a ``LocalCluster`` of ``workers`` processes, or
    on the Dask ``scheduler`` at that address) and saved into the counts directory ``out``
    (:func:`modtok.outputs.output_dir`; ``force``: over an earlier count), its ``run.json``
    recording ``asdict(options)`` and the counted files."""
    from modtok.text.corpus import open_corpus

    o = options
    corpora = open_corpus(o.manifest, langs=o.langs or None, text_field=o.text_field, max_chars=o.max_chars,
                          sample=o.sample, seed=o.seed, skip_bad=o.skip_bad)
    inputs = [src.path for corpus in corpora.values() for src in corpus.sources]
    with output_dir(o.out, command=COMMAND, args=asdict(o), force=force, inputs=inputs) as written:
        client = None  # the output is checked first: a refused run starts no cluster
        if o.scheduler:
            from distributed import Client

            try:
                client = Client(o.scheduler, timeout=o.connect_timeout)
            except (OSError, TimeoutError) as e:
                raise DataError(f"cannot reach the Dask scheduler at {o.scheduler} ({e})") from None
        elif o.workers:
            client = local_client(o.workers)
        try:
            counts = count_corpora(corpora, o.scheme, client=client, partition_bytes=o.partition_mb << 20,
                                   progress=True)  # on stderr, throttled; only once counting takes a while
        finally:
            if client is not None:
                client.close()
        counts.write_into(written)
        written.record(training=f"manifest {o.manifest}")
    return counts


def summary(counts: Counts) -> list[str]:
    """One line per language of ``counts``: pre-token types and tokens, lines, characters,
    the bad records skipped and the pre-tokens a bounded scheme cut (``modtok count`` prints them);
    a last line when the regex module counted because the lexer has no machine for the scheme,
    or the numba lexer because the C one is not built (:func:`engine_note`; nothing when the
    regex module was asked for)."""
    lacks_machine = counting_engine(counting_pattern(counts.scheme)) == "regex"
    note = engine_note(counts.scheme) if counts.engine == "lexer" or lacks_machine else None
    lines = []
    for lang, counter in counts.by_lang.items():
        stats = counts.stats[lang]
        skipped = sum(stats["skipped"].values())
        lines.append(f"{lang}: {len(counter)} pre-token types, {sum(counter.values())} pre-tokens, "
                     f"{stats['units']} lines, {stats['chars']} chars" + (f", {skipped} bad records skipped "
                     f"{stats['skipped']}" if skipped else "")
                     + (f"; {describe_cut(Counter(stats['cut']))}" if stats.get("cut") else ""))
        if stats.get("budget_cut"):
            lines.append(cut_note(lang, tuple(stats["budget_cut"])) + " (the character budget)")
    return lines + ([note] if note else [])
