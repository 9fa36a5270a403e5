#!/usr/bin/env python3
"""Build (once) and install the llama-cpp-python that finkg's local reader runs on.

llama-cpp-python is a source build. Built the default way, llama.cpp detects the build
machine's CPU (GGML_NATIVE) and, on Intel Xeons with AMX (Sapphire Rapids and later),
compiles its AMX matrix kernels, which crash the process (llama.cpp issue 20824). This
script builds a named, fixed feature set instead, never AMX: `avx512` (AVX-512 with VNNI,
VBMI and BF16) where the CPU has all of it, else `x86.64.v3` (AVX2, FMA, F16C, BMI2), else
`x86.64.v2` (SSE4.2). The reader checks at start-up that the CPU has every feature the
loaded library was built with, and refuses AMX (exit 2 with the way out).
On other architectures (arm64) there is no AMX, and llama.cpp's native detection is kept.

The wheel is kept in a folder named for its build (`~/.cache/finkg/wheels/`, or
$FINKG_WHEELS), with the build in its version's local label (`0.3.36+x86.64.v3`), and
installed by path: pip's own wheel cache is never used, so a wheel built the old way is
never picked up. Before a wheel is kept, its CPU library is disassembled and refused if it
holds any AMX instruction.

    scripts/llama_wheel.py --pip .venv/bin/pip     # build if needed, then install
    scripts/llama_wheel.py --print                 # the wheel's path (built if needed)
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

VERSION = "0.3.36"

# x86-64-v3 without AVX-512 and without AMX: the default (benchmarks/reports/reader_cpu.md)
X86_64_V3 = {
    "GGML_NATIVE": "OFF",
    "GGML_AVX": "ON",
    "GGML_AVX2": "ON",
    "GGML_FMA": "ON",
    "GGML_F16C": "ON",
    "GGML_BMI2": "ON",
    "GGML_AVX_VNNI": "OFF",
    "GGML_AVX512": "OFF",
    "GGML_AVX512_VBMI": "OFF",
    "GGML_AVX512_VNNI": "OFF",
    "GGML_AVX512_BF16": "OFF",
    "GGML_AMX_TILE": "OFF",
    "GGML_AMX_INT8": "OFF",
    "GGML_AMX_BF16": "OFF",
}
VARIANTS = {
    # SSE4.2 only: CPUs without AVX2 (before 2013-2015)
    "x86.64.v2": X86_64_V3
    | dict.fromkeys(("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2"), "OFF"),
    "x86.64.v3": X86_64_V3,
    # AVX-512 with VNNI, VBMI and BF16, still no AMX: only for CPUs that have AVX-512
    "avx512": X86_64_V3
    | dict.fromkeys(
        ("GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI", "GGML_AVX512_BF16"), "ON"
    ),
    # llama.cpp's own detection (the old build, AMX included where the CPU has it): for
    # measurements only, never kept on a CPU with AMX
    "native": {"GGML_NATIVE": "ON"},
}
COMMON = {"LLAVA_BUILD": "OFF"}  # finkg reads no images: the multimodal library is not built

# instructions that only AMX code holds (ldtilecfg, tileloadd, tdpbssd, tdpbf16ps, ...)
AMX_INSTRUCTION = re.compile(
    r"\s(ldtilecfg|sttilecfg|tileloadd\w*|tilestored|tilezero|tilerelease|tdp\w+)\s"
)


# the CPU flags (/proc/cpuinfo) each variant's code needs
NEEDS = {
    "x86.64.v2": {"sse4_2", "ssse3"},
    "x86.64.v3": {"avx", "avx2", "fma", "f16c", "bmi2"},
    "avx512": {
        "avx",
        "avx2",
        "fma",
        "f16c",
        "bmi2",
        "avx512f",
        "avx512bw",
        "avx512vl",
        "avx512dq",
        "avx512cd",
        "avx512vbmi",
        "avx512_vnni",
        "avx512_bf16",
    },
}


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def auto_variant(flags: set[str]) -> str:
    """The fastest variant whose instructions this CPU has (AMX is in none of them):
    AVX-512 with VNNI and BF16 prompts ran 1.4 times as fast as AVX2 on an AMD EPYC
    (benchmarks/reports/reader_cpu.md)."""
    for name in ("avx512", "x86.64.v3", "x86.64.v2"):
        if NEEDS[name] <= flags:
            return name
    return "x86.64.v2"


def build_tag(variant: str) -> tuple[str, dict[str, str]]:
    machine = platform.machine().lower()
    if machine not in ("x86_64", "amd64"):  # no AMX and none of these flags off x86
        return f"{re.sub(r'[^a-z0-9]', '', machine)}.native", dict(COMMON)
    if variant == "auto":
        variant = auto_variant(cpu_flags())
    if variant not in VARIANTS:
        raise SystemExit(f"unknown build variant {variant!r}: use one of {', '.join(VARIANTS)}")
    return variant, VARIANTS[variant] | COMMON


def wheel_dir(tag: str) -> Path:
    root = Path(os.environ.get("FINKG_WHEELS") or Path.home() / ".cache" / "finkg" / "wheels")
    return root / f"llama-cpp-python-{VERSION}-{tag}"


def say(text: str) -> None:
    print(f"llama-cpp-python: {text}", file=sys.stderr, flush=True)


# pip warns once per find-links entry that does not exist on this machine (extra package
# indexes configured in pip.conf): a hundred lines that say nothing about this set-up
NOT_THERE = "is ignored: it is neither a file nor a directory"


def without_noise(text: str) -> str:
    """`text` without pip's NOT_THERE warnings."""
    return "".join(line for line in text.splitlines(keepends=True) if NOT_THERE not in line)


