"""Where a new partition goes (`infra.store.homes`): rendezvous hashing over the homes' names, and
the setting that names them."""

from __future__ import annotations

import pytest

from infra.store.homes import SETTING, BadHomes, chosen_home, homes_from

KEYS = [f"partition-{n}" for n in range(3000)]


def test_new_partitions_spread_evenly_over_the_homes() -> None:
    names = ["main", "east", "west"]
    counts = {name: sum(chosen_home(key, names) == name for key in KEYS) for name in names}
    assert all(800 <= n <= 1200 for n in counts.values()), counts


def test_a_home_added_takes_only_new_partitions_its_share() -> None:
    before = {key: chosen_home(key, ["main", "east", "west"]) for key in KEYS}
    after = {key: chosen_home(key, ["main", "east", "west", "north"]) for key in KEYS}
    moved = [key for key in KEYS if before[key] != after[key]]
    assert all(after[key] == "north" for key in moved)  # none between the old homes
    assert 600 <= len(moved) <= 900  # about a quarter


def test_the_choice_does_not_depend_on_the_order_of_the_names() -> None:
    assert all(chosen_home(key, ["west", "main", "east"]) == chosen_home(
        key, ["main", "east", "west"]) for key in KEYS[:200])


def test_the_setting_names_its_homes() -> None:
    assert homes_from({}) is None
    assert homes_from({SETTING: " "}) is None
    homes = homes_from({SETTING: "east=postgresql://a/x, west=postgres://b/y"})
    assert homes is not None
    assert homes.urls == {"east": "postgresql://a/x", "west": "postgres://b/y"}
    assert homes.names == ["main", "east", "west"]


@pytest.mark.parametrize(("value", "said"), [
    ("east", "NAME=URL"),
    ("=postgresql://a/x", "NAME=URL"),
    ("east west=postgresql://a/x", "letters, digits"),
    ("east=postgresql://u:pw@a/x,east=postgresql://b/y", "named twice"),
    ("east=sqlite:///x.db", "must be a PostgreSQL URL"),
])
def test_a_bad_setting_says_what_is_wrong(value: str, said: str) -> None:
    with pytest.raises(BadHomes, match=said) as raised:
        homes_from({SETTING: value})
    assert "pw" not in str(raised.value)
