"""Tests of finkg.kg.calendar: sessions and the anchor times of DESIGN §3."""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from finkg.errors import InputError, TimestampError
from finkg.kg.calendar import RANGE_END, RANGE_START, AnchorTimes, get_calendar

NY = ZoneInfo("America/New_York")


@pytest.fixture(scope="module")
def cal():
    return get_calendar()


def ny(*args: int) -> datetime:
    return datetime(*args, tzinfo=NY)


def test_calendar_is_cached(cal):
    assert get_calendar() is cal
    assert get_calendar("XNYS") is cal


def test_unknown_calendar_name_is_input_error():
    with pytest.raises(InputError, match="NOPE"):
        get_calendar("NOPE")


def test_aapl_anchor_after_close(cal):
    published = ny(2020, 4, 30, 16, 30)
    a = cal.anchor_times(published)
    assert isinstance(a, AnchorTimes)
    assert a.prediction_day == date(2020, 5, 1)
    assert a.decision_time == published
    assert a.evidence_cutoff == a.decision_time
    assert a.card_last_session == date(2020, 4, 30)
    assert a.published == published
    assert a.decision_time.tzinfo == NY


def test_regular_hours_item(cal):
    published = ny(2020, 4, 30, 11, 0)
    assert cal.prediction_day(published) == date(2020, 5, 1)
    assert cal.decision_time(published) == ny(2020, 4, 30, 16, 0)
    assert cal.anchor_times(published).card_last_session == date(2020, 4, 30)


def test_pre_market_item(cal):
    published = ny(2020, 5, 1, 7, 30)
    assert cal.prediction_day(published) == date(2020, 5, 1)
    assert cal.decision_time(published) == published
    assert cal.anchor_times(published).card_last_session == date(2020, 4, 30)


def test_exactly_at_open_goes_to_next_session(cal):
    # the open must be strictly after the publication
    assert cal.prediction_day(ny(2020, 5, 1, 9, 30)) == date(2020, 5, 4)
    assert cal.prediction_day(ny(2020, 5, 1, 9, 29, 59)) == date(2020, 5, 1)


def test_weekend_item(cal):
    published = ny(2020, 5, 2, 12, 0)  # Saturday
    a = cal.anchor_times(published)
    assert a.prediction_day == date(2020, 5, 4)
    assert a.decision_time == published
    assert a.card_last_session == date(2020, 5, 1)


def test_holiday_item(cal):
    assert not cal.is_session(date(2020, 7, 3))
    a = cal.anchor_times(ny(2020, 7, 3, 12, 0))
    assert a.prediction_day == date(2020, 7, 6)
    assert a.card_last_session == date(2020, 7, 2)
    assert a.decision_time == ny(2020, 7, 3, 12, 0)


def test_early_close(cal):
    day = date(2020, 11, 27)
    assert cal.session_close(day) == ny(2020, 11, 27, 13, 0)
    assert cal.bar_available_at(day) == ny(2020, 11, 27, 13, 0)
    a = cal.anchor_times(ny(2020, 11, 27, 10, 0))
    assert a.prediction_day == date(2020, 11, 30)
    assert a.decision_time == ny(2020, 11, 27, 13, 0)
    assert a.card_last_session == day


def test_regular_bar_available_at_close(cal):
    assert cal.bar_available_at(date(2020, 4, 30)) == ny(2020, 4, 30, 16, 0)
    assert cal.session_open(date(2020, 4, 30)) == ny(2020, 4, 30, 9, 30)


@pytest.mark.parametrize(
    "published",
    [
        ny(2020, 4, 30, 16, 30),
        ny(2020, 4, 30, 11, 0),
        ny(2020, 5, 1, 7, 30),
        ny(2020, 11, 27, 10, 0),
        ny(2020, 3, 8, 12, 0),
    ],
)
def test_utc_and_other_zones_give_same_answers(cal, published):
    in_ny = cal.anchor_times(published)
    for zone in (UTC, ZoneInfo("Asia/Tokyo")):
        other = cal.anchor_times(published.astimezone(zone))
        assert other == in_ny
        assert other.decision_time.utcoffset() == in_ny.decision_time.utcoffset()


