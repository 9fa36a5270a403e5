"""A PEFT LoRA adapter as a llama.cpp GGUF adapter, by llama.cpp's own converter.

The converter (`convert_lora_to_gguf.py` with the `conversion` package and `gguf-py` it
imports) ships in llama-cpp-python's source distribution, the one the set-up builds the
reader from. It is fetched once from the package index by `pip download`, checked against
its pinned SHA-256, and only those files are kept, once per machine, beside the reader's
cached wheel (`~/.cache/finkg/llama-convert-VERSION/`): pinned by hash, it is the same
for every finkg home. The converter reads the base model's
`config.json` only (the architecture, the layer names), which `train` writes beside the
adapter.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from finkg.reader.llm import ReaderError

VERSION = "0.3.36"  # the llama-cpp-python the set-up builds (pyproject's `llm` extra)
SDIST = f"llama_cpp_python-{VERSION}.tar.gz"
SDIST_SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
INNER = f"llama_cpp_python-{VERSION}/vendor/llama.cpp/"
KEPT = ("convert_lora_to_gguf.py", "convert_hf_to_gguf.py", "conversion/", "gguf-py/")


def converter_dir() -> Path:
    """The folder holding llama.cpp's converter, fetched on first use (module docstring)."""
    folder = Path.home() / ".cache" / "finkg" / f"llama-convert-{VERSION}"
    if (folder / "convert_lora_to_gguf.py").is_file():
        return folder
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [
                sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                "--no-binary", ":all:", "--disable-pip-version-check",
                "--dest", tmp, f"llama-cpp-python=={VERSION}",
            ],
            capture_output=True,
            text=True,
        )  # fmt: skip
        sdist = Path(tmp) / SDIST
        if done.returncode != 0 or not sdist.is_file():
            raise ReaderError(
                f"could not fetch llama-cpp-python {VERSION}'s source for its LoRA converter: "
                + (done.stderr.strip().splitlines() or ["no file"])[-1]
            )
        digest = hashlib.sha256(sdist.read_bytes()).hexdigest()
        if digest != SDIST_SHA256:
            raise ReaderError(f"{SDIST} has SHA-256 {digest}, not the pinned {SDIST_SHA256}")
        staging = Path(tmp) / "converter"
        with tarfile.open(sdist) as archive:
            for member in archive.getmembers():
                inner = member.name.removeprefix(INNER)
                if member.name.startswith(INNER) and inner.startswith(KEPT) and member.isfile():
                    member.name = inner
                    archive.extract(member, staging, filter="data")
        if folder.exists():
            shutil.rmtree(folder)
        folder.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(staging, folder)
    return folder


def to_gguf(adapter_dir: Path, base_config_dir: Path, out: Path) -> Path:
    """Convert the PEFT adapter in `adapter_dir` (for the model `base_config_dir`'s
    config.json describes) to a GGUF adapter at `out` (f32: the weights as trained)."""
    folder = converter_dir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(folder / "gguf-py"), str(folder)]),
        "HF_HUB_OFFLINE": "1",  # the base's config is the folder given: never ask a hub
    }
    done = subprocess.run(
        [
            sys.executable, str(folder / "convert_lora_to_gguf.py"),
            "--base", str(base_config_dir), "--outfile", str(out), "--outtype", "f32",
            str(adapter_dir),
        ],
        capture_output=True,
        text=True,
        env=env,
    )  # fmt: skip
    if done.returncode != 0 or not out.is_file():
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        raise ReaderError(f"llama.cpp's converter could not convert {adapter_dir}: {tail}")
    return out
