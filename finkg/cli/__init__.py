"""finkg's command line (`finkg`, `python -m finkg`): `main.py` holds the group and its
entry point, one module per command group beside it, `support.py` what they share."""

from finkg.cli.main import cli, main

__all__ = ["cli", "main"]
