"""``openai-http``: a frozen reasoner behind any OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp's server).

It sends the same prompt as the local LLM reasoners (system, the two demonstrations as earlier turns, the question
and tool outputs) to ``{base_url}/v1/chat/completions`` with temperature 0, or the raw prompt to
``/v1/completions`` when ``chat=False``. Requests that time out, or get HTTP 429 or 5xx, are retried ``retries``
times with exponential backoff (``backoff * 2**attempt`` seconds); after that, or on any other HTTP error or a
response without ``choices``, :class:`ReasonerError` is raised, which the precompute engine records as a failed
cell. ``answer_batch`` runs at most ``concurrency`` requests at a time. A cell's cache key names what the server says
it serves under the model's name (``GET /v1/models``; :meth:`OpenAIHTTPReasoner.fingerprint`).
"""

from __future__ import annotations

import hashlib
import json
import socket
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from .base import Reasoner, ReasonerError
from .llm import raw_prompt
from .prompts import check_prompt, demonstrations, template
from .selection import render_selection_user, selection_demos, selection_raw


class OpenAIHTTPReasoner(Reasoner):
    """Args: base_url (e.g. ``http://127.0.0.1:8000``), model (the server's model name), timeout in seconds per
    request, retries, backoff, concurrency, api_key (sent as a Bearer token if given), chat, max_tokens, prompt (the
    prompt's name, :data:`fgpo_lib.reasoners.prompts.PROMPTS`)."""

    name = "openai-http"

    def __init__(self, base_url: str, model: str = "default", timeout: float = 60.0, retries: int = 3, backoff: float = 0.5, concurrency: int = 4, api_key: str | None = None, chat: bool = True, max_tokens: int = 24, prompt: str = "genomics") -> None:
        self.base_url = base_url.rstrip("/")
        self.model, self.timeout, self.retries, self.backoff = model, timeout, retries, backoff
        self.concurrency, self.api_key, self.chat, self.max_tokens = concurrency, api_key, chat, max_tokens
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"reasoner 'openai-http': base_url must be an http(s) URL such as 'http://127.0.0.1:8000', got {base_url!r}")
        self.prompt_name = prompt
        self.template = template(prompt)
        self.demos = demonstrations(prompt)

    def _payload(self, question: str, tool_outputs: list[str]) -> tuple[str, dict]:
        common = {"model": self.model, "temperature": 0.0, "max_tokens": self.max_tokens, "stop": ["\n"]}
        if not self.chat:
            return "/v1/completions", {**common, "prompt": raw_prompt(self.template, question, tool_outputs)}
        messages = [{"role": "system", "content": self.template.system}]
        for q, o, a in self.demos:
            messages += [{"role": "user", "content": self.template.render_user(q, [o])}, {"role": "assistant", "content": a}]
        messages.append({"role": "user", "content": self.template.render_user(question, tool_outputs)})
        return "/v1/chat/completions", {**common, "messages": messages}

    def _post(self, path: str, body: dict) -> dict:
        url = self.base_url + path
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        last = ""
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read().decode())
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {url}"
                if exc.code != 429 and exc.code < 500:
                    raise ReasonerError(f"{last}: {exc.read()[:200]!r}") from exc
            except (socket.timeout, TimeoutError) as exc:
                last = f"timeout after {self.timeout} s from {url}"
                del exc
            except urllib.error.URLError as exc:
                if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                    last = f"timeout after {self.timeout} s from {url}"
                else:
                    raise ReasonerError(f"cannot reach {url}: {exc.reason}") from exc
            except ValueError as exc:
                raise ReasonerError(f"malformed response from {url}: not JSON ({exc})") from exc
            if attempt < self.retries:
                time.sleep(self.backoff * 2**attempt)
        raise ReasonerError(f"{last} after {self.retries + 1} tries")

    def answer(self, question: str, tool_outputs: list[str]) -> str:
        return self._text(*self._payload(question, tool_outputs))

    def select_tools(self, question: str, tools: list[tuple[str, str]]) -> str:
        """The selection call (:mod:`fgpo_lib.reasoners.selection`): the same prompt as the local LLMs'."""
        common = {"model": self.model, "temperature": 0.0, "max_tokens": 32, "stop": ["\n"]}
        if not self.chat:
            return self._text("/v1/completions", {**common, "prompt": selection_raw(question, tools, self.prompt_name)})
        messages = [{"role": "system", "content": check_prompt(self.prompt_name).selection_system}]
        for user, reply in selection_demos(tools, self.prompt_name):
            messages += [{"role": "user", "content": user}, {"role": "assistant", "content": reply}]
        messages.append({"role": "user", "content": render_selection_user(question, tools)})
        return self._text("/v1/chat/completions", {**common, "messages": messages})

    def _text(self, path: str, body: dict) -> str:
        data = self._post(path, body)
        try:
            choice = data["choices"][0]
            text = choice["message"]["content"] if self.chat else choice["text"]
        except (KeyError, IndexError, TypeError) as exc:
            raise ReasonerError(f"malformed response from {self.base_url}{path}: no choices[0] text in {str(data)[:200]}") from exc
        if not isinstance(text, str):
            raise ReasonerError(f"malformed response from {self.base_url}{path}: answer is {type(text).__name__}, not text")
        return text.strip()

    def answer_batch(self, items: list[tuple[str, list[str]]]) -> list[str]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda it: self.answer(*it), items))

    def served_model(self) -> dict | None:
        """What the server says it serves under ``model``: its entry of ``GET /v1/models`` (the only model it lists,
        when it lists one and ``model`` is ``default``), or ``None`` where the server has no such endpoint or does not
        list the model. A server that cannot be reached at all is a :class:`ReasonerError` naming the URL."""
        url = self.base_url + "/v1/models"
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=self.timeout) as resp:
                data = json.loads(resp.read().decode())
        except urllib.error.HTTPError:
            return None  # no /v1/models here: the name is all there is to key on
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, (socket.timeout, TimeoutError)):
                return None
            raise ReasonerError(f"cannot reach {self.base_url} (GET /v1/models: {exc.reason}); is the server running?") from exc
        except (socket.timeout, TimeoutError, ValueError):
            return None
        models = data.get("data") if isinstance(data, dict) else None
        if not isinstance(models, list):
            return None
        entries = [m for m in models if isinstance(m, dict)]
        match = [m for m in entries if m.get("id") == self.model]
        if not match and self.model == "default" and len(entries) == 1:
            match = entries
        return match[0] if match else None

    def fingerprint(self) -> dict:
        """The cache key's reasoner: the endpoint and model name, and what the server says it serves under that name
        (its ``/v1/models`` entry, hashed), so another model served under the same name never reuses the old cells.
        Where the server does not tell (no ``/v1/models``, or the name not listed), the key says ``unverified``."""
        served = self.served_model()
        what = "unverified" if served is None else hashlib.sha256(json.dumps(served, sort_keys=True).encode()).hexdigest()[:16]
        return {"reasoner": self.name, "model_sha256": f"remote:{self.base_url}/{self.model}:{what}", "prompt_sha256": self.template.sha256 + ("-chat" if self.chat else "-raw"),
                "reasoner_version": f"openai-http max_tokens={self.max_tokens}"}
