"""How early the SDK answers the safe default: the measured round trip to the server, not a constant.

The server's decision clock starts when it queues a request on the bot's stream and stops when it reads
the answer, so both trips over the network (and the server's queueing) come out of the deadline. The
client measures the round trip with the protocol's Ping/Pong (the Pong waits in the server's outbox like
a request would) and keeps it smoothed as TCP does for its retransmission timeout (RFC 6298): SRTT, an
average, and RTTVAR, the mean deviation. The margin is SRTT + 4 x RTTVAR (a round trip it can count on)
plus local scheduling slack, at least a floor, and at most a fraction of the deadline, so the bot always
keeps some of its time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALPHA = 1 / 8  # RFC 6298's gains: the weight of a new sample in SRTT ...
BETA = 1 / 4  # ... and in RTTVAR
K = 4  # deviations added to SRTT: a round trip that is rarely exceeded


@dataclass(slots=True)
class RoundTrip:
    """A smoothed round-trip estimate and the margin it implies; pure (the caller times the samples)."""

    initial: float = 0.15  # the margin before the first sample (seconds)
    floor: float = 0.1  # never less: a decide() thread and the event loop need their turn
    slack: float = 0.05  # added to the round trip: from the timeout firing to the answer written
    max_fraction: float = 0.75  # never more than this share of the deadline: the bot keeps some time
    srtt: float | None = None  # smoothed round trip, seconds; None before the first sample
    rttvar: float = 0.0  # its mean deviation
    samples: int = 0

    def observe(self, sample: float) -> None:
        """One measured round trip, in seconds (a negative or non-finite one is ignored)."""
        if not math.isfinite(sample) or sample < 0:
            return
        self.samples += 1
        if self.srtt is None:
            self.srtt, self.rttvar = sample, sample / 2
            return
        self.rttvar = (1 - BETA) * self.rttvar + BETA * abs(self.srtt - sample)
        self.srtt = (1 - ALPHA) * self.srtt + ALPHA * sample

    @property
    def bound(self) -> float | None:
        """SRTT + 4 x RTTVAR: the round trip to allow for; None before the first sample."""
        return None if self.srtt is None else self.srtt + K * self.rttvar

    def margin(self, deadline: float, unanswered: float = 0.0) -> float:
        """How long before `deadline` (seconds from the request's arrival) the answer must leave.

        `unanswered`: how long a Ping has been waiting for its Pong; a round trip at least that long
        is under way, so a link that just slowed down counts before its Pong is back.
        """
        bound = self.bound
        if bound is None:
            wanted = max(self.initial, unanswered + self.slack if unanswered > 0 else 0.0)
        else:
            wanted = max(self.floor, max(bound, unanswered) + self.slack)
        return min(wanted, self.max_fraction * max(deadline, 0.0))
