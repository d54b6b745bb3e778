"""`python -m uno_arena.cli`: the same as the `uno-arena` command (the demo starts its children so)."""

from uno_arena.cli.main import main

main()
