"""The web view's browser fixtures, for every module here: one chromium of each width per test process."""

from tests.web.browser import _narrow_chromium, _wide_chromium, browser, narrow_browser

__all__ = ["_narrow_chromium", "_wide_chromium", "browser", "narrow_browser"]
