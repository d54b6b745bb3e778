"""The read-only web view: the tournaments, bots and matches of the platform, and local replay files.

`uno_arena.web.app.create_app` builds the Flask app and `WebServer` serves it on waitress (`uno-arena
web`). Its blueprints: `pages` (tournaments, bots, the standings' JSON API; reads the leaderboard),
`viewer` (a match: replay or live), `live` (a running match's events as server-sent events) and
`replay_index` (a folder of replay files, without Redis); `names` is the protocol's names and labels
the viewer's script reads; `charts` draws a bot's rating as SVG. `templates/` and `static/` are its
pages and files.

Nothing is imported here: `limits` is read before the CLI knows whether Flask is installed, and the
replay files alone are served from the base install plus Flask and waitress (no redis, RQ or
OpenSkill: `pages` and the leaderboard are imported only when a Redis client is given).
"""
