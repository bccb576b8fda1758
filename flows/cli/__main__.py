"""`python -m gameforge.flows.cli`: the `gameforge` command."""

from gameforge.flows.cli import main

main()
