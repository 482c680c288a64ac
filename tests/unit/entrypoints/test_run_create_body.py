"""The POST /v1/runs body rules that need no server: nesting bound, goal pattern, error texts."""

import json
import re
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.domain.errors import InvalidGoal
from agentkit.domain.run import RunStatus, validate_goal
from agentkit.entrypoints.http.body import body_validation_error, nesting_exceeds
from agentkit.entrypoints.http.dto.fields import GOAL_PATTERN, WHITESPACE, StatusText

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='[]{}"\\ab', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\ab', max_size=3), inner),
    max_leaves=40,
)


def depth_of(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth_of(item) for item in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth_of(item) for item in value.values()), default=0)
    return 0


@settings(max_examples=300, database=None)
@given(json_values, st.integers(min_value=0, max_value=6))
def test_nesting_is_measured_like_json_nests_brackets_in_strings_do_not_count(value: Any, limit: int) -> None:
    body = json.dumps(value).encode()

    assert nesting_exceeds(body, limit) == (depth_of(value) > limit)


def test_a_deep_body_is_found_without_recursion() -> None:
    assert nesting_exceeds(b"[" * 1_000_000, 64)
    assert not nesting_exceeds(b'{"goal": "' + b"[" * 1_000 + b'"}', 64)


def test_whitespace_is_what_python_strips() -> None:
    assert set(WHITESPACE) == {char for char in map(chr, range(0x110000)) if char.isspace()}


@settings(max_examples=500, database=None)
@given(st.text(alphabet=st.sampled_from([*WHITESPACE, "\x00", "a", "é", "😀"]), max_size=8) | st.text(max_size=8))
def test_the_documented_goal_pattern_is_the_domain_rule(goal: str) -> None:
    try:
        validate_goal(goal, max_chars=100)
    except InvalidGoal:
        accepted = False
    else:
        accepted = True

    assert (re.search(GOAL_PATTERN, goal) is not None) == accepted


@pytest.mark.parametrize(
    ("message", "detail", "key"),
    [
        (
            "Expected `int | null`, got `str` - at `$.max_steps`",
            "body.max_steps: Expected `int | null`, got `str`",
            "max_steps",
        ),
        ("Object missing required field `goal`", "body: Object missing required field `goal`", None),
        ("Expected `str` of length <= 10 - at `$.goal`", "body.goal: Expected `str` of length <= 10", "goal"),
    ],
)
def test_validation_errors_name_the_field(message: str, detail: str, key: str | None) -> None:
    problem = body_validation_error(message)

    assert (problem.status, problem.code, problem.detail) == (422, "validation_error", detail)
    assert problem.errors is not None
    assert problem.errors[0].get("key") == key


def test_the_wire_statuses_are_the_domains() -> None:
    assert set(typing.get_args(StatusText)) == {status.value for status in RunStatus}
