"""An example corpus of one's own, made on the spot: to try every command and notebook on
data laid out as a user's is (``modtok example-corpus DIR``), and the "any data" fixture of
the tests (``make test`` runs every notebook on it).

Four languages (eng_Latn, deu_Latn, rus_Cyrl, hin_Deva; no Nepali), training text in
two formats a user keeps text in (English and German as JSON Lines in Zstandard shards,
Russian and Hindi as Parquet), a YAML manifest with globs, and evaluation text with its
own dev/ and devtest/ splits. The text is wordfreq pseudo-sentences (an installed
package, no download; nothing third-party is stored in the repository); the evaluation
files of all languages have the same number of lines, so modtok treats them as parallel
(they are not translations: a stand-in for a user's parallel test set).

    modtok example-corpus DIR     # writes DIR/corpora.yaml, DIR/text/, DIR/eval/{dev,devtest}/
"""

from __future__ import annotations

import io
import json
from pathlib import Path

LANGS = ("eng_Latn", "deu_Latn", "rus_Cyrl", "hin_Deva")
TRAIN_LINES, DEV_LINES, TEST_LINES = 1600, 150, 300


def build(root: str | Path) -> tuple[Path, Path]:
    """Write the fixture under ``root``; return ``(manifest, eval_dir)``."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import zstandard

    from modtok import atomic
    from modtok.text import data

    root = Path(root)
    (root / "text").mkdir(parents=True, exist_ok=True)
    train = data.load_wordfreq(list(LANGS), n_lines=TRAIN_LINES, seed=11)
    manifest = {}
    for lang in LANGS:
        lines = train[lang]
        if lang in ("eng_Latn", "deu_Latn"):
            half = len(lines) // 2
            for i, shard in enumerate((lines[:half], lines[half:])):
                docs = "".join(json.dumps({"text": s, "id": j}, ensure_ascii=False) + "\n" for j, s in enumerate(shard))
                atomic.write_bytes(root / "text" / f"{lang}-{i:03d}.jsonl.zst", zstandard.compress(docs.encode("utf-8")))
            manifest[lang] = [f"text/{lang}-*.jsonl.zst"]
        else:
            buffer = io.BytesIO()
            pq.write_table(pa.table({"text": lines}), buffer, row_group_size=400)
            atomic.write_bytes(root / "text" / f"{lang}.parquet", buffer.getvalue())
            manifest[lang] = [f"text/{lang}.parquet"]
    atomic.write_text(root / "corpora.yaml", "".join(f"{lang}: {json.dumps(paths)}\n" for lang, paths in manifest.items()))
    for split, n, seed in (("dev", DEV_LINES, 12), ("devtest", TEST_LINES, 13)):
        (root / "eval" / split).mkdir(parents=True, exist_ok=True)
        for lang, lines in data.load_wordfreq(list(LANGS), n_lines=n, seed=seed).items():
            atomic.write_text(root / "eval" / split / f"{lang}.txt", "\n".join(lines) + "\n")
    return root / "corpora.yaml", root / "eval"
