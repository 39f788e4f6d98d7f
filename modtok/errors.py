"""One exception family for everything modtok refuses to do.

Every error a user can trigger with bad input is a :class:`ModtokError`, so a
notebook or script can catch the family once. Subclasses say *what* went wrong;
messages say *where* (path, byte offset, language, merge index).

>>> try:
...     raise UnknownLanguageError("xxx_Latn", available=["eng_Latn"])
... except ModtokError as e:
...     print(e)
unknown language 'xxx_Latn' (available: eng_Latn)
"""

from __future__ import annotations

from collections.abc import Iterable


class ModtokError(Exception):
    """Base class of every error raised on bad input by modtok."""


class DataError(ModtokError):
    """A corpus cannot be read or is unusable (missing file, empty corpus, ...)."""


class UnknownLanguageError(DataError, KeyError):
    """A language code that the source (or tokenizer) does not have."""

    def __init__(self, lang: str, available: Iterable[str] = (), hint: str = ""):
        self.lang = lang
        self.available = sorted(available)
        shown = ", ".join(self.available[:12])
        if len(self.available) > 12:
            shown += f", ... ({len(self.available)} in all)"
        msg = f"unknown language {lang!r}"
        if self.available:
            msg += f" (available: {shown})"
        if hint:
            msg += f"; {hint}"
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class NoEvalTextError(UnknownLanguageError):
    """A language the run has (in its tokenizer or training text) that the evaluation text
    lacks: not an unknown language, a missing file, said so with the languages that have one.

    >>> print(NoEvalTextError("khm_Khmr", ["eng_Latn", "mya_Mymr"], "own evaluation text devtest (/data/eval)"))
    khm_Khmr has no evaluation text in own evaluation text devtest (/data/eval) (languages that have: eng_Latn, mya_Mymr)
    """

    def __init__(self, lang: str, available: Iterable[str], source: str):
        super().__init__(lang, available)
        shown = ", ".join(self.available) or "none"
        self.args = (f"{lang} has no evaluation text in {source} (languages that have: {shown})",)


class EncodingError(DataError):
    """A file is not valid UTF-8; carries the path and the byte offset."""

    def __init__(self, path, offset: int, reason: str = "invalid UTF-8"):
        self.path = str(path)
        self.offset = offset
        super().__init__(f"{self.path}: {reason} at byte offset {offset}")


class BudgetError(ModtokError, ValueError):
    """A vocabulary budget that cannot be met (e.g. below the base alphabet)."""


class TokenizerFileError(ModtokError):
    """A malformed or inconsistent tokenizer file or directory."""


class MergeListError(TokenizerFileError):
    """An improper merge list: a merge uses a part that is neither a base symbol
    nor the output of an earlier merge (this also catches cycles)."""


class OutOfVocabularyError(ModtokError, ValueError):
    """A token id (or token) outside the (sub-)vocabulary it was used with."""


class MissingByteFallbackError(TokenizerFileError):
    """A Unigram piece set without byte fallback (no ``<unk>`` or not all 256
    ``<0xNN>`` byte pieces), so some strings would have no segmentation."""


class UnknownSchemeError(ModtokError, KeyError):
    """A pre-tokenizer name that is not in :data:`modtok.text.pretokenize.SCHEMES`."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class SchemeError(ModtokError, ValueError):
    """An LM sampling scheme or training mixture that cannot be used: an unknown
    kind, a probability outside [0, 1], ``samp_sub`` with n < 1 or with fewer
    other languages than n, or mixture weights that are negative or sum to 0."""


class ActiveSetError(ModtokError, ValueError):
    """An LM active id set (or the language union that defines it) that cannot be
    used: empty, unsorted, repeated, outside the vocabulary, an unknown
    evaluation setting, or a generation prompt with nothing to condition on."""


class ModelConfigError(ModtokError, ValueError):
    """An impossible LM shape (head size, divisibility, lengths) or a sequence
    longer than the model's context."""


class CheckpointError(ModtokError):
    """An LM checkpoint (or compact model) that is unreadable, of an older format,
    or written for another model, training configuration, data stream or vocabulary."""


