"""One JupyterLab server and one headless Chromium for the browser suite.

JupyterLab is started the way ``make lab`` starts it (``--notebook-dir=notebooks``,
the repository's Lab settings in ``.jupyter/lab/user-settings``), on 127.0.0.1
with a random token and a free port, with ``MODTOK_SMOKE=1`` for its kernels and
a throw-away workspaces/config/runtime directory (so no tab of an earlier session
is restored). It is stopped by its own PID when the module ends. Its kernels read the
data the environment names: ``make test`` points it at a user's own corpus (``modtok
example-corpus --scripts``: English, Chinese, Japanese, Korean, Thai, Khmer, Burmese and
Amharic as plain text, JSONL.zst and Parquet behind one manifest, its own parallel evaluation
text, no ../shared), so Run All checks every notebook's Checks on data other than the authors'.

Chromium is Debian's ``/usr/bin/chromium`` (``make test`` installs it with apt;
``playwright install`` is never used: it downloads browsers). Outside CI the
suite skips when Chromium or Playwright is missing; under ``CI`` it fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
SHOTS = ROOT / "build" / "browser"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
TIMINGS: dict[str, dict[str, float]] = {}  # notebook -> step -> seconds, printed at the end
PROGRESS: list[str] = []  # per widget change: input -> redraw and input -> progress display (ms)


def _missing(what: str):
    if os.environ.get("CI"):
        pytest.fail(f"browser suite: {what} (make test installs it)")
    pytest.skip(f"browser suite: {what}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab server: ``url``, ``token`` and a small REST client."""

    def __init__(self, proc: subprocess.Popen, url: str, token: str, log: Path):
        self.proc, self.url, self.token, self.log = proc, url, token, log

    def api(self, path: str, method: str = "GET"):
        req = urllib.request.Request(f"{self.url}/api/{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=30) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_kernels(self) -> None:
        for session in self.api("sessions"):
            self.api(f"sessions/{session['id']}", "DELETE")


class BrowserSetupError(Exception):
    """JupyterLab or Chromium could not be started (the suite fails or skips; the bench exits)."""


@contextlib.contextmanager
def running_lab(tmp: Path, smoke: bool = True):
    """JupyterLab as ``make lab`` starts it, in a throw-away config under ``tmp`` (``smoke``:
    ``MODTOK_SMOKE=1`` for its kernels); stopped by its own PID on exit."""
    token, port = secrets.token_hex(16), _free_port()
    env = dict(
        os.environ,
        PYTHONHASHSEED="0",
        JUPYTERLAB_SETTINGS_DIR=str(ROOT / ".jupyter" / "lab" / "user-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"),
        JUPYTER_CONFIG_DIR=str(tmp / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
    )
    if smoke:
        env["MODTOK_SMOKE"] = "1"
    else:
        env.pop("MODTOK_SMOKE", None)
    args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--notebook-dir=notebooks",
            "--LabApp.expose_app_in_browser=True"]  # window.jupyterapp: read cell states, not to drive the UI
    if os.geteuid() == 0:
        args.append("--allow-root")
    log = tmp / "lab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    server = Lab(proc, f"http://127.0.0.1:{port}", token, log)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise BrowserSetupError(f"JupyterLab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                server.api("status")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    raise BrowserSetupError(f"JupyterLab did not start in 180 s:\n{log.read_text()[-3000:]}")
                time.sleep(0.5)
        yield server
    finally:
        proc.terminate()  # its own PID; the server shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def chromium():
    """A Playwright context on Debian's Chromium with a fresh profile."""
    from playwright.sync_api import sync_playwright

    # A fresh profile: Playwright passes it as --user-data-dir (it refuses that flag in args).
    profile = tempfile.mkdtemp(prefix="modtok-chromium-")
    args = CHROMIUM_FLAGS + (["--no-sandbox"] if os.geteuid() == 0 else [])
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=args,
            viewport={"width": 1500, "height": 1000},
        )
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    try:
        with running_lab(tmp_path_factory.mktemp("lab")) as server:
            yield server
    except BrowserSetupError as e:
        pytest.fail(str(e))


@pytest.fixture(scope="module")
def browser_context():
    try:
        import playwright  # noqa: F401
    except ImportError:
        _missing("playwright is not installed (pip install 'modtok[test]')")
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    with chromium() as context:
        yield context


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)


@pytest.fixture
def shots(request):
    """``shots(page, step)`` saves ``build/browser/<test>/<n>-<step>.png`` (``<test>``: the
    notebook's parameter id, else the test's name); the folder is removed when the test passes
    and kept when it fails (``MODTOK_KEEP_SHOTS``: kept)."""
    callspec = getattr(request.node, "callspec", None)
    folder = SHOTS / (callspec.id if callspec is not None else request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    count = [0]

    def take(page, step: str) -> None:
        count[0] += 1
        page.screenshot(path=str(folder / f"{count[0]:02d}-{step}.png"))

    yield take
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.passed and not os.environ.get("MODTOK_KEEP_SHOTS"):
        shutil.rmtree(folder, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    if not TIMINGS:
        return
    terminalreporter.section("JupyterLab timings (MODTOK_SMOKE=1)")
    for name, steps in TIMINGS.items():
        terminalreporter.write_line(f"{name}: " + ", ".join(f"{k} {v:.1f} s" for k, v in steps.items()))
    for line in PROGRESS:
        terminalreporter.write_line(line)
