"""The files around a ``tokenizer.json`` that make ``transformers`` load it as it is.

A deployed tokenizer's settings beyond its ``tokenizer.json`` (named special tokens,
BOS/EOS, the chat template) live in ``tokenizer_config.json``; an adapted tokenizer
(:mod:`modtok.adapt.extend`, :mod:`modtok.adapt.trim`) carries them over:
:func:`base_config` reads them, :func:`with_template` writes BOS/EOS into the
``tokenizer.json`` itself (``transformers`` 5 takes them from there).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from modtok.artifacts import deployed
from modtok.errors import TokenizerFileError

# Keys of a base's own tokenizer_config.json that an extension does not carry: its class
# (a model-specific class rebuilds the pre-tokenizer and would lose the repair; the
# extension is loaded as PreTrainedTokenizerFast) and the files and code it points at.
_NOT_CARRIED = ("tokenizer_class", "auto_map", "name_or_path", "tokenizer_file", "vocab_file", "merges_file")
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


def base_config(name_or_path: str | os.PathLike, tokenizer_json: Mapping) -> dict:
    """The ``tokenizer_config.json`` settings known for a base, later sources overriding:

    1. :data:`modtok.artifacts.deployed.DEPLOYED_CONFIG` for a deployed name;
    2. the BOS / EOS of the ``tokenizer.json``'s own template (:func:`template_specials`;
       the file then adds them itself, so ``add_bos_token`` / ``add_eos_token`` are dropped);
    3. beside a ``tokenizer.json`` file (or in its directory): ``special_tokens_map.json``,
       ``tokenizer_config.json`` (less the keys an extension does not carry) and
       ``chat_template.jinja``, as a ``transformers`` model directory has them.

    A named special token (``bos_token``, ...) that the base does not have is left out:
    ``transformers`` would add it as a new token, onto a learned id.
    """
    config: dict = dict(deployed.DEPLOYED_CONFIG.get(str(name_or_path), {}))
    found = template_specials(tokenizer_json)
    if found:
        config.update(found)
        config.pop("add_bos_token", None)
        config.pop("add_eos_token", None)
    if str(name_or_path) not in deployed.DEPLOYED:
        path = Path(name_or_path)
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
