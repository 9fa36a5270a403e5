"""`python -m finkg.cli`."""

from finkg.cli.main import main

main()
