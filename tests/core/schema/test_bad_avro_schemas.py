"""Malformed Avro schemas (a log block's, or a commit's writer schema) raise a
``HudiSchemaError`` naming the column and where the schema came from: missing attributes,
recursive records, names Avro does not allow (never read as another column)."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import hudi
import pytest

from hudi_ray import HudiSchemaError
from hudi_ray.core.exceptions import HudiCoreError
from hudi_ray.core.log_file.block import BlockType, LogBlock
from hudi_ray.core.log_file.content import decode_avro_block
from hudi_ray.core.schema.avro import avro_to_arrow_schema
from tests.core.damage import V6, V6_LATEST, edit_json_commit, fails_on_schema_and_read


@pytest.mark.parametrize(
    ("field_type", "match"),
    [
        ({"logicalType": "decimal", "precision": 10}, r"column d .*lacks 'type'"),
        ({"type": "bytes", "logicalType": "decimal"}, r"column d .*lacks 'precision'"),
        ({"type": "bytes", "logicalType": "decimal", "precision": "ten"}, r"column d .*precision='ten'"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 0}, r"column d .*precision=0"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 99}, r"column d .*precision 99"),
        ({"type": "fixed", "name": "f"}, r"column d .*lacks 'size'"),
        ({"type": "array"}, r"column d .*lacks 'items'"),
        ({"type": "map"}, r"column d .*lacks 'values'"),
        ({"type": {"type": "record", "name": "x"}}, r"."),
        ("r", r"Recursive Avro record 'r' at column d"),
    ],
)
def test_malformed_avro_schemas_raise_schema_errors(field_type: object, match: str) -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "d", "type": field_type}]}
    try:
        avro_to_arrow_schema(json.dumps(schema), "mem://schema")
    except HudiSchemaError as exc:
        assert re.search(match, str(exc)), str(exc)
        assert "mem://schema" in str(exc)
    else:
        assert match == r".", "expected a HudiSchemaError"


def test_avro_field_without_type_or_name() -> None:
    with pytest.raises(HudiSchemaError, match=r"column a in mem://s lacks 'type'"):
        avro_to_arrow_schema({"type": "record", "name": "r", "fields": [{"name": "a"}]}, "mem://s")
    with pytest.raises(HudiSchemaError, match=r"Field 0 of Avro record .* has no name"):
        avro_to_arrow_schema({"type": "record", "name": "r", "fields": [{"type": "int"}]}, "mem://s")


def test_log_block_with_schema_lacking_precision() -> None:
    schema = json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "d", "type": {"type": "bytes", "logicalType": "decimal"}}]}
    )
    block = LogBlock(BlockType.AVRO_DATA, {2: schema}, struct.pack(">ii", 2, 0), "mem://log", 9)
    with pytest.raises(HudiCoreError, match=r"precision"):
        decode_avro_block(block)


# -- Avro names in a commit's writer schema --------------------------------------------------------


def _edit_writer_schema(path: Path, old: str, new: str) -> Path:
    """Replace the one occurrence of ``old`` in the latest commit's writer schema text."""

    def change(meta: dict[str, Any]) -> None:
        text = meta["extraMetadata"]["schema"]
        assert text.count(old) == 1
        meta["extraMetadata"]["schema"] = text.replace(old, new)

    return edit_json_commit(path, change)


@pytest.mark.parametrize(
    ("old", "new", "what", "bad"),
    [
        # One flipped bit each: "c" 0x63 -> "#" 0x23, "s" 0x73 -> "3" 0x33.
        ('"name":"child_struct","type"', '"name":"#hild_struct","type"', "field name", "#hild_struct"),
        ('"name":"child_struct","namespace"', '"name":"#hild_struct","namespace"', "type name", "#hild_struct"),
        (
            '"namespace":"hoodie.v6_nonpartitioned.v6_nonpartitioned_record.structField"',
            '"namespace":"hoodie.v6_nonpartitioned.v6_nonpartitioned_record.3tructField"',
            "namespace",
            "hoodie.v6_nonpartitioned.v6_nonpartitioned_record.3tructField",
        ),
    ],
)
def test_invalid_avro_name_in_writer_schema(copy_of, old: str, new: str, what: str, bad: str) -> None:
    """A damaged name is not read as another column (it was, as ``#hild_struct``)."""
    path = copy_of(V6)
    commit = _edit_writer_schema(path, old, new)
    where = rf"the writer schema .*{V6_LATEST}.*{re.escape(commit.name)}"
    match = rf"Invalid Avro {what} '{re.escape(bad)}' .*structField.* of {where}"
    fails_on_schema_and_read(path, HudiSchemaError, match)


def test_invalid_avro_field_name_is_refused_by_hudi_rs_too(copy_of) -> None:
    path = copy_of(V6)
    _edit_writer_schema(path, '"name":"child_struct","type"', '"name":"#hild_struct","type"')
    with pytest.raises(Exception, match=r"Invalid field name #hild_struct"):
        hudi.HudiTableBuilder.from_base_uri(str(path)).build().read()
