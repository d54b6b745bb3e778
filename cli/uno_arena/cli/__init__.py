"""The `uno-arena` command line: the one entry point for organisers and bot authors."""
