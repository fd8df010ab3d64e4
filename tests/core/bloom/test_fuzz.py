"""Damaged bloom filters: whatever the bytes, decoding and testing either answer or raise the
project's error (the pruner then keeps the file); damage that leaves text Hudi could not have
written (a character outside Base64, a wrong length, a bad header) is always that error."""

from __future__ import annotations

import base64
import random
import string

import pyarrow as pa
import pytest

from hudi_ray.core.bloom import DYNAMIC_V0, SIMPLE, decode_bloom_filter
from hudi_ray.core.exceptions import HudiCorruptFileError
from hudi_testkit import BloomFilterSpec
from hudi_testkit.bloom import bloom_filter_text
from tests.core.bloom.test_filter import DYNAMIC_GOLDEN, SIMPLE_GOLDEN

ALPHABET = (string.ascii_letters + string.digits + "+/").encode()
NOT_BASE64 = bytes(b for b in range(256) if b not in ALPHABET and b != ord("="))
KEYS = pa.array([f"key-{i:03d}" for i in range(100)] + [f"other-{i}" for i in range(100)])
FILTERS = {
    "simple-golden": (SIMPLE_GOLDEN, SIMPLE),
    "dynamic-golden": (DYNAMIC_GOLDEN, DYNAMIC_V0),
    "hudi-default-size": (bloom_filter_text([f"key-{i:03d}" for i in range(100)], BloomFilterSpec()), DYNAMIC_V0),
}


def _outcome(text: bytes, code: str | None) -> str:
    """'ok' or 'corrupt'; any other exception fails the test."""
    try:
        found = decode_bloom_filter(text, code, "fuzzed").might_contain(KEYS)
    except HudiCorruptFileError:
        return "corrupt"
    assert found.dtype == bool and len(found) == len(KEYS)
    return "ok"


@pytest.mark.parametrize("name", FILTERS)
def test_damage_outside_base64_is_always_refused(name: str) -> None:
    text, code = FILTERS[name]
    raw = text.encode()
    rng = random.Random(name)
    for _ in range(150):
        at = rng.randrange(len(raw))
        kind = rng.choice(["replace", "insert", "delete", "truncate"])
        if kind == "replace":
            fuzzed = raw[:at] + bytes([rng.choice(NOT_BASE64)]) + raw[at + 1 :]
        elif kind == "insert":
            fuzzed = raw[:at] + bytes([rng.choice(ALPHABET + NOT_BASE64)]) + raw[at:]
        elif kind == "delete":
            fuzzed = raw[:at] + raw[at + 1 :]
        else:
            fuzzed = raw[: at - at % 4] if at >= 4 and rng.random() < 0.5 else raw[:at]
        assert _outcome(fuzzed, code) == "corrupt", (kind, at)


@pytest.mark.parametrize("name", FILTERS)
def test_any_bytes_answer_or_raise_the_projects_error(name: str) -> None:
    text, code = FILTERS[name]
    raw = bytearray(base64.b64decode(text))
    rng = random.Random(name + "bytes")
    for _ in range(200):
        fuzzed = bytearray(raw)
        for _ in range(rng.randint(1, 4)):
            fuzzed[rng.randrange(min(len(fuzzed), 40))] = rng.randrange(256)  # headers mostly
        if rng.random() < 0.3:
            fuzzed = fuzzed[: rng.randrange(len(fuzzed))]
        _outcome(base64.b64encode(bytes(fuzzed)), rng.choice([code, SIMPLE, DYNAMIC_V0, None, "DYNAMIC_V1", ""]))
    for size in range(0, 64):
        _outcome(base64.b64encode(rng.randbytes(size)), code)
        _outcome(rng.randbytes(size), code)
