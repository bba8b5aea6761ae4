"""Real GGUF models through llama.cpp, and the OpenAI-HTTP reasoner against a real local llama.cpp server."""

import json
import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import llama_cpp  # noqa: F401  (a hard requirement: make setup compiles it)
from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.genomics.tools import make_tools, render_outputs, run_subset
from fgpo_lib.precompute import PrecomputeSpec, evaluate_question
from fgpo_lib.reasoners import make_reasoner
from fgpo_lib.reasoners.http import OpenAIHTTPReasoner
from fgpo_lib.reasoners.llm import default_threads, smollm2_path


@pytest.fixture(scope="module")
def smollm2():
    return make_reasoner("smollm2-135m")


def _question(task):
    return next(q for q in load_benchmark("geneturing") if q.task == task and q.split == "test")


def test_smollm2_is_greedy_deterministic_and_stops_at_the_line_end(smollm2):
    q = _question("Gene location")
    outs = [o.text for o in run_subset(make_tools(), ("gene_search", "gene_record"), q.text)]
    a, b = smollm2.answer(q.text, outs), smollm2.answer(q.text, outs)
    assert a == b and a and "\n" not in a
    fp = smollm2.fingerprint()
    assert len(fp["model_sha256"]) == 64 and fp["prompt_sha256"].endswith("-chatml")


def test_gemma3_base_model_answers_from_a_raw_prompt():
    gemma = make_reasoner("gemma3-270m")
    q = _question("SNP location")
    outs = [o.text for o in run_subset(make_tools(), ("snp_lookup",), q.text)]
    answer = gemma.answer(q.text, outs)
    assert answer and "\n" not in answer
    assert gemma.fingerprint()["model_sha256"] == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"


def test_prefix_reuse_evaluates_far_fewer_prompt_tokens(smollm2):
    spec = PrecomputeSpec("geneturing", "smollm2-135m", max_size=2)  # 37 subsets keep the test short
    q = _question("Gene SNP association")
    before_p, before_e = smollm2.prompt_tokens, smollm2.evaluated_tokens
    rows = evaluate_question(spec, q, spec.space().trie_order().tolist(), smollm2)
    assert all(r[3] == "ok" for r in rows)
    prompt, evaluated = smollm2.prompt_tokens - before_p, smollm2.evaluated_tokens - before_e
    assert evaluated * 3 < prompt


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()), "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", str(default_threads())],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/v1/models", timeout=2) as r:
                if json.loads(r.read())["data"]:
                    break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama.cpp server did not start in 120 s")
    yield url
    proc.terminate()
    proc.wait(timeout=30)


def test_openai_http_reasoner_against_a_real_llama_cpp_server(llama_server):
    r = OpenAIHTTPReasoner(llama_server, model="smollm2", timeout=60, retries=1, concurrency=2)
    q = _question("Gene SNP association")
    outs = render_outputs(run_subset(make_tools(), ("snp_lookup",), q.text)).split("\n")
    answers = r.answer_batch([(q.text, outs), (q.text, outs), (q.text, [])])
    assert all(isinstance(a, str) and a and "\n" not in a for a in answers)
    assert answers[0] == answers[1]  # temperature 0
    # keyed on what llama_cpp.server's /v1/models says it serves under the alias, hashed (not "unverified")
    key = r.fingerprint()["model_sha256"]
    assert key.startswith(f"remote:{llama_server}/smollm2:") and len(key.rsplit(":", 1)[1]) == 16 and "unverified" not in key


def test_default_threads_follow_the_process_budget(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert 1 <= default_threads() <= 2


def test_the_thread_count_does_not_change_llama_cpp_logits():
    """Why a table re-derives under any thread count (the docstring of LlamaCppReasoner): the same prompt's logits
    at 1 and 2 threads are bitwise equal."""
    from llama_cpp import Llama

    scores = []
    for threads in (1, 2):
        llm = Llama(model_path=str(smollm2_path()), n_ctx=512, n_threads=threads, n_threads_batch=threads, seed=0, verbose=False, logits_all=True)
        tokens = llm.tokenize(b"Question: which gene is at rs334? Tool output: HBB on chromosome 11, beta globin. Answer:" * 3)
        llm.eval(tokens)
        scores.append(np.array(llm.scores[: len(tokens)], dtype=np.float32))
    assert scores[0].shape[0] > 60 and np.array_equal(scores[0], scores[1])
