"""Ratings and standings of bots, from recorded match results."""
