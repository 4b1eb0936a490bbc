from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon import canonjson
from recon.errors import CanonicalJSONError

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_round_trip_is_exact(value: object) -> None:
    text = canonjson.dumps(value)
    assert canonjson.loads(text) == value
    assert canonjson.dumps(canonjson.loads(text)) == text  # canonical: a fixed point


@given(st.dictionaries(st.text(max_size=5), st.integers(), max_size=6))
def test_keys_are_sorted_and_compact_form_hashes_stably(d: dict[str, int]) -> None:
    compact = canonjson.dumps_compact(d)
    assert list(json.loads(compact)) == sorted(d)
    assert canonjson.sha256_of(d) == canonjson.sha256_of(dict(reversed(list(d.items()))))


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, {"a": [1, math.nan]}])
def test_non_finite_numbers_are_refused_with_their_path(bad: object) -> None:
    with pytest.raises(CanonicalJSONError, match=r"NaN and Infinity"):
        canonjson.dumps(bad)


def test_non_json_types_are_named() -> None:
    import numpy as np

    with pytest.raises(CanonicalJSONError, match=r"(?s)\$\.count = .* is a int64.*int\(x\)"):
        canonjson.dumps({"count": np.int64(3)})
    with pytest.raises(CanonicalJSONError, match="non-string key"):
        canonjson.dumps({1: 2})


def test_numpy_float_writes_as_plain_float() -> None:
    import numpy as np

    assert canonjson.dumps_compact({"x": np.float64(0.1)}) == '{"x":0.1}'


def test_nan_literals_are_refused_when_reading() -> None:
    with pytest.raises(ValueError):
        canonjson.loads('{"x": NaN}')
