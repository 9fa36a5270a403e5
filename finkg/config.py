"""Settings: the one module that reads the environment.

Every knob has a default, an environment variable, and (for the CLI) an option that
overrides it. `Settings.from_env()` is called once at the edge (the CLI, a test fixture);
library code receives a `Settings` and never looks at `os.environ`.

| variable | meaning | default |
|---|---|---|
| `FINKG_HOME` | where finkg keeps its default store, demo and caches | `~/.finkg` |
| `FINKG_STORE` | default store: a directory or an `http(s)://` URL | `$FINKG_HOME/store` |
| `FINKG_BASE_IRI` | the base of instance IRIs | `https://w3id.org/finkg/id/` |
| `FINKG_UPDATE_URL` | SPARQL update endpoint of a remote store, when not derivable | derived |
| `FINKG_GSP_URL` | Graph Store Protocol endpoint of a remote store, when not derivable | derived |
| `FINKG_THREADS` | CPU threads for model work and for `validate`'s checks | free cores, ≥ 1 |
| `FINKG_READER` | the reader: a packaged model name or a .gguf path | `qwen2.5-coder-1.5b` |
| `FINKG_ADAPTER` | a LoRA adapter: a trained one's name or a .gguf path | none |
| `FINKG_LLM_URL` | an OpenAI-compatible endpoint to read with instead | none |
| `FINKG_LLM_MODEL` | the model name to ask that endpoint for | `default` |
| `FINKG_LLM_KEY` | its API key | none |
| `FINKG_LLM_TEMPLATE` | its chat template, for exact scores: a packaged name or .gguf | none |
| `FINKG_CONCURRENCY` | requests an endpoint reader keeps in flight (prompts read at once) | `1` |
| `FINKG_DEVICE` | where embedders run: `auto` (CUDA when torch sees one), `cpu`, `cuda` | `auto` |
| `FINKG_EMBEDDER` | `minilm` (packaged all-MiniLM-L6-v2) or `hash` (quick runs, tests) | `minilm` |
| `FINKG_QUERY_TIMEOUT` | `finkg serve`'s query time limit in seconds (0: none) | `60` |
| `FINKG_TOKEN` | the token `finkg serve` asks for; finkg sends it to a remote store | none |
| `GOMP_SPINCOUNT` | spins of an idle OpenMP worker (llama.cpp, torch) before it sleeps | `3000` |

finkg sets `GOMP_SPINCOUNT` when it is unset (`share_cores`, on `import finkg`): libgomp's own
default (300,000 spins) lets a waiting worker hold its core for milliseconds, and two such
pools on the same cores (a reader beside a torch job or a second reader) starve each other.
It must be set before libgomp loads, so a process that imports torch or llama_cpp before
finkg keeps libgomp's default; `benchmarks/reports/sharing.md` has the measurements.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, TypedDict, Unpack

from finkg.errors import InputError

DEFAULT_BASE_IRI = "https://w3id.org/finkg/id/"
DEVICES = ("auto", "cpu", "cuda")
# libgomp's spins before an idle worker sleeps: measured to keep a reader at ~0.4x its idle
# speed beside a torch job, a busy loop or a second reader, and within noise of it alone
SPIN_COUNT = 3000


def share_cores(env: MutableMapping[str, str] = os.environ) -> None:
    """Let OpenMP workers sleep soon when they wait (`GOMP_SPINCOUNT`, unless set). Both
    llama.cpp and torch run on libgomp, one copy per process (the first loaded), which reads
    this when it loads; `import finkg` calls it before anything loads either.

    >>> env = {}; share_cores(env); env
    {'GOMP_SPINCOUNT': '3000'}
    >>> env = {"GOMP_SPINCOUNT": "0"}; share_cores(env); env
    {'GOMP_SPINCOUNT': '0'}
    """
    env.setdefault("GOMP_SPINCOUNT", str(SPIN_COUNT))


def _free_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class SettingsFields(TypedDict, total=False):
    """Any of `Settings`' fields, by name: what `Settings.with_` changes. It names every
    field and no other (a field added to `Settings` must be added here):

    >>> from dataclasses import fields
    >>> set(SettingsFields.__optional_keys__) == {f.name for f in fields(Settings)}
    True
    """

    home: Path
    store: str | None
    base_iri: str
    update_url: str | None
    gsp_url: str | None
    threads: int
    reader: str
    adapter: str | None
    llm_url: str | None
    llm_model: str
    llm_key: str | None
    llm_template: str | None
    concurrency: int
    device: str
    embedder: str
    query_timeout_s: float
    token: str | None


# The fields `from_env` reads as text, and as whole numbers.
_TextField = Literal[
    "reader",
    "adapter",
    "llm_url",
    "llm_model",
    "llm_key",
    "embedder",
    "llm_template",
    "device",
    "token",
]
_CountField = Literal["threads", "concurrency"]


@dataclass(frozen=True, kw_only=True)
class Settings:
    """finkg's configuration; build it with `from_env()` or directly in tests."""

    home: Path = field(default_factory=lambda: Path.home() / ".finkg")
    store: str | None = None
    base_iri: str = DEFAULT_BASE_IRI
    update_url: str | None = None
    gsp_url: str | None = None
    threads: int = field(default_factory=_free_cores)
    reader: str = "qwen2.5-coder-1.5b"
    adapter: str | None = None  # a LoRA adapter for the local reader (`reader.adapt`)
    llm_url: str | None = None
    llm_model: str = "default"
    llm_key: str | None = field(default=None, repr=False)
    llm_template: str | None = None
    concurrency: int = 1
    device: str = "auto"
    embedder: str = "minilm"
    query_timeout_s: float = 60.0
    token: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if not self.base_iri.startswith(("http://", "https://")) or not self.base_iri.endswith(
            ("/", "#")
        ):
            raise InputError(
                "base IRI must be an http(s) IRI ending in '/' or '#'",
                field="FINKG_BASE_IRI",
                value=self.base_iri,
                hint="for example https://example.org/finkg/id/",
            )
        if self.embedder not in ("minilm", "hash"):
            raise InputError(
                "unknown embedder",
                field="FINKG_EMBEDDER",
                value=self.embedder,
                hint="minilm (the packaged model) or hash (quick runs and tests)",
            )
        if not 0 <= self.query_timeout_s < float("inf"):
            raise InputError(
                "the query time limit must be 0 (none) or more seconds",
                field="FINKG_QUERY_TIMEOUT",
                value=self.query_timeout_s,
            )
        if self.concurrency < 1:
            raise InputError(
                "concurrency must be at least 1",
                field="FINKG_CONCURRENCY",
                value=self.concurrency,
                hint="1 reads one prompt at a time; an endpoint serving many takes 16-64",
            )
        if self.device not in DEVICES:
            raise InputError(
                "unknown device",
                field="FINKG_DEVICE",
                value=self.device,
                hint="auto (CUDA when torch sees one), cpu or cuda",
            )
        if self.threads < 1:
            raise InputError(
                "threads must be at least 1", field="FINKG_THREADS", value=self.threads
            )

    @property
    def store_location(self) -> str:
        """The default store: `FINKG_STORE`, else `$FINKG_HOME/store`."""
        return self.store or str(self.home / "store")

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    def with_(self, **changes: Unpack[SettingsFields]) -> Settings:
        return replace(self, **changes)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        kwargs: SettingsFields = {}
        if env.get("FINKG_HOME"):
            kwargs["home"] = Path(env["FINKG_HOME"]).expanduser()
        if env.get("FINKG_STORE"):
            kwargs["store"] = env["FINKG_STORE"]
        if env.get("FINKG_BASE_IRI"):
            kwargs["base_iri"] = env["FINKG_BASE_IRI"]
        if env.get("FINKG_UPDATE_URL"):
            kwargs["update_url"] = env["FINKG_UPDATE_URL"]
        if env.get("FINKG_GSP_URL"):
            kwargs["gsp_url"] = env["FINKG_GSP_URL"]
        texts: tuple[tuple[str, _TextField], ...] = (
            ("FINKG_READER", "reader"),
            ("FINKG_ADAPTER", "adapter"),
            ("FINKG_LLM_URL", "llm_url"),
            ("FINKG_LLM_MODEL", "llm_model"),
            ("FINKG_LLM_KEY", "llm_key"),
            ("FINKG_EMBEDDER", "embedder"),
            ("FINKG_LLM_TEMPLATE", "llm_template"),
            ("FINKG_DEVICE", "device"),
            ("FINKG_TOKEN", "token"),
        )
        for name, key in texts:
            if env.get(name):
                kwargs[key] = env[name]
        if env.get("FINKG_QUERY_TIMEOUT"):
            try:
                kwargs["query_timeout_s"] = float(env["FINKG_QUERY_TIMEOUT"])
            except ValueError:
                raise InputError(
                    "not a number of seconds",
                    field="FINKG_QUERY_TIMEOUT",
                    value=env["FINKG_QUERY_TIMEOUT"],
                    hint="for example 60, or 0 for no limit",
                ) from None
        counts: tuple[tuple[str, _CountField], ...] = (
            ("FINKG_THREADS", "threads"),
            ("FINKG_CONCURRENCY", "concurrency"),
        )
        for name, count_key in counts:
            if env.get(name):
                try:
                    kwargs[count_key] = int(env[name])
                except ValueError:
                    raise InputError("not a whole number", field=name, value=env[name]) from None
        return cls(**kwargs)
