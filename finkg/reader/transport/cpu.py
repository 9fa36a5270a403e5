"""Which llama.cpp builds this CPU may run: never one with AMX kernels, never one built
for instructions the CPU lacks. Both are checked when a local reader starts, from the
loaded library's system info, so a bad build ends in an error that says how to rebuild
(exit 2) instead of a crash (`scripts/llama_wheel.py` builds the right one)."""

from __future__ import annotations

import re
from pathlib import Path

from finkg.reader.llm import ReaderBuildError

# a CPU feature compiled into llama.cpp, as its system info lists it: "AMX_INT8 = 1 | "
_AMX_FEATURE = re.compile(r"\b(AMX\w*) = 1\b")


# llama.cpp's name of a compiled CPU feature -> the flag /proc/cpuinfo shows for it
_CPU_FLAG = {
    "SSSE3": "ssse3",
    "AVX": "avx",
    "AVX2": "avx2",
    "AVX_VNNI": "avx_vnni",
    "F16C": "f16c",
    "FMA": "fma",
    "BMI2": "bmi2",
    "AVX512": "avx512f",
    "AVX512_VBMI": "avx512vbmi",
    "AVX512_VNNI": "avx512_vnni",
    "AVX512_BF16": "avx512_bf16",
}


def cpu_flags() -> set[str] | None:
    """This CPU's feature flags (Linux), or None where they cannot be read."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return None


def refuse_missing_features(system_info: str, flags: set[str] | None) -> None:
    """Refuse a llama.cpp built for instructions this CPU lacks (a cached AVX-512 wheel on
    an AVX2 machine, say), which would end the process with an illegal instruction.

    >>> refuse_missing_features("CPU : AVX2 = 1 | FMA = 1 | ", {"avx2", "fma"})
    """
    if flags is None:
        return
    compiled = re.findall(r"\b([A-Z0-9_]+) = 1\b", system_info)
    missing = [f for f in compiled if f in _CPU_FLAG and _CPU_FLAG[f] not in flags]
    if missing:
        raise ReaderBuildError(
            f"the installed llama-cpp-python was built for CPU features this CPU lacks "
            f"({', '.join(missing)}); rebuild it for this machine: `rm -f "
            ".venv/.finkg-installed && make test` (or `scripts/llama_wheel.py --pip "
            ".venv/bin/pip`), which picks the build from this CPU's features"
        )


def refuse_amx(system_info: str) -> None:
    """Refuse a llama.cpp built with its AMX kernels (a native build on an Intel Xeon with
    AMX): they crash the process with a segmentation fault (llama.cpp issue 20824), so
    finkg stops with an error that says how to rebuild instead.

    >>> refuse_amx("CPU : SSE3 = 1 | AVX2 = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 | ")
    """
    found = _AMX_FEATURE.findall(system_info)
    if found:
        raise ReaderBuildError(
            f"the installed llama-cpp-python was built with AMX kernels ({', '.join(found)}),"
            " which crash on these CPUs (llama.cpp issue 20824); rebuild it without them: "
            "`rm -f .venv/.finkg-installed && make test` (or run "
            "`scripts/llama_wheel.py --pip .venv/bin/pip`), which builds a named CPU feature "
            "set with GGML_NATIVE=OFF and AMX off"
        )
