"""Ratings and standings of bots, from recorded match results.

Pure computations (`ratings`, `standings`, `history`), the stored tables kept as results arrive
(`board`), and the RQ job that updates them after each recorded match (`jobs`). Its pages are in
`uno_arena.web`, its terminal commands in `uno_arena.cli`.
"""
