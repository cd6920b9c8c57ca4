"""``python -m insightloom``."""

from insightloom.cli import main

main()
