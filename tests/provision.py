"""What some tests need beyond the Python packages, provisioned by the test run itself or named in a skip.

The JavaScript starter's packages come from the npm registry: the first test that needs them runs
`npm ci` once (under a file lock, so parallel workers wait for one install). Debian's chromium and its
driver, and nginx, cannot be installed by a test run: without them the browser and proxy tests skip,
each with one line saying what is missing and the command that installs it. Under CI (`CI` set, as
`.ci/run` has it) a missing piece is a failure instead, so CI cannot pass without the JavaScript kit,
the browser and the proxies having run.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
JAVASCRIPT_STARTER = ROOT / "sdk" / "javascript"
NPM_CI = ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
BROWSER_PACKAGES = "apt-get install chromium chromium-driver"
NGINX_PATHS = ("/usr/sbin/nginx",)  # Debian's, off a non-root user's PATH


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def missing(what: str) -> None:
    """Skip the test saying what is missing and how to get it; under CI, fail instead."""
    if under_ci():
        pytest.fail(f"{what}: under CI nothing may skip", pytrace=False)
    pytest.skip(what)


def javascript_starter() -> Path:
    """The starter kit's folder with its packages installed (`npm ci` once, from its lock file)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("Node.js and npm are not installed (apt-get install nodejs npm)")
    installed = JAVASCRIPT_STARTER / "node_modules" / "@grpc" / "grpc-js"
    if installed.is_dir():
        return JAVASCRIPT_STARTER
    with open(JAVASCRIPT_STARTER / ".npm-ci.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be installing: wait for it
        if not installed.is_dir():
            try:
                done = subprocess.run(NPM_CI, cwd=JAVASCRIPT_STARTER, capture_output=True, text=True,
                                      timeout=300)  # fmt: skip
            except subprocess.TimeoutExpired:
                missing("the JavaScript starter's packages: `npm ci` in sdk/javascript took over 300 s")
            if done.returncode != 0 or not installed.is_dir():
                said = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
                missing(f"the JavaScript starter's packages: `npm ci` in sdk/javascript failed: {said[0]}")
    return JAVASCRIPT_STARTER


def nginx() -> str:
    """Debian's nginx binary (the proxy tests run it as a process of their own)."""
    found = shutil.which("nginx") or next((p for p in NGINX_PATHS if Path(p).exists()), None)
    if found is None:
        missing("nginx is not installed (apt-get install nginx)")
    assert found is not None
    return found
