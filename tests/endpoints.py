"""Reading the components' HTTP endpoints as a test does: a page's status and body, a /metrics scrape."""

from __future__ import annotations

import urllib.error
import urllib.request
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


def status_of(url: str) -> tuple[int, bytes]:
    """The HTTP status and body `url` answers with, an error status included."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@dataclass(frozen=True)
class Scrape:
    """One reading of a /metrics endpoint: every sample by name and labels."""

    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]

    def value(self, name: str, **labels: str) -> float:
        return self.samples.get((name, frozenset(labels.items())), 0.0)

    def has(self, name: str, **labels: str) -> bool:
        """Whether the series is exposed (at 0 too)."""
        return (name, frozenset(labels.items())) in self.samples

    def names(self) -> set[str]:
        return {name for name, _ in self.samples}


def parsed(text: str) -> Scrape:
    """The Prometheus text format read into a `Scrape`."""
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return Scrape(samples)


def scrape(url: str) -> Scrape:
    """Read a /metrics endpoint (in Prometheus' text format)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return parsed(response.read().decode())


def answers(url: str) -> bool:
    """Whether a /metrics endpoint answers (yet)."""
    try:
        scrape(url)
    except (urllib.error.URLError, ConnectionError):
        return False
    return True
