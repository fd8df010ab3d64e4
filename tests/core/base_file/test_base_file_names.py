"""Base file names: ``<fileId>_<writeToken>_<instantTime>.<ext>``."""

from __future__ import annotations

import pytest

from hudi_ray.core.base_file import base_file_instant, parse_base_file_name

NAMES = [
    "f662f591-c82f-47c7-9958-babf60305753-0_907-1-0_20261125125417466.parquet",
    "abc_1-2-3_20240101000000000.lance",
    "id_with_underscores_0-1-0_001.hfile",
    "x_0-1-0_20240101.orc",
]
NOT_BASE_FILES = [
    ".hidden_0-1-0_20240101.parquet",  # log files and markers start with a dot
    "abc_1-2-3_20240101.txt",
    "abc_20240101.parquet",  # no write token
    "abc_1-2-3_2024x101.parquet",  # the instant is digits only
    "abc_1-2-3_20240101",
    "",
]


@pytest.mark.parametrize("name", NAMES)
def test_instant_of_a_base_file_name(name: str) -> None:
    parsed = parse_base_file_name(name)
    assert parsed is not None
    assert base_file_instant(name) == parsed.instant_time == name.rsplit("_", 1)[1].split(".")[0]
    assert f"{parsed.file_id}_{parsed.write_token}_{parsed.instant_time}.{parsed.extension}" == name


@pytest.mark.parametrize("name", NOT_BASE_FILES)
def test_names_that_are_not_base_files(name: str) -> None:
    assert parse_base_file_name(name) is None
    assert base_file_instant(name) is None
