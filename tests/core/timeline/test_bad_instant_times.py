"""Instant times a read is given (as-of, start and end timestamps) that are not real dates
fail naming the option; valid ones in each accepted format still parse."""

from __future__ import annotations

import pytest

import hudi_ray
from hudi_ray import HudiReadOptions, HudiTableBuilder, HudiTimestampError
from tests.core.damage import TABLE, row_count


@pytest.mark.parametrize(
    "bad",
    [
        "20240230000000",  # February 30th
        "20241301000000",  # month 13
        "20240315142560",  # second 60
        "20240230000000000",
        "-1",
        "-1710512730000",
        "\u0662\u0660\u0662\u0664\u0660\u0663\u0661\u0665\u0661\u0664\u0662\u0665\u0663\u0660",  # Arabic-Indic digits
        "\uff12\uff10\uff12\uff14\uff10\uff13\uff11\uff15\uff11\uff14\uff12\uff15\uff13\uff10",  # full-width digits
        "\uff11\uff17\uff11\uff10\uff15\uff11\uff12\uff17\uff13\uff10",
        "2024-02-30T00:00:00Z",
        "\uff12\uff10\uff12\uff14-03-15T14:25:30Z",
        "2024-03-15T14:25:30+24:00",
    ],
)
def test_invalid_dates_are_errors(table_path, bad: str) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiTimestampError, match="as-of timestamp"):
        table.read(HudiReadOptions().with_as_of_timestamp(bad))
    inc = HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental)
    with pytest.raises(HudiTimestampError, match="start timestamp"):
        table.read(inc.with_start_timestamp(bad))
    with pytest.raises(HudiTimestampError, match="end timestamp"):
        table.read(inc.with_end_timestamp(bad))


@pytest.mark.parametrize("bad", ["2024-03-15T14:25:30", "2024-03-15", "yesterday", "2024-13-45T00:00:00Z"])
def test_bad_timestamps(table_path, bad: str) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    with pytest.raises(HudiTimestampError, match="as-of timestamp"):
        table.read(HudiReadOptions().with_as_of_timestamp(bad))
    inc = HudiReadOptions().with_query_type(hudi_ray.HudiQueryType.Incremental)
    with pytest.raises(HudiTimestampError, match="start timestamp"):
        table.read(inc.with_start_timestamp(bad))


def test_valid_dates_still_parse(table_path) -> None:
    table = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).build()
    latest = row_count(table)
    for ok in ("20991231235959", "20991231235959999", "4102444799", "2099-12-31T23:59:59Z"):
        assert row_count(table, HudiReadOptions().with_as_of_timestamp(ok)) == latest
