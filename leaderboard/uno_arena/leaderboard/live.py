"""A running match's public events as they happen, for the live view (server-sent events)."""

from __future__ import annotations

from flask import Blueprint

blueprint = Blueprint("live", __name__)
