"""Folders of models finkg trains from the packaged MiniLM: weights under `model/`, a
`manifest.json` beside them.

Both trained models (the FinSeer retriever of the movement job, the cross-encoder reranker
of the QA job) are saved the same way, so they share these few rules:

- `offline()`: transformers and sentence-transformers never reach for a hub; every model
  loads from a local folder.
- `weights_digest(folder)`: SHA-256 over the `*.safetensors` files under `folder/model`, in
  path order; it names the model (`model_id`) and lets a loader notice altered weights.
- `write_manifest` / `read_manifest`: the manifest is JSON with a `kind` and a `format`; a
  folder without one, or of another kind or format, is refused with an error that names the
  folder and the command that trains a model there.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> write_manifest(folder, {"kind": "demo", "format": 1, "model_id": "m"})
>>> read_manifest(folder, kind="demo", format=1, train="finkg train-demo")["model_id"]
'm'
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from finkg.errors import InputError

MANIFEST = "manifest.json"
WEIGHTS = "model"  # the sub-folder holding the weights


def offline() -> None:
    """Switch the Hugging Face hub off for this process: the weights are local."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


def weights_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted((Path(folder) / WEIGHTS).rglob("*.safetensors")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str), encoding="utf-8")


def read_manifest(folder: Path, *, kind: str, format: int, train: str) -> dict[str, Any]:
    """The manifest of a trained-model folder; an InputError naming `train` when absent."""
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise InputError(
            "no trained model here",
            field="--model-dir",
            value=str(folder),
            hint=f"train one with {train} (or pass --model-dir)",
        )
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise InputError(
            f"unreadable manifest: {e}", source=path, hint=f"retrain with {train}"
        ) from None
    if not isinstance(manifest, dict) or (manifest.get("kind"), manifest.get("format")) != (
        kind,
        format,
    ):
        got = (manifest.get("kind"), manifest.get("format")) if isinstance(manifest, dict) else None
        raise InputError(
            f"not a {kind} folder of format {format}",
            field="--model-dir",
            value=f"{folder} holds {got}",
            hint=f"retrain with {train}",
        )
    return manifest
