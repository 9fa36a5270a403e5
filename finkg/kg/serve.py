"""`finkg serve`: the Oxigraph server (from the PyPI package `oxigraph`) over a store."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from finkg.errors import InputError, StoreError


def oxigraph_binary() -> str:
    """The `oxigraph` executable installed beside this Python, else on PATH."""
    beside = Path(sys.executable).parent / "oxigraph"
    if beside.exists():
        return str(beside)
    found = shutil.which("oxigraph")
    if found is None:
        raise StoreError("the oxigraph server is not installed; pip install 'oxigraph>=0.5,<0.6'")
    return found


def server_command(location: Path, *, bind: str, read_write: bool = False) -> list[str]:
    mode = "serve" if read_write else "serve-read-only"
    return [oxigraph_binary(), mode, "--location", str(location), "--bind", bind]


def serve_store(location: Path, *, bind: str = "127.0.0.1:7878", read_write: bool = False) -> int:
    """Run the server in the foreground until it stops; returns its exit code."""
    if not location.is_dir():
        raise InputError(
            "no store directory here",
            field="--store",
            value=str(location),
            hint="create one with finkg init (or finkg demo)",
        )
    try:
        return subprocess.call(server_command(location, bind=bind, read_write=read_write))
    except KeyboardInterrupt:
        return 0
