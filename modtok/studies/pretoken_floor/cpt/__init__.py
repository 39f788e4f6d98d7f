"""Continued pretraining after vocabulary extension: arms R0 / R1 / R2 (§VI–VII analog).

"Merge-Based Vocabulary Extension Stalls at the Pre-Tokenizer" (§VI–VII)
continues pretraining a model whose tokenizer has the letters-only regex on
Nepali text, in arms that differ only in the tokenizer:

    R0   the original tokenizer, no new tokens
    R1   K merges appended under the original regex (they stall at the floor)
    R2   the repaired regex (\\p{M} in the word class) + K merges
    new embedding and output rows: the mean of the constituents' rows (§V)

and scores held-out Nepali in bits per byte, the unit that does not depend on
the tokenizer. The paper's scale is 1 GB of Nepali and 1B-parameter models;
here, at workspace scale, the same experiment runs end to end on a CPU:

1. **Base tokenizer**: the project's own byte-level BPE with the ``llama3``
   split regex (:mod:`modtok.bpe.standard`), trained on English-heavy text and
   exported as ``tokenizer.json``, which :meth:`extend.Base.load` reads back.
2. **Base model**: a small :class:`~modtok.lm.model.LM` pretrained on that
   English-heavy text (:func:`modtok.lm.train.train`), once (the paper's
   pretrained model is one model too).
3. **Arms** continue from the base weights on the SAME Nepali + English lines
   (the R1/R2 merges are learned on the Nepali part of them). R0, R1 and R2 read
   those lines exactly once (byte-matched), so R2, whose tokens are longer,
   takes fewer optimizer steps than R1, and R1 fewer than R0. As in the paper,
   ``R2 (matched steps)`` takes **R1's** step count, its extra windows drawn
   from a **second pass over the same stream** (not fresh text). The paper
   states "We did not run R0 at matched steps"; ``R0 (matched steps)`` (R0 cut
   to R1's step count, so it reads less) is our labelled addition
   (:data:`~.arms.ADDITIONS`). Every arm runs once per seed of ``Setup.seeds`` (:mod:`.presets`)
   (at least 3 at full size): a seed fixes the order of the continued-
   pretraining lines, the same order for every arm of that seed. The training
   stream and its batches: :class:`modtok.lm.stream.StreamSource`.
4. **Evaluation, every piece in one context** (§VI "Evaluation", App. D):
   held-out text cut into pieces of at most ``piece_bytes`` bytes at
   whitespace (:func:`~.held_out.held_out`), never across a document. Every piece is
   scored *independently, in one context*: after a *registered prefix token*
   that every arm's vocabulary has, every token of the piece in ONE window of
   the model, so every arm conditions on the same bytes (token windows would
   give the arm with longer tokens more bytes of context, App. D). The paper's
   models read 2,048 tokens, more than any 2,000-byte piece needs; ours read
   ``seq_len`` ids, so the piece size is *chosen*: the largest size, from
   ``piece_bytes`` down (:func:`~.held_out.fit_held_out`), at which the longest piece
   fits one window under every arm (R0, whose tokens are the shortest, needs
   the most ids), and :func:`~.scoring.score_pieces` refuses a piece that does not fit
   rather than cut it. Our tokenizers have no BOS, so the prefix is the LM's
   document boundary ``DOC`` (:func:`modtok.lm.batches.boundary_id`, the
   end-of-text of the paper's "BOS, or end-of-text where there is no BOS"),
   which no text encodes to and which the training stream puts at every
   document start, as the paper's BOS rerun trains with BOS there::

       bpb(arm) = mean over seeds of  Σ_pieces nats(t1..tn | DOC) / ln 2  /  Σ_pieces bytes(piece)

   The denominator is the same for every arm by construction (the scored-bytes
   column of :meth:`~.run.Result.table`). The paper's primary held-out text is a
   slice of its training source never trained on, FLORES-200 secondary
   (§VI, App. D); :func:`~.presets.texts` carves such a slice (``heldout_target``,
   ``heldout_english``) right after the training text.
5. **Intervals over documents, spread over seeds** (:func:`~.scoring.compare`): a paired
   bootstrap that resamples *documents* (on FLORES-200, the sentence's document
   id from its metadata, :func:`~.held_out.flores_documents`; on the pool, whose lines
   are hash-shuffled paragraphs, the line, stated in :attr:`~.held_out.HeldOut.unit`), the same
   documents for every arm and seed; and, beside it, the standard deviation of
   each seed's own point over the seeds.
6. **Labels** (:func:`modtok.evaluation.stats.label`) for R2 − R1 and R2 − R0 (:data:`~.arms.LABELLED`), on the
   document interval of the seed-mean difference, margin δ = 0.01 bits per
   byte, in the fixed order of §VI ("Analysis"; lower bits per byte is
   better): *better* if the interval lies below 0; otherwise *non-inferior* if
   it lies below +0.01; otherwise *worse* if it lies above 0; otherwise *no
   detectable difference*. So the paper's own example, [+0.004, +0.007], is
   non-inferior although it excludes 0. Each seed's own label is reported
   beside it.

The package, one module per concern: :mod:`.arms` (the arms and their
tokenizers), :mod:`.held_out` (pieces within documents), :mod:`.scoring` (one
context per piece, intervals), :mod:`.presets` (sizes and texts), :mod:`.run`
(the experiment and notebook 07 (h)'s :func:`study`).
"""

from .arms import ADDITIONS, ARMS, BASE, LABELLED, MATCHED, PAIRS, R0_MATCHED, Arm, arms, base_tokenizer
from .held_out import LINE, HeldOut, fit_held_out, flores_documents, held_out, longest, pieces
from .presets import PRESETS, Flatten, Setup, base_model_texts, consecutive, flattened, preset, texts
from .run import PAPER_BASE_ENGLISH, Result, machine_size, missing, pretrain, regime, run, study
from .scoring import compare, score_pieces

__all__ = ["ADDITIONS", "ARMS", "BASE", "LABELLED", "MATCHED", "PAIRS", "R0_MATCHED", "Arm", "arms", "base_tokenizer",
           "LINE", "HeldOut", "fit_held_out", "flores_documents", "held_out", "longest", "pieces",
           "PRESETS", "Flatten", "Setup", "base_model_texts", "consecutive", "flattened", "preset", "texts",
           "PAPER_BASE_ENGLISH", "Result", "machine_size", "missing", "pretrain", "regime", "run", "study",
           "compare", "score_pieces"]
