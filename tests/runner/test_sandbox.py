"""The hostile-bot suite as tests: each attack of bench/sandbox.py, run in a runner's sandbox, is contained
(the runner and server live on, the attack says CONTAINED or is recorded as its crash or its faults)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import REDIS_URL
from tests.runner.harness import require_sandbox

ROOT = Path(__file__).resolve().parents[2]


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("uno_arena_bench_sandbox", ROOT / "bench" / "sandbox.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


BENCH = load_bench()


@pytest.fixture(scope="module")
def platform() -> Iterator[Any]:
    require_sandbox()
    with BENCH.platform(REDIS_URL, matches=1) as running:
        yield running


@pytest.mark.parametrize("attack", BENCH.ATTACKS, ids=[a.name for a in BENCH.ATTACKS])
def test_each_attack_is_contained(platform: Any, attack: Any) -> None:
    contained, detail = BENCH.run_attack(platform, attack)
    assert contained, detail
    assert platform.play("honest", "partner", target=30).returncode == 0  # the neighbours play on
