"""What an extension kept of its base: the report both families' checks fill.

Proposition 1 of "Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§IV):
appending merges (and ids) to a BPE leaves every original id, every original merge and
the encoding of text without the new tokens' script as they were. An extension is
checked for exactly that before anything is written, by
:func:`modtok.adapt.extend.invariance` (a byte-level BPE, HF ``tokenizers``) and
:func:`modtok.adapt.spm.invariance` (a SentencePiece BPE, in ``sentencepiece`` and in
the ``tokenizer.json`` written beside it); both return an :class:`Invariance`.

>>> inv = Invariance(True, True, True, {"probe.txt": (3, 2, 1)}, {"probe.txt": "Hello"})
>>> inv.ok
False
>>> for line in inv.lines(): print(line)
original ids kept, original merges kept, special tokens kept
probe.txt: 2/3 lines with identical ids (1 line with marks or the target script skipped)
  first changed line: 'Hello'
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Invariance:
    """What an extension kept of its base (the module docstring).

    ``ids_kept`` / ``merges_kept`` / ``specials_kept``: every original vocabulary
    entry at its id, the original merges as the first ones in their order, the
    added tokens unchanged; ``probes``: ``{name: (lines compared, lines with
    identical ids, lines skipped)}``, a line being skipped when it holds a
    character of the target block or (repaired regex) a combining mark;
    ``examples``: the first line of each probe whose ids moved.
    """

    ids_kept: bool
    merges_kept: bool
    specials_kept: bool
    probes: dict[str, tuple[int, int, int]]
    examples: dict[str, str]

    @property
    def ok(self) -> bool:
        return self.ids_kept and self.merges_kept and self.specials_kept and all(
            same == n for n, same, _ in self.probes.values())

    def lines(self) -> list[str]:
        """The report, one line per check."""
        yes = {True: "kept", False: "CHANGED"}
        out = [f"original ids {yes[self.ids_kept]}, original merges {yes[self.merges_kept]}, special tokens "
               + yes[self.specials_kept]]
        for name, (n, same, skipped) in self.probes.items():
            out.append(f"{name}: {same}/{n} lines with identical ids"
                       + (f" ({skipped} line{'s' * (skipped > 1)} with marks or the target script skipped)"
                          if skipped else ""))
            if name in self.examples:
                out.append(f"  first changed line: {self.examples[name][:120]!r}")
        return out
