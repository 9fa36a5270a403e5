"""A period of decisions, shared by the jobs that take one (impact's runs, the trainers of
both jobs' adapters): from `start` up to `end`, exclusive, both zoned."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    start: dt.datetime
    end: dt.datetime  # exclusive

    @property
    def first_day(self) -> dt.date:
        return self.start.date()

    @property
    def last_day(self) -> dt.date:
        return (self.end - dt.timedelta(microseconds=1)).date()
