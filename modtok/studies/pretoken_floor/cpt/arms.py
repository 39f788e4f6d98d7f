"""The arms of continued pretraining: R0 / R1 / R2 and the matched-steps runs (§V–VII).

    R0   the base tokenizer, no new tokens
    R1   K merges appended under the base's letters-only regex (they stall at the floor)
    R2   the repaired regex (\\p{M} in the word class) + K merges
    R2 (matched steps)   R2's tokenizer at R1's step count, the extra windows a second pass (the paper's)
    R0 (matched steps)   R0 cut to R1's step count (our addition: "We did not run R0 at matched steps")

New embedding and output rows are the mean of their constituents' rows (§V,
:func:`modtok.adapt.hf_model.grow_lm`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from modtok.adapt import extend
from modtok.artifacts.modular import ModularTokenizer
from modtok.bpe.export import save_tokenizer_json
from modtok.bpe.standard import train_from_lines
from modtok.lm.model import LM
from modtok.lm.stream import lm_tokenizer

BASE = "base (no continued pretraining)"
MATCHED = "R2 (matched steps)"  # the paper's: R1's step count, the extra windows a second pass
R0_MATCHED = "R0 (matched steps)"  # our addition: R0 cut to R1's step count
ARMS = ("R0", "R1", "R2", MATCHED, R0_MATCHED)  # trained once per seed, in this order
ADDITIONS = {BASE: "reference: the base model, no continued pretraining",
             R0_MATCHED: "addition: not in the paper (\"We did not run R0 at matched steps\")"}
PAIRS = (("R2", "R1"), ("R2", "R0"), ("R1", "R0"), (MATCHED, "R1"), (MATCHED, "R0"), (R0_MATCHED, "R0"),
         (BASE, "R0"))
LABELLED = (("R2", "R1"), ("R2", "R0"))  # the paper's registered comparisons


def base_tokenizer(lines: Iterable[str], vocab_size: int, path, scheme: str = "llama3") -> extend.Base:
    """The project's own byte-level BPE (``scheme``'s split regex) trained on
    ``lines``, written to ``path`` (``tokenizer.json``) and loaded back as a
    :class:`extend.Base`, the way a deployed file is read."""
    save_tokenizer_json(train_from_lines(lines, vocab_size, scheme), path)
    return extend.Base.load(path)


@dataclasses.dataclass
class Arm:
    name: str
    tokenizer: ModularTokenizer
    ext: extend.Extension | None  # None: R0 (the base tokenizer)
    steps: int = 0
    bytes: int = 0  # training bytes read (per seed: the same for every seed)
    model: LM | None = None  # kept for the base model only (the arms' are scored, then dropped)


def arms(base: extend.Base, cpt_target: Sequence[str], merges: int) -> dict[str, Arm]:
    """Every arm of :data:`ARMS` and the base model's (:data:`BASE`) over the base
    tokenizer ``base``: R1's and R2's ``merges`` merges are learned on
    ``cpt_target`` under their own regex (:func:`modtok.adapt.extend.arm_pattern`);
    the matched arms share R2's and R0's tokenizers."""
    base_tok = lm_tokenizer(base.json)
    out = {BASE: Arm(BASE, base_tok, None), "R0": Arm("R0", base_tok, None)}
    for name in ("R1", "R2"):
        counts = extend.count_words(base, cpt_target, extend.arm_pattern(base.regex, name))
        ext = extend.extend(base, counts, merges, name)
        out[name] = Arm(name, lm_tokenizer(ext.tokenizer_json()), ext)
    out[MATCHED] = Arm(MATCHED, out["R2"].tokenizer, out["R2"].ext)
    out[R0_MATCHED] = Arm(R0_MATCHED, base_tok, None)
    return out
