"""The merge's compiled key matching against Arrow's ``dictionary_encode`` and ``index_in``."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ray.core.merge.merger import _key_codes

# -- key matching ---------------------------------------------------------------------------------

keys = st.one_of(st.none(), st.text(max_size=3), st.text(min_size=7, max_size=30), st.binary(max_size=20).map(repr))


@settings(max_examples=300, deadline=None)
@given(st.lists(keys, max_size=60), st.lists(keys, max_size=60), st.booleans())
def test_key_codes_are_those_of_arrow(log: list[str | None], base: list[str | None], sliced: bool) -> None:
    """dictionary_encode's codes and index_in's matches, nulls included, of sliced arrays too."""
    if sliced:
        log_keys = pa.array(["pad", *log], pa.string()).slice(1)
        base_keys = pa.array(["pad", "pad", *base], pa.string()).slice(2)
    else:
        log_keys, base_keys = pa.array(log, pa.string()), pa.array(base, pa.string())
    codes = _key_codes(log_keys, base_keys)
    encoded = pc.dictionary_encode(log_keys, null_encoding="encode")
    assert codes.log.tolist() == encoded.indices.to_pylist()
    assert codes.count == len(encoded.dictionary)
    found = pc.index_in(base_keys, encoded.dictionary, skip_nulls=False).fill_null(-1)
    assert codes.base.tolist() == found.to_pylist()
    large = _key_codes(log_keys.cast(pa.large_string()), None)
    assert large.log.tolist() == codes.log.tolist()
    assert len(large.base) == 0


def test_many_keys_past_the_tables_first_sizes() -> None:
    rng = np.random.default_rng(7)
    log = pa.array([f"key-{v}" for v in rng.integers(0, 40_000, 50_000)])
    base = pa.array([f"key-{v}" for v in range(60_000)])
    codes = _key_codes(log, base)
    encoded = pc.dictionary_encode(log)
    assert codes.log.tolist() == encoded.indices.to_pylist()
    assert codes.base.tolist() == pc.index_in(base, encoded.dictionary).fill_null(-1).to_pylist()
