"""The naive baseline: concatenate independently trained monolingual BPEs.

Each language gets a standard BPE of ``vocab_size = k``; their merge lists are
appended one after another (a merge already present keeps its first rank), and
language i's sub-vocabulary is the set of global ids of its own tokens. A
token that language i builds as ``ab + c`` can be unreachable in a union with
an earlier language whose merges consume ``b`` first: merges of different
languages were never ordered against each other.

>>> from collections import Counter
>>> res = train_concat({"x": Counter({"ab": 5}), "y": Counter({"bc": 4})}, 257)
>>> res.model.merges, res.lang_to_ids["y"][256:]
([(97, 98), (98, 99)], [257])
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from modtok.bpe import standard
from modtok.bpe.model import BPEModel
from modtok.bpe.sequential import MultilingualBPE, check_order
from modtok.text.pretokenize import DEFAULT_SCHEME


def concatenate(models: Mapping[str, BPEModel], order: Sequence[str] | None = None) -> MultilingualBPE:
    """One global model from monolingual models (in ``order``) + their id sets."""
    order = check_order(models, order)
    schemes = {models[lang].scheme for lang in order}
    glob = BPEModel([], schemes.pop() if len(schemes) == 1 else DEFAULT_SCHEME)
    lang_to_ids = {}
    for lang in order:
        mono = models[lang]
        to_global = list(range(256))
        for (a, b), c in zip(mono.merges, mono.results):
            pair = (to_global[a], to_global[b])
            if pair in glob.ranks:
                g = glob.results[glob.ranks[pair]]
            else:
                g = glob.add_merge(*pair)
            if c == len(to_global):
                to_global.append(g)
        lang_to_ids[lang] = sorted(set(to_global))
    return MultilingualBPE(glob, lang_to_ids)


def train_concat(
    counts_by_lang: Mapping[str, Counter],
    k: int,
    order: Sequence[str] | None = None,
    scheme: str = DEFAULT_SCHEME,
) -> MultilingualBPE:
    """Monolingual BPEs of ``vocab_size = k`` (bytes included), concatenated."""
    order = check_order(counts_by_lang, order)
    models = {lang: standard.train(counts_by_lang[lang], k, scheme) for lang in order}
    return concatenate(models, order)
