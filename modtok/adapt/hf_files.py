"""The files around a ``tokenizer.json`` that make ``transformers`` load it as it is.

A deployed tokenizer's settings beyond its ``tokenizer.json`` (named special tokens,
BOS/EOS, the chat template) live in ``tokenizer_config.json``; an adapted tokenizer
(:mod:`modtok.adapt.extend`, :mod:`modtok.adapt.trim`) carries them over:
:func:`base_config` reads them, :func:`with_template` writes BOS/EOS into the
``tokenizer.json`` itself (``transformers`` 5 takes them from there), :func:`save`
writes both files and :func:`check_loads` loads the directory back with
``AutoTokenizer`` and compares its ids with the file's.

**How AutoTokenizer picks its class** (transformers 5.23, ``AutoTokenizer.from_pretrained``):
it reads ``config.json``'s ``model_type`` and ``tokenizer_config.json``'s
``tokenizer_class``. When both exist and the class registered for the model type is a
model-specific one, the saved class wins (``llama``, ``qwen3``: we get
``TokenizersBackend``, which loads ``tokenizer.json`` as it is), except for the model
types in ``MODELS_WITH_INCORRECT_HUB_TOKENIZER_CLASS``, ``qwen2`` among them, where the
registered ``Qwen2Tokenizer`` is built whatever the file says; ``mistral`` maps to
``MistralCommonBackend`` only when a ``tekken.json`` lies in the directory, else to
``TokenizersBackend``. A model-specific class, in
``TokenizersBackend.convert_to_native_format``, takes only the vocabulary and merges of
``tokenizer.json`` and rebuilds the pre-tokenizer from its own recipe
(``Qwen2Tokenizer``: the letters-only regex, no ``ignore_merges``), *unless*
``trust_remote_code`` is among the init arguments, which ``tokenizer_config.json``
supplies: then the file is loaded as it is (the class only wraps it). So
:func:`tokenizer_config` writes ``"trust_remote_code": true``; the directory holds no
code (``auto_map`` is never written), so nothing is executed. It also writes every
named token (``null`` where the base has none): ``Qwen2Tokenizer`` otherwise adds its
default ``<|endoftext|>`` as a new token. Measured on tiny directories of each model
type (``tests/test_adapt_auto.py``): without the key, ``qwen2`` encodes Nepali with the
letters-only regex (73 tokens a line instead of 44); with it, every type
gives the file's ids. :func:`check_loads` runs on every saved output, so a
``transformers`` that changes this rule makes the command refuse, not save.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from modtok import atomic
from modtok.artifacts import deployed
from modtok.artifacts.tokenizer_json import write_json
from modtok.errors import TokenizerFileError

# Keys of a base's own tokenizer_config.json that an adapted tokenizer does not carry:
# its class (a model-specific class rebuilds the pre-tokenizer, see the module
# docstring), the files and code it points at, and the ids of added tokens (the
# tokenizer.json holds them, at their new ids after a trim).
_NOT_CARRIED = ("tokenizer_class", "auto_map", "name_or_path", "tokenizer_file", "vocab_file", "merges_file",
                "added_tokens_decoder", "trust_remote_code")
_NAMED = ("bos_token", "eos_token", "pad_token", "unk_token", "sep_token", "cls_token", "mask_token")


def template_specials(tokenizer_json: Mapping) -> dict[str, str]:
    """``bos_token`` / ``eos_token`` that a ``TemplateProcessing`` post-processor (alone
    or in a ``Sequence``) puts before / after a single sequence.

    >>> template_specials({"post_processor": {"type": "TemplateProcessing", "single": [
    ...     {"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]}})
    {'bos_token': '<s>'}
    """
    post = tokenizer_json.get("post_processor") or {}
    steps = post.get("processors") or [] if post.get("type") == "Sequence" else [post]
    out: dict[str, str] = {}
    for step in steps:
        if step.get("type") == "TemplateProcessing":
            single = step.get("single") or []
            if single and "SpecialToken" in single[0]:
                out["bos_token"] = single[0]["SpecialToken"]["id"]
            if len(single) > 1 and "SpecialToken" in single[-1]:
                out["eos_token"] = single[-1]["SpecialToken"]["id"]
    return out


def with_template(tokenizer_json: Mapping, config: Mapping) -> dict:
    """``tokenizer_json`` whose post-processor adds ``config``'s BOS / EOS where
    ``add_bos_token`` / ``add_eos_token`` ask for them: the existing post-processor
    followed by a ``TemplateProcessing`` (Meta's Llama-3 file has this shape), since
    ``transformers`` 5 takes BOS/EOS from the ``tokenizer.json`` and ignores those
    flags. Without either flag, ``tokenizer_json`` unchanged.

    >>> tj = {"added_tokens": [{"id": 5, "content": "<s>"}], "post_processor": None}
    >>> [step["SpecialToken"]["id"] if "SpecialToken" in step else "$A"
    ...  for step in with_template(tj, {"bos_token": "<s>", "add_bos_token": True})["post_processor"]["single"]]
    ['<s>', '$A']
    """
    ids = {t["content"]: t["id"] for t in tokenizer_json.get("added_tokens") or []}
    ends = [(config.get("bos_token"), 0), (config.get("eos_token"), -1)]
    add = [(token, where) for (token, where), flag in zip(ends, ("add_bos_token", "add_eos_token"))
           if config.get(flag) and token in ids]
    if not add:
        return dict(tokenizer_json)

    def template(seq: str, type_id: int) -> list[dict]:
        out = [{"Sequence": {"id": seq, "type_id": type_id}}]
        for token, where in add:
            step = {"SpecialToken": {"id": token, "type_id": type_id}}
            out.insert(0 if where == 0 else len(out), step)
        return out

    processor = {"type": "TemplateProcessing", "single": template("A", 0),
                 "pair": template("A", 0) + template("B", 1),
                 "special_tokens": {t: {"id": t, "ids": [ids[t]], "tokens": [t]} for t, _ in add}}
    tj = dict(tokenizer_json)
    old = tj.get("post_processor")
    tj["post_processor"] = processor if not old else {"type": "Sequence", "processors": [old, processor]}
    return tj


def base_config(name_or_path: str | os.PathLike, tokenizer_json: Mapping,
                model_dir: str | os.PathLike | None = None) -> dict:
    """The ``tokenizer_config.json`` settings known for a base, later sources overriding:

    1. :data:`modtok.artifacts.deployed.DEPLOYED_CONFIG` for a deployed name;
    2. the BOS / EOS of the ``tokenizer.json``'s own template (:func:`template_specials`;
       the file then adds them itself, so ``add_bos_token`` / ``add_eos_token`` are dropped);
    3. beside a ``tokenizer.json`` file (or in its directory), then in ``model_dir`` (a
       model directory whose tokenizer was checked to be this base):
       ``special_tokens_map.json``, ``tokenizer_config.json`` (less the keys an adapted
       tokenizer does not carry) and ``chat_template.jinja``, as a ``transformers`` model
       directory has them.

    A named special token (``bos_token``, ...) that the base does not have is left out:
    ``transformers`` would add it as a new token, onto a learned id.
    """
    config: dict = dict(deployed.DEPLOYED_CONFIG.get(deployed.canonical(str(name_or_path)), {}))
    found = template_specials(tokenizer_json)
    if found:
        config.update(found)
        config.pop("add_bos_token", None)
        config.pop("add_eos_token", None)
    folders = [] if deployed.is_deployed(name_or_path) else [Path(name_or_path)]
    folders += [Path(model_dir)] if model_dir is not None else []
    for path in folders:
        folder = path if path.is_dir() else path.parent
        for name in ("special_tokens_map.json", "tokenizer_config.json"):
            if (folder / name).is_file():
                try:
                    own = json.loads((folder / name).read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
                    raise TokenizerFileError(f"{folder / name}: cannot read it ({e})") from None
                config.update({k: v for k, v in own.items() if k not in _NOT_CARRIED})
        if (folder / "chat_template.jinja").is_file():
            config["chat_template"] = (folder / "chat_template.jinja").read_text(encoding="utf-8")
    known = {t["content"] for t in tokenizer_json.get("added_tokens") or []} | set(tokenizer_json["model"]["vocab"])
    for key in _NAMED:
        token = config.get(key)
        if isinstance(token, Mapping):  # an AddedToken as transformers writes it
            token = token.get("content")
        if key in config and token not in known:
            del config[key]
    return config


def tokenizer_config(config: Mapping) -> dict:
    """``tokenizer_config.json`` of an adapted tokenizer: the class and key that make
    ``AutoTokenizer`` load ``tokenizer.json`` as it is for every model type (module
    docstring), every named token (``None`` where the base has none), and the base's other
    settings (chat template, ...), less ``add_bos_token`` / ``add_eos_token``, which
    :func:`with_template` writes into the ``tokenizer.json``.

    >>> tokenizer_config({"eos_token": "</s>", "add_bos_token": True, "chat_template": "{{ x }}"})
    ... # doctest: +NORMALIZE_WHITESPACE
    {'tokenizer_class': 'TokenizersBackend', 'trust_remote_code': True, 'bos_token': None, 'eos_token': '</s>',
     'pad_token': None, 'unk_token': None, 'chat_template': '{{ x }}'}
    """
    out = {"tokenizer_class": "TokenizersBackend", "trust_remote_code": True}
    out.update({key: config.get(key) for key in ("bos_token", "eos_token", "pad_token", "unk_token")})
    out.update({k: v for k, v in config.items() if k not in out and k not in ("add_bos_token", "add_eos_token")})
    return out


def save(directory: str | os.PathLike, tokenizer_json: Mapping, config: Mapping) -> dict:
    """Write ``tokenizer.json`` (with ``config``'s BOS/EOS template: :func:`with_template`)
    and :func:`tokenizer_config` into ``directory`` (each file atomically); returns the
    ``tokenizer.json`` written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    tj = with_template(tokenizer_json, config)
    write_json(out / "tokenizer.json", tj)
    atomic.write_json(out / "tokenizer_config.json", tokenizer_config(config), indent=2)
    return tj


def check_loads(directory: str | os.PathLike, lines: Iterable[str]) -> tuple[str, int]:
    """Load ``directory`` with ``AutoTokenizer`` (local files only) and compare, on each of
    ``lines``, its ids with those of the directory's ``tokenizer.json`` (loaded by
    ``tokenizers``), with and without special tokens; no token may have been added and the
    chat template must be the one written. Returns ``(class name, lines compared)``; a
    difference is a :class:`TokenizerFileError` that names the class and the line."""
    from tokenizers import Tokenizer
    from transformers import AutoTokenizer

    d = Path(directory)
    own = Tokenizer.from_file(str(d / "tokenizer.json"))
    written = json.loads((d / "tokenizer_config.json").read_text(encoding="utf-8"))
    try:
        auto = AutoTokenizer.from_pretrained(d, local_files_only=True)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TokenizerFileError(f"{d}: AutoTokenizer cannot load the written directory ({e})") from None
    name = type(auto).__name__
    if len(auto) != own.get_vocab_size(with_added_tokens=True):
        raise TokenizerFileError(f"{d}: AutoTokenizer ({name}) has {len(auto):,} tokens, tokenizer.json "
                                 f"{own.get_vocab_size(with_added_tokens=True):,}: it added some; not saved")
    if written.get("chat_template") and auto.chat_template != written["chat_template"]:
        raise TokenizerFileError(f"{d}: AutoTokenizer ({name}) does not carry the chat template written; not saved")
    n = 0
    for line in lines:
        for special in (False, True):
            got = auto(line, add_special_tokens=special).input_ids
            want = own.encode(line, add_special_tokens=special).ids
            if got != want:
                raise TokenizerFileError(
                    f"{d}: AutoTokenizer ({name}) encodes {line[:80]!r} as {len(got)} ids, tokenizer.json as "
                    f"{len(want)} (add_special_tokens={special}); the directory would not load as what was checked")
        n += 1
    return name, n
