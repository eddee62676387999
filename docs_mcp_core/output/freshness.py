"""How old an index is, against the maximum age configured for its corpus: one function for the server
(tool description, corpora resource, answers) and the pipeline's metadata, so both say the same."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_AGE = re.compile(r"^\s*(\d{1,6})\s*([dhmw])\s*$")
_UNITS = {
    "m": dt.timedelta(minutes=1),
    "h": dt.timedelta(hours=1),
    "d": dt.timedelta(days=1),
    "w": dt.timedelta(weeks=1),
}
AGE_FORMAT = "a whole number and a unit: m (minutes), h (hours), d (days) or w (weeks), e.g. 30d"


def parse_max_age(text: str) -> dt.timedelta:
    """`30d`, `12h`, `90m`, `2w` as a duration; a ValueError saying how to write one."""
    found = _AGE.match(str(text))
    if not found or int(found.group(1)) == 0:
        raise ValueError(f"{text!r} is not an age: give {AGE_FORMAT}")
    return int(found.group(1)) * _UNITS[found.group(2)]


def show_age(age: dt.timedelta) -> str:
    """A duration as the config spells it, in its largest whole unit (`30d`, `36h`)."""
    for unit in ("w", "d", "h"):
        if age % _UNITS[unit] == dt.timedelta(0):
            return f"{age // _UNITS[unit]}{unit}"
    return f"{age // _UNITS['m']}m"


def parse_instant(stamp: str | None) -> dt.datetime | None:
    """metadata.json's `indexed_at` (UTC ISO 8601, `…Z`), or None when missing or unreadable."""
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


@dataclass(frozen=True)
class Freshness:
    indexed_at: str | None
    age: dt.timedelta | None  # None: indexed_at unknown
    max_age: dt.timedelta | None
    stale: bool  # older than max_age (an unknown age is not stale: nothing says so)

    def days(self) -> float | None:
        return round(self.age / dt.timedelta(days=1), 1) if self.age is not None else None

    def note(self, what: str) -> str | None:
        """One line for an answer or a description when `what` (a corpus, a version) is too old; else None."""
        if not self.stale or self.age is None or self.max_age is None or self.indexed_at is None:
            return None
        return (
            f"{what} was last indexed {self.indexed_at[:10]}, {_spoken(self.age)} ago, more than its "
            f"max_age of {show_age(self.max_age)}: its docs may be out of date"
        )


def _spoken(age: dt.timedelta) -> str:
    days = age // dt.timedelta(days=1)
    if days >= 1:
        return f"{days} day{'s' if days != 1 else ''}"
    for unit, size in (("hour", dt.timedelta(hours=1)), ("minute", dt.timedelta(minutes=1))):
        if (count := age // size) >= 1:
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return "less than a minute"


def freshness(indexed_at: str | None, max_age: dt.timedelta | None, now: dt.datetime | None = None) -> Freshness:
    """How old an index indexed at `indexed_at` is now, and whether that is more than `max_age`."""
    moment = parse_instant(indexed_at)
    age = max(dt.timedelta(0), (now or dt.datetime.now(dt.UTC)) - moment) if moment else None
    stale = age is not None and max_age is not None and age > max_age
    return Freshness(indexed_at, age, max_age, stale)


def age_fields(indexed_at: str | None, max_age: dt.timedelta | None) -> dict[str, str | float | bool | None]:
    """The age of an index as the corpora resource and the Dagster metadata show it."""
    fresh = freshness(indexed_at, max_age)
    fields: dict[str, str | float | bool | None] = {"indexed_at": indexed_at, "age_days": fresh.days()}
    if max_age is not None:
        fields.update(max_age=show_age(max_age), stale=fresh.stale)
    return fields
