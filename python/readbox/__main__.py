"""`python -m readbox ARGS…` runs the installed binary with ARGS (`python -m readbox mcp`)."""

from . import main

main()
