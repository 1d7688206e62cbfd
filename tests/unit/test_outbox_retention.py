"""How long dispatched follow-up effects are kept: `SABOT_OUTBOX_RETENTION`, in seconds,
24 hours by default; anything but a positive number of seconds up to a year is refused."""

from __future__ import annotations

import pytest

from infra.errors import SettingsError
from infra.settings import outbox_retention


def test_the_retention_is_a_day_unless_set() -> None:
    assert outbox_retention({}) == 86400.0
    assert outbox_retention({"SABOT_OUTBOX_RETENTION": " "}) == 86400.0
    assert outbox_retention({"SABOT_OUTBOX_RETENTION": "600"}) == 600.0


@pytest.mark.parametrize("text", ["0", "-5", "soon", str(400 * 86400)])
def test_a_retention_that_is_not_seconds_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(SettingsError) as refused:
        outbox_retention({"SABOT_OUTBOX_RETENTION": text})
    assert str(refused.value) == ("SABOT_OUTBOX_RETENTION must be seconds in (0, 31536000],"
                                  f" not {text!r}")
