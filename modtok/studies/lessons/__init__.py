"""Learn it small: each method of notebooks 01-07 run step by step on a toy, by its naive
reference, with the same toy through the fast engine for comparison.

Every module has ``trace()`` (a list of :class:`~modtok.studies.lessons.steps.Step`, what
:class:`modtok.ui.stepper.Stepper` shows), ``prediction()`` (a
:class:`~modtok.studies.lessons.steps.Prediction` for :class:`modtok.ui.stepper.Predict`),
``reference()`` or the trace's ``data`` (the naive run), ``engine_run()`` (the library's
fast path on the same toy) and ``engine_step()`` (a step that shows both side by side;
``tests/test_lessons.py`` checks that they agree):

- :mod:`~modtok.studies.lessons.bpe`            01 standard BPE, Latin and Devanagari
- :mod:`~modtok.studies.lessons.sequential`     02 Algorithm 2, and concatenation breaking a union
- :mod:`~modtok.studies.lessons.unigram`        03 the lattice, Viterbi, one EM step
- :mod:`~modtok.studies.lessons.subtokenizers`  04 a sampled subtokenizer and the rows its loss covers
- :mod:`~modtok.studies.lessons.parity`         05 parity-aware BPE serves the costliest language
- :mod:`~modtok.studies.lessons.mixture`        06 AdaptMix, Eqs. 1-5, two iterations
- :mod:`~modtok.studies.lessons.pretoken`       07 the pre-token floor, R1 vs R2
- :mod:`~modtok.studies.lessons.exercises`      the exercise ladder's checkers

Every toy is a few words written here: no data, seconds on Run All.
"""

LESSONS = {
    "01": "bpe",
    "02": "sequential",
    "03": "unigram",
    "04": "subtokenizers",
    "05": "parity",
    "06": "mixture",
    "07": "pretoken",
}
