import os

#: Each pytest-xdist worker gets its share of the CPUs as its thread budget, set before numpy, torch or llama.cpp load:
#: two workers each running llama.cpp or torch at 2 threads on 2 cores oversubscribe them, and their OpenMP threads
#: spin while they wait. The budget is OMP_NUM_THREADS, which torch, OpenBLAS and the reasoners' default
#: (fgpo_lib.reasoners.llm.default_threads) all read; a value the caller set is kept.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    _share = max(1, len(os.sched_getaffinity(0)) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_var, str(_share))

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from fgpo_lib import RewardTable, SubsetSpace


@pytest.fixture
def three_tool_table() -> RewardTable:
    """A hand-built 3-tool table: 4 questions x 8 subsets (empty set included)."""
    space = SubsetSpace(3, tool_names=("gene_search", "snp_lookup", "blast"))
    rewards = np.array(
        [
            [0, 1, 0, 0, 1, 1, 0, 0.5],
            [0, 0, 1, 0, 1, 0, 1, 1],
            [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],  # constant: unlearnable
            [0, 0, 0, 1, 0, 1, 1, 1],
        ],
        dtype=np.float32,
    )
    return RewardTable(rewards, ["q0", "q1", "q2", "q3"], space, tasks=["a", "a", "b", "b"], split=["train", "train", "train", "test"])


_LOOPBACK = ("127.", "::1", "localhost")


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Every test runs with outbound connections refused; loopback (local kernels, local servers) still works."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(sock, address):
        host = address[0] if isinstance(address, tuple) else address
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not str(host).startswith(_LOOPBACK):
            raise OSError(f"network access blocked in tests: {address!r}")

    def connect(sock, address):
        guard(sock, address)
        return real_connect(sock, address)

    def connect_ex(sock, address):
        guard(sock, address)
        return real_connect_ex(sock, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


#: test files whose cases are independent and long (each re-derives an LLM table), so pytest-xdist may spread them over
#: workers case by case; every other file stays on one worker (``--dist loadgroup``), so that its module fixtures (a
#: small book, a loaded model) are built once
SPREAD_CASES = {"test_tables.py"}


#: the full tier only (``make test``, CI): files whose tests load a real LLM or the policy's backbone, train TRL's arms,
#: re-derive committed tables live, or build the book. ``make test-fast`` (``pytest -m "not slow"``) leaves them out,
#: with the single tests marked ``@pytest.mark.slow`` elsewhere (subprocesses, servers, a full resume).
SLOW_FILES = {"test_tables.py", "test_crossbuild.py", "test_llm_reasoners.py", "test_notebooks_book.py", "test_book_check.py", "test_lm_arms.py",
              "test_lm_selector.py", "test_ladder.py"}


#: the files whose tests take longest, run first (longest first: a long file scheduled last keeps one process busy
#: while the others have finished); every other file keeps its place
LONG_FIRST = ("test_notebooks_book.py", "test_ladder.py", "test_tables.py", "test_own_agent.py", "test_outputs_harness.py",
              "test_nothing_lost.py", "test_lm_arms.py", "test_llm_reasoners.py", "test_precompute.py")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own hook reads the xdist_group marks (--dist loadgroup)
def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONG_FIRST)))  # stable: a file's own order is kept
    for item in items:
        if item.path.name not in SPREAD_CASES:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)


class QuietJSONHandler(BaseHTTPRequestHandler):
    """A test server's request handler that answers in JSON and logs nothing."""

    def reply(self, status: int, body: bytes) -> None:
        """Send ``body``; a client that has gone (one that timed out on a slow reply, as tests intend) is not an error."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


class _Misbehaving(QuietJSONHandler):
    """An OpenAI-style endpoint whose every completion fails (``mode``: ``500``, ``slow`` or ``nochoices``); it
    serves no ``GET /v1/models``, as some servers do not."""

    calls = 0

    def do_POST(self):  # noqa: N802
        type(self).calls += 1
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if self.server.mode == "slow":
            time.sleep(1.0)
        if self.server.mode == "nochoices":
            self.reply(200, json.dumps({"id": "x", "object": "chat.completion"}).encode())
        else:
            self.reply(500, b'{"error": "internal"}')


@pytest.fixture
def bad_server():
    """``start(mode)`` serves a :class:`_Misbehaving` endpoint on a free loopback port and returns its URL."""
    servers = []

    def start(mode):
        srv = ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
        srv.mode = mode
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f"http://127.0.0.1:{srv.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
