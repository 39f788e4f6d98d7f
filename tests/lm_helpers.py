"""Shared fixtures of the tests/test_lm_*.py files: a tiny real ModularTokenizer.

The global tokenizer is a byte-level BPE trained with HF ``tokenizers`` on three
toy "languages"; a language's id list is every token its text uses under the
global tokenizer, closed under merge ancestry, plus the 256 byte symbols, so
every union of languages is a proper BPE that still encodes any text.
"""

from __future__ import annotations

import json

import pytest
import torch

from modtok.artifacts.baselines import train_hf_bpe
from modtok.artifacts.modular import ModularTokenizer

TOY_CORPUS = {
    "eng_Latn": [
        "the cat sat on the mat and looked at the window",
        "a small dog ran after the red ball in the garden",
        "we walked to the market and bought fresh bread",
        "the weather was cold but the morning was bright",
        "she reads a book every evening before sleeping",
        "they played music together late into the night",
    ],
    "deu_Latn": [
        "die katze sitzt auf der matte und schaut zum fenster",
        "ein kleiner hund rennt dem roten ball im garten nach",
        "wir gingen zum markt und kauften frisches brot",
        "das wetter war kalt aber der morgen war hell",
    ],
    "fra_Latn": [
        "le chat est assis sur le tapis et regarde la fenêtre",
        "un petit chien court après la balle rouge dans le jardin",
        "nous sommes allés au marché acheter du pain frais",
        "il faisait froid mais le matin était lumineux",
    ],
}


def modular_from_bpe(tok, corpus: dict[str, list[str]]) -> ModularTokenizer:
    """ModularTokenizer whose language lists are the ancestry-closed ids each language uses."""
    tj = json.loads(tok.to_str())
    vocab = tj["model"]["vocab"]
    parts = {}
    for m in tj["model"]["merges"]:
        left, right = m.split(" ") if isinstance(m, str) else m
        parts.setdefault(left + right, (left, right))
    inverse = {i: t for t, i in vocab.items()}
    base = {i for t, i in vocab.items() if t not in parts}
    lang_to_ids = {}
    for lang, lines in corpus.items():
        todo = [inverse[i] for e in tok.encode_batch(lines) for i in e.ids]
        ids = set(base)
        while todo:
            t = todo.pop()
            if vocab[t] not in ids:
                ids.add(vocab[t])
                todo.extend(parts.get(t, ()))
        lang_to_ids[lang] = sorted(ids)
    return ModularTokenizer(tj, lang_to_ids)


def toy_tokenizer(vocab_size: int = 420) -> ModularTokenizer:
    tok = train_hf_bpe({k: v * 3 for k, v in TOY_CORPUS.items()}, vocab_size, scheme="whitespace", min_frequency=2)
    return modular_from_bpe(tok, TOY_CORPUS)


@pytest.fixture(autouse=True)
def one_torch_thread():
    """Tiny models run fastest on one thread; several threads spin against each other on a busy machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