class VocabularyMismatchError(ModelConfigError):
    """A model whose vocabulary size does not fit the tokenizer it is used with
    (tokenizer ids + the LM's boundary id). It is a mismatch of arguments, found
    before any checkpoint is read or written, hence not a :class:`CheckpointError`."""


class RecordError(DataError):
    """One record of a corpus file cannot be used (bad JSON, a missing or
    non-text field, a null value); says the file and where in it: the line
    (text, JSONL) or row (Parquet, Arrow) and the byte offset. For compressed
    files the offset is in the decompressed stream.

    >>> print(RecordError("a.jsonl", "bad JSON", line=3, offset=17))
    a.jsonl: bad JSON (line 3, byte offset 17)
    """

    def __init__(self, path, reason: str, line: int | None = None, offset: int | None = None,
                 row: int | None = None):
        self.path, self.reason, self.line, self.offset, self.row = str(path), reason, line, offset, row
        where = [f"line {line}"] if line is not None else []
        where += [f"row {row}"] if row is not None else []
        where += [f"byte offset {offset}"] if offset is not None else []
        Exception.__init__(self, f"{self.path}: {reason}" + (f" ({', '.join(where)})" if where else ""))

    def __reduce__(self):  # picklable, so an error raised on a Dask worker reaches the caller intact
        return type(self), (self.path, self.reason, self.line, self.offset, self.row)


class RecordEncodingError(RecordError, EncodingError):
    """A record that is not valid UTF-8: an :class:`EncodingError` that also
    names the line; ``offset`` is the byte offset of the first bad byte."""


class ShardError(DataError):
    """A whole corpus file cannot be read (corrupt compressed stream, not a
    Parquet or Arrow file, no such text column)."""

    def __init__(self, path, reason: str):
        self.path, self.reason = str(path), reason
        super().__init__(f"{self.path}: {reason}")

    def __reduce__(self):
        return type(self), (self.path, self.reason)


class ConfigError(ModtokError, ValueError):
    """An option outside its domain, or options that cannot work together (an unknown
    arm, an unknown ISO 15924 script code, a file mode)."""


class OutputExistsError(ModtokError, FileExistsError):
    """An output path holds something that a run must not overwrite (see modtok.outputs)."""


class OutputBusyError(OutputExistsError):
    """Another live modtok run is writing the same output path (its lock, see modtok.outputs)."""


class OutputWriteError(ModtokError, OSError):
    """An output directory could not be written (the disk or quota full, ...); nothing of it is left."""


class UsageError(ModtokError, ValueError):
    """Arguments that disagree with each other or with the object they are given to
    (arrays of mismatched shapes, a query the object was built without)."""


class ParityConfigError(ConfigError):
    """Options of parity-aware BPE that cannot work together (J >= merges, alpha <= 0,
    ratios of the wrong length, unknown variant or mode, ...)."""


class MixtureError(ConfigError):
    """Bad AdaptMix input: μ outside (0, 1], negative ε, shares that are not a
    distribution, mismatched languages, or a resumed run with other settings."""


class MissingDevTextError(DataError):
    """A training language without dev text to measure it on (AdaptMix's fertility,
    parity-aware BPE's per-language cost)."""


class ParallelCorpusError(DataError, ValueError):
    """Parallel sides that do not align (different numbers of lines)."""


class UnsupportedTokenizerError(ModtokError, TypeError):
    """An object that metrics cannot encode with (see
    :func:`modtok.evaluation.metrics.encode_lines`)."""


class UnknownTokenizerError(ModtokError, KeyError):
    """A deployed-tokenizer name that :data:`modtok.artifacts.deployed.DEPLOYED` does not list."""

    def __str__(self) -> str:
        return self.args[0]


class MissingPackageError(ModtokError, ImportError):
    """The optional package that ships a deployed tokenizer is not installed."""


class StaleBuildError(ModtokError, ImportError):
    """A compiled extension built from another version of its C source (``modtok.text.lexer``
    refuses it; ``pip install -e .`` rebuilds it)."""
