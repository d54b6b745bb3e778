"""Hosted bots' runner: each active hosted bot version, once across runners, sandboxed (docs/hosting.md)."""
