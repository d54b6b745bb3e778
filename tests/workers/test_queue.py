"""Match job ids: valid for RQ, and one to one, so two matches never share a job."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from rq.job import JOB_ID_PATTERN

from uno_arena.workers.queue import job_id

ids = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True)
prefixes = st.text(min_size=1, max_size=12)


@given(prefixes, ids, st.integers(0, 10_000), prefixes, ids, st.integers(0, 10_000))
def test_job_ids_are_valid_and_one_to_one(p1: str, t1: str, i1: int, p2: str, t2: str, i2: int) -> None:
    first, second = job_id(p1, t1, i1), job_id(p2, t2, i2)
    assert JOB_ID_PATTERN.fullmatch(first)
    assert (first == second) == ((p1, t1, i1) == (p2, t2, i2))


def test_ids_that_used_to_meet_are_apart() -> None:
    assert job_id("p", "a.b", 0) != job_id("p", "a_b", 0)
    assert job_id("p", "x-1", 0) != job_id("p-x", "1", 0)
    assert job_id("uno-arena", "spring_2026.a", 3) == "uno-arena__spring_u2026_da__3"
