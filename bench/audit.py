"""``modtok audit`` old vs new: the same command run on two checkouts, interleaved.

Each run is a fresh process (``python -m modtok audit TOKENIZER --lang L --ref R
--json``) with ``PYTHONPATH`` pointing at one checkout's ``modtok``; the runs
alternate old, new, old, ... ``--repeats`` times each, so a shared machine's slow
drift in load falls on both. Printed: wall and CPU seconds (user + system of the
child) per run, their medians, and whether every run printed the same figures (the JSON fields both checkouts print)
(the numbers must not change, only the time).

    MODTOK_FLORES=../shared/data/flores200 .venv/bin/python bench/audit.py \\
        --old /work/main --new . [--tokenizer llama3] [--lang npi_Deva] [--ref eng_Latn] [--repeats 5]

The time includes the interpreter's start and loading the tokenizer (as a user
of the command waits for them); ``--profile`` prints, for the new checkout only,
where one run's time goes (load, encode, each measure).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path


def _env(checkout: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(checkout), PYTHONHASHSEED="0")


def imported_from(checkout: Path) -> Path:
    """Where a child run on ``checkout`` imports modtok from. ``python -m`` puts its working
    directory first on sys.path, ahead of PYTHONPATH, so a child run from elsewhere would
    import that directory's modtok (session 12: run from the new checkout, "old" timed the
    new code); each child therefore runs in its checkout, and this checks it."""
    out = subprocess.run([sys.executable, "-c", "import modtok; print(modtok.__file__)"], cwd=checkout,
                         env=_env(checkout), capture_output=True, text=True, check=True)
    return Path(out.stdout.strip()).resolve().parent.parent


def run(checkout: Path, args) -> tuple[float, float, str]:
    """One ``modtok audit`` on ``checkout``: (wall s, CPU s of the child, its stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "modtok", "audit", args.tokenizer, "--lang", args.lang,
                          "--ref", args.ref, "--json"], cwd=checkout, env=_env(checkout),
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, out.stdout


def profile(args) -> None:
    """Where one audit's time goes, in this process (the new checkout's code)."""
    from modtok.evaluation import audit
    from modtok.text import data

    t = time.perf_counter()
    tok = audit.load_tokenizer(args.tokenizer)
    text = data.load_flores([args.lang, args.ref], "devtest")
    print(f"  load tokenizer + text {time.perf_counter() - t:.2f} s")
    x, ref = audit.encode_aligned(tok, text[args.lang], text[args.ref])
    for what, f in (("encode both sides (ids)", lambda: (x.with_ids(), ref.with_ids())),
                    ("premium + bootstrap CI", lambda: audit.premium_ci_of(x, ref)),
                    ("pre-tokens (floor)", lambda: audit.floor_of(x, ref)),
                    ("P_rep pre-tokens (decomposition)", lambda: audit.decomposition_of(x, ref)),
                    ("mark-initial share", lambda: audit.mark_initial_of(x)),
                    ("lossless (decode both)", lambda: audit.lossless_of(x) and audit.lossless_of(ref))):
        t = time.perf_counter()
        f()
        print(f"  {what:34s} {time.perf_counter() - t:.3f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True, help="checkout whose modtok is the 'before'")
    ap.add_argument("--new", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--tokenizer", default="llama3")
    ap.add_argument("--lang", default="npi_Deva")
    ap.add_argument("--ref", default="eng_Latn")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    times: dict[str, list[tuple[float, float]]] = {"old": [], "new": []}
    rows: set[str] = set()  # each run's JSON row
    for checkout in (args.old, args.new):
        if imported_from(checkout) != checkout.resolve():
            sys.exit(f"a run on {checkout} imports modtok from {imported_from(checkout)}")
    run(args.new, args)  # warm the page cache and numba's cache, not timed
    for r in range(args.repeats):
        for side, checkout in (("old", args.old), ("new", args.new)):
            wall, cpu, out = run(checkout, args)
            times[side].append((wall, cpu))
            rows.add(out.strip())
            print(f"  repeat {r} {side}: {wall:.2f} s wall, {cpu:.2f} CPU s", flush=True)
    for side, ts in times.items():
        walls, cpus = [w for w, _ in ts], [c for _, c in ts]
        print(f"{side}: median {statistics.median(walls):.2f} s wall [{min(walls):.2f}, {max(walls):.2f}], "
              f"{statistics.median(cpus):.2f} CPU s [{min(cpus):.2f}, {max(cpus):.2f}]")
    # fields one checkout has and the other lacks (the newer "evaluation" label) are not numbers to compare
    parsed = [json.loads(r) for r in rows]
    shared = set.intersection(*(set(p) for p in parsed))
    same = len({json.dumps({k: p[k] for k in sorted(shared)}) for p in parsed}) == 1
    print(f"same figures from every run ({', '.join(sorted(shared))}):", same)
    if not same:
        print("\n".join(sorted(rows)))
    if args.profile:
        sys.path.insert(0, str(args.new))
        print("where the new audit's time goes (one run, in this process):")
        profile(args)


if __name__ == "__main__":
    main()