def test_sessions_and_navigation(cal):
    assert cal.sessions(date(2020, 7, 1), date(2020, 7, 7)) == [
        date(2020, 7, 1),
        date(2020, 7, 2),
        date(2020, 7, 6),
        date(2020, 7, 7),
    ]
    assert cal.sessions(date(2020, 7, 3), date(2020, 7, 5)) == []
    assert cal.next_session(date(2020, 7, 2)) == date(2020, 7, 6)
    assert cal.next_session(date(2020, 7, 4)) == date(2020, 7, 6)
    assert cal.previous_session(date(2020, 7, 6)) == date(2020, 7, 2)
    assert cal.previous_session(date(2020, 7, 5)) == date(2020, 7, 2)
    assert cal.session_offset(date(2020, 7, 2), 1) == date(2020, 7, 6)
    assert cal.session_offset(date(2020, 7, 6), -1) == date(2020, 7, 2)
    assert cal.session_offset(date(2020, 7, 6), 0) == date(2020, 7, 6)
    with pytest.raises(InputError, match="2020-07-03"):
        cal.session_offset(date(2020, 7, 3), 1)
    with pytest.raises(InputError, match="swap"):
        cal.sessions(date(2020, 7, 7), date(2020, 7, 1))


def test_label_window(cal):
    assert cal.label_window(date(2020, 5, 1), 1) == (date(2020, 4, 30), date(2020, 5, 1))
    assert cal.label_window(date(2020, 5, 1), 5) == (date(2020, 4, 30), date(2020, 5, 7))
    for bad in (0, -1, True, 1.0):
        with pytest.raises(InputError, match="horizon"):
            cal.label_window(date(2020, 5, 1), bad)
    with pytest.raises(InputError, match="not an XNYS session"):
        cal.label_window(date(2020, 5, 2), 1)


def test_naive_datetime_is_timestamp_error(cal):
    naive = datetime(2020, 4, 30, 16, 30)  # noqa: DTZ001 - the point of the test
    for call in (cal.prediction_day, cal.decision_time, cal.anchor_times):
        with pytest.raises(TimestampError) as info:
            call(naive)
        message = str(info.value)
        assert naive.isoformat() in message
        assert "attach a zone" in message and "America/New_York" in message


def test_non_date_inputs(cal):
    with pytest.raises(InputError, match="date"):
        cal.is_session(ny(2020, 5, 1, 12))  # a datetime is not a calendar day
    with pytest.raises(TimestampError):
        cal.prediction_day("2020-05-01T12:00:00-04:00")


def test_dates_outside_range_are_input_errors(cal):
    for day in (date(1989, 12, 29), date(2036, 1, 2)):
        with pytest.raises(InputError) as info:
            cal.is_session(day)
        message = str(info.value)
        assert day.isoformat() in message
        assert RANGE_START.isoformat() in message and RANGE_END.isoformat() in message
    with pytest.raises(InputError, match="1985-06-03"):
        cal.prediction_day(ny(1985, 6, 3, 12))
    with pytest.raises(InputError, match="calendar range"):
        cal.prediction_day(ny(2035, 12, 31, 12))  # no session after the last one
    with pytest.raises(InputError, match="calendar range"):
        cal.previous_session(date(1990, 1, 2))


@settings(max_examples=300, deadline=None)
@given(
    st.datetimes(
        min_value=datetime(2019, 1, 1),  # noqa: DTZ001 - hypothesis bounds are naive
        max_value=datetime(2021, 12, 31, 23, 59, 59),  # noqa: DTZ001
        timezones=st.sampled_from([NY, UTC, ZoneInfo("Asia/Tokyo")]),
    )
)
def test_anchor_properties(published):
    cal = get_calendar()
    a = cal.anchor_times(published)
    instant = published.astimezone(UTC)
    decided = a.decision_time.astimezone(UTC)
    assert cal.is_session(a.prediction_day)
    assert decided >= instant
    assert decided < cal.session_open(a.prediction_day).astimezone(UTC)
    assert a.evidence_cutoff == a.decision_time
    assert a.card_last_session == cal.previous_session(a.prediction_day)
    assert cal.session_open(a.card_last_session).astimezone(UTC) <= instant
    assert decided >= cal.session_close(a.card_last_session).astimezone(UTC)
    assert a.prediction_day == cal.prediction_day(published)
    assert a.decision_time == cal.decision_time(published)
    assert decided in (instant, cal.session_close(a.card_last_session).astimezone(UTC))
