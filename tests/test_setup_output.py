"""The set-up's output: pip's "Location ... is ignored" warnings (one per missing find-links
entry of a package index configured on the machine; about a hundred lines on some) are
dropped, everything else and every exit code kept, in the Makefile and in
scripts/llama_wheel.py (issue 26: they filled the first screen of `make demo`)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WARNING = "WARNING: Location '/opt/wheels/{}' is ignored: it is neither a file nor a directory."
NOISY_PIP = (
    "import sys\n"
    f"for i in range(100): print({WARNING!r}.format(i), file=sys.stderr)\n"
    "print('ERROR: No matching distribution found for torch==0', file=sys.stderr)\n"
    "print('installed what it could')\n"
    "sys.exit(int(sys.argv[1]))\n"
)


@pytest.fixture
def noisy_pip(tmp_path: Path) -> Path:
    script = tmp_path / "pip.py"
    script.write_text(NOISY_PIP)
    return script


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("code", [0, 4])
def test_the_makefile_drops_pips_missing_location_warnings_and_keeps_its_exit_code(
    tmp_path: Path, noisy_pip: Path, code: int
) -> None:
    probe = tmp_path / "probe.mk"
    probe.write_text(f"probe:\n\t@$(call quietly,{sys.executable} {noisy_pip} {code})\n")
    proc = subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "-f", str(probe), "probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    shown = proc.stdout + proc.stderr
    assert "is ignored" not in shown
    assert "ERROR: No matching distribution" in proc.stderr
    assert "installed what it could" in proc.stdout
    assert (proc.returncode == 0) == (code == 0), shown
    if code:
        assert f"Error {code}" in proc.stderr


def _llama_wheel():
    spec = importlib.util.spec_from_file_location("llama_wheel", ROOT / "scripts/llama_wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("code", [0, 3])
def test_llama_wheel_runs_pip_without_the_warnings_and_keeps_its_exit_code(
    noisy_pip: Path, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    llama_wheel = _llama_wheel()
    if code:
        with pytest.raises(SystemExit) as e:
            llama_wheel.pip_quietly([sys.executable, str(noisy_pip), str(code)])
        assert e.value.code == code
    else:
        llama_wheel.pip_quietly([sys.executable, str(noisy_pip), str(code)])
    shown = capsys.readouterr()
    assert "is ignored" not in shown.out + shown.err
    assert "ERROR: No matching distribution" in shown.err
    assert "installed what it could" in shown.err
