"""`python -m finkg`: the command line, as the `finkg` script."""

from finkg.cli.main import main

main()