def pip_quietly(args: list[str]) -> None:
    """Run pip with `args` (its path first); what it prints, less NOT_THERE, goes to stderr;
    a failure exits with pip's exit code."""
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    sys.stderr.write(without_noise(proc.stdout))
    if proc.returncode != 0:
        raise SystemExit(proc.returncode)


def amx_instructions(library: Path) -> list[str]:
    """The AMX instructions in a shared library's disassembly (objdump)."""
    if shutil.which("objdump") is None:
        raise SystemExit("objdump is missing (Debian: apt-get install binutils)")
    listing = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(library)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted({m.group(1) for m in AMX_INSTRUCTION.finditer(listing)})


def check_no_amx(wheel: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(wheel) as z:
        libs = [n for n in z.namelist() if re.search(r"lib/libggml-cpu[^/]*\.so", n)]
        if not libs:
            raise SystemExit(f"{wheel.name} holds no ggml CPU library to check")
        for name in libs:
            found = amx_instructions(Path(z.extract(name, tmp)))
            if found:
                raise SystemExit(f"{wheel.name}: {name} holds AMX instructions {found}")


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def relabel(wheel: Path, tag: str, out_dir: Path) -> Path:
    """Copy `wheel` with `+tag` as its version's local label (PEP 440: `==0.3.36` still
    matches it; pip's cached plain 0.3.36 is another version)."""
    old_info = f"llama_cpp_python-{VERSION}.dist-info/"
    new_version = f"{VERSION}+{tag}"
    new_info = f"llama_cpp_python-{new_version}.dist-info/"
    target = out_dir / wheel.name.replace(f"-{VERSION}-", f"-{new_version}-")
    records = []
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            name = item.filename
            if name == old_info + "RECORD":
                continue
            data = src.read(item)
            if name.startswith(old_info):
                name = new_info + name[len(old_info) :]
                if name.endswith("/METADATA"):
                    data = re.sub(
                        rb"^Version: .*$",
                        f"Version: {new_version}".encode(),
                        data,
                        count=1,
                        flags=re.M,
                    )
            info = zipfile.ZipInfo(name, item.date_time)
            info.external_attr = item.external_attr
            info.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(info, data)
            records.append(_record_line(name, data))
        records.append(f"{new_info}RECORD,,")
        dst.writestr(new_info + "RECORD", "\n".join(records) + "\n")
    return target


def build(tag: str, cmake: dict[str, str], target_dir: Path, pip: str) -> Path:
    args = " ".join(f"-D{k}={v}" for k, v in cmake.items())
    say(f"building {VERSION} ({tag}) from source, once: about 10 minutes on 2 cores")
    say(f"CMAKE_ARGS={args}")
    env = {**os.environ, "CMAKE_ARGS": args}
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "build.log"
        with log.open("w") as out:
            proc = subprocess.Popen(
                [
                    pip,
                    "wheel",
                    "--quiet",
                    "--no-deps",
                    "--no-cache-dir",
                    "--disable-pip-version-check",
                    "--no-binary",
                    "llama-cpp-python",
                    "-w",
                    tmp,
                    f"llama-cpp-python=={VERSION}",
                ],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
            shown = 0
            while proc.poll() is None:
                time.sleep(1)
                minutes = int((time.monotonic() - started) // 60)
                if minutes > shown:
                    shown = minutes
                    say(f"still building ({minutes} min)")
        if proc.returncode != 0:
            sys.stderr.write(without_noise(log.read_text())[-4000:])
            raise SystemExit(f"the llama-cpp-python build failed (exit {proc.returncode})")
        (built,) = Path(tmp).glob("llama_cpp_python-*.whl")
        check_no_amx(built)
        target_dir.mkdir(parents=True, exist_ok=True)
        staged = relabel(built, tag, Path(tmp))
        final = target_dir / staged.name
        shutil.move(staged, final)
    say(f"built in {(time.monotonic() - started) / 60:.1f} min: {final}")
    return final


def cached_wheel(target_dir: Path) -> Path | None:
    wheels = sorted(target_dir.glob(f"llama_cpp_python-{VERSION}+*.whl"))
    return wheels[-1] if wheels else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pip", help="install the wheel with this pip (a venv's)")
    parser.add_argument("--print", action="store_true", help="print the wheel's path")
    parser.add_argument(
        "--variant",
        default="auto",
        help="the CPU features to build for: auto (default: avx512 where this CPU has "
        "AVX-512 with VNNI and BF16, else x86.64.v3 where it has AVX2, else x86.64.v2), "
        "x86.64.v3, x86.64.v2, avx512, native (measurements only)",
    )
    opts = parser.parse_args()
    tag, cmake = build_tag(opts.variant)
    target_dir = wheel_dir(tag)
    wheel = cached_wheel(target_dir)
    pip = opts.pip or shutil.which("pip") or "pip"
    if wheel is None:
        wheel = build(tag, cmake, target_dir, pip)
    else:
        check_no_amx(wheel)
        say(f"using the cached build {wheel}")
    if opts.pip:
        pip_quietly(
            [
                opts.pip,
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--force-reinstall",
                "--no-deps",
                str(wheel),
            ]
        )
        # its dependencies (numpy, jinja2, diskcache, typing-extensions) from the index
        pip_quietly([opts.pip, "install", "--quiet", "--disable-pip-version-check", str(wheel)])
    if opts.print:
        print(wheel)


if __name__ == "__main__":
    main()
