"""JSON over HTTP to a reader endpoint: a bound on requests in flight, retries with back-off.

- At most `concurrency` requests are in flight at once, however many threads ask (a
  semaphore held for the attempt itself, not for the waits between attempts).
- An answer of 408, 425, 429 or 5xx, a time-out and a dropped connection are tried again,
  up to `retries` more times, after `backoff_s`, then twice that, ... (at most
  `max_backoff_s`; a `Retry-After` header in seconds is obeyed within that bound). Each failed
  attempt is logged and added to the current read's `Usage` in words; a request that fails
  for good raises `RequestFailed`, which names it (method, URL, attempts, last reason).
- Any other refusal (400, 401, 404, ..., and a 500 that says the request's body was invalid,
  as llama-cpp-python's server answers one) is not retried: it raises `HTTPRefused` with the
  status and the server's words, and an unreachable endpoint raises `ReaderError` at once.
"""

from __future__ import annotations

import http.client
import json
import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from finkg.errors import InputError
from finkg.reader.llm import ReaderError
from finkg.reader.transport import usage

log = logging.getLogger("finkg.reader")

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
TIMEOUT_S = 600.0


class HTTPRefused(ReaderError):
    """The endpoint refused a request for good (a 4xx other than 408/425/429)."""

    def __init__(self, url: str, status: int, detail: str) -> None:
        self.status = status
        self.detail = detail
        super().__init__(f"{url} answered {status}: {detail}")


class RequestFailed(ReaderError):
    """A request that failed on every attempt (named: method, URL, attempts, reason)."""

    def __init__(self, request: str, attempts: int, reason: str) -> None:
        self.request = request
        self.attempts = attempts
        self.reason = reason
        self.usage: usage.Usage | None = None  # what the read it served had spent, when known
        super().__init__(f"{request} failed after {attempts} attempt(s): {reason}")


class _Transient(Exception):
    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Transport:
    """POST and GET of JSON at `base_url` (module docstring)."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = TIMEOUT_S,
        retries: int = 4,
        backoff_s: float = 0.5,
        max_backoff_s: float = 30.0,
        concurrency: int = 1,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise InputError(
                "the reader endpoint must be an http(s) URL", field="llm_url", value=base_url
            )
        for name, value in (("retries", retries), ("backoff_s", backoff_s)):
            if value < 0:
                raise InputError("must be 0 or more", field=name, value=value)
        if concurrency < 1:
            raise InputError(
                "must be at least 1", field="concurrency", value=concurrency, hint="e.g. 16"
            )
        if timeout_s <= 0:
            raise InputError("must be positive", field="timeout_s", value=timeout_s)
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.concurrency = concurrency
        self._slots = threading.BoundedSemaphore(concurrency)
        self._sleep = sleep

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", path, body)

    def get(self, path: str) -> dict[str, Any]:
        return self._request("GET", path, None)

    def _request(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        url = self.base_url + path
        name = f"{method} {url}"
        started = time.perf_counter()
        for attempt in range(1, self.retries + 2):
            t = time.perf_counter()
            try:
                with self._slots:
                    reply = self._once(method, url, body)
            except _Transient as e:
                spent = time.perf_counter() - t
                if attempt > self.retries:
                    note = f"{name} attempt {attempt}: {e.reason} ({spent:.2f} s); gave up"
                    log.warning(note)
                    failure = RequestFailed(name, attempt, e.reason)
                    usage.record_failure(note, str(failure), seconds=time.perf_counter() - started)
                    raise failure from None
                wait = min(self.backoff_s * 2 ** (attempt - 1), self.max_backoff_s)
                if e.retry_after is not None:
                    wait = min(max(wait, e.retry_after), self.max_backoff_s)
                note = (
                    f"{name} attempt {attempt}: {e.reason} ({spent:.2f} s); "
                    f"retried after {wait:.2f} s"
                )
                log.warning(note)
                usage.record_retry(note)
                self._sleep(wait)
                continue
            tokens = reply.get("usage") if isinstance(reply, dict) else None
            tokens = tokens if isinstance(tokens, dict) else {}
            usage.record_request(
                tokens_in=int(tokens.get("prompt_tokens") or 0),
                tokens_out=int(tokens.get("completion_tokens") or 0),
                seconds=time.perf_counter() - started,
            )
            return reply
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, method: str, url: str, body: dict[str, Any] | None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            url,
            data=None if body is None else json.dumps(body).encode(),
            headers=headers,
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = e.read().decode("utf-8", "replace")[:500]
            if e.code in RETRY_STATUS and not _invalid_request(detail):
                raise _Transient(f"HTTP {e.code} {detail[:120]}".strip(), _retry_after(e)) from None
            raise HTTPRefused(url, e.code, detail) from None
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, TimeoutError):
                raise _Transient(f"no answer within {self.timeout_s:g} s") from None
            if isinstance(reason, ConnectionResetError | ConnectionAbortedError):
                raise _Transient(f"connection dropped ({reason})") from None
            raise ReaderError(
                f"cannot reach the reader endpoint {self.base_url}: {reason}"
            ) from None
        except TimeoutError:
            raise _Transient(f"no answer within {self.timeout_s:g} s") from None
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
            raise _Transient(f"connection dropped ({type(e).__name__})") from None
        except http.client.IncompleteRead:
            raise _Transient("the answer was cut short") from None
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            raise ReaderError(f"{url} answered something that is not JSON: {raw[:200]!r}") from None


def _invalid_request(detail: str) -> bool:
    """Whether an error answer says the request itself was invalid: llama-cpp-python's
    server answers a body its schema rejects (pydantic's validation error on `body`) with
    500, where no retry can help; finkg's reader then changes the request (openai_http)."""
    return "validation error" in detail and "('body'" in detail


def _retry_after(e: urllib.error.HTTPError) -> float | None:
    value = e.headers.get("Retry-After") if e.headers else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date: the back-off schedule decides
