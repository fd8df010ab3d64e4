"""Rows of the v6/v8 sample tables (``v6_complexkeygen_hivestyle``, ``v6_simplekeygen_
nonhivestyle``, ``v8_nonpartitioned``, ``v6_nonpartitioned``): two INSERT INTO
statements, run as upserts (primaryKey + preCombineField longField on Hudi 0.14/0.15).
Statement 0 inserts Alice, Bob, Carol; statement 1 re-inserts Alice with isActive =
false (same longField, so the newer write wins) and adds Diana.

Not checked: timestampField (its UTC value depends on the writer's session time zone).
A MAP column reads as a list of (key, value) pairs, in the order the MAP(...) lists them."""

from __future__ import annotations

import datetime
from collections.abc import Iterable
from decimal import Decimal

from tests.expected.model import Columns

INSERTED: dict[int, Columns] = {
    1: {
        "id": 1,
        "name": "Alice",
        "isActive": True,  # false after the second INSERT, see ALICE_REINSERTED
        "intField": 15000,
        "longField": 1234567890,
        "floatField": 1.0,
        "doubleField": 3.14159,
        "decimalField": Decimal("12345.67890"),
        "dateField": datetime.date(2023, 4, 1),
        "binaryField": b"binary data",
        "mapField": [
            ("key1", {"map_field_value_struct_f1": 123.456, "map_field_value_struct_f2": True}),
            ("key2", {"map_field_value_struct_f1": 789.012, "map_field_value_struct_f2": False}),
        ],
        "arrayField": [
            {"arr_struct_f1": "red", "arr_struct_f2": 100},
            {"arr_struct_f1": "blue", "arr_struct_f2": 200},
            {"arr_struct_f1": "green", "arr_struct_f2": 300},
        ],
        "structField": {
            "field1": "Alice",
            "field2": 30,
            "child_struct": {"child_field1": 123.456, "child_field2": True},
        },
    },
    2: {
        "id": 2,
        "name": "Bob",
        "isActive": False,
        "intField": 25000,
        "longField": 9876543210,
        "floatField": 2.0,
        "doubleField": 2.71828,
        "decimalField": Decimal("67890.12345"),
        "dateField": datetime.date(2023, 4, 2),
        "binaryField": b"more binary data",
        "mapField": [
            ("key3", {"map_field_value_struct_f1": 234.567, "map_field_value_struct_f2": True}),
            ("key4", {"map_field_value_struct_f1": 567.890, "map_field_value_struct_f2": False}),
        ],
        "arrayField": [
            {"arr_struct_f1": "yellow", "arr_struct_f2": 400},
            {"arr_struct_f1": "purple", "arr_struct_f2": 500},
        ],
        "structField": {
            "field1": "Bob",
            "field2": 40,
            "child_struct": {"child_field1": 789.012, "child_field2": False},
        },
    },
    3: {
        "id": 3,
        "name": "Carol",
        "isActive": True,
        "intField": 35000,
        "longField": 1928374650,
        "floatField": 3.0,
        "doubleField": 1.41421,
        "decimalField": Decimal("11111.22222"),
        "dateField": datetime.date(2023, 4, 3),
        "binaryField": b"even more binary data",
        "mapField": [
            ("key5", {"map_field_value_struct_f1": 345.678, "map_field_value_struct_f2": True}),
            ("key6", {"map_field_value_struct_f1": 654.321, "map_field_value_struct_f2": False}),
        ],
        "arrayField": [
            {"arr_struct_f1": "black", "arr_struct_f2": 600},
            {"arr_struct_f1": "white", "arr_struct_f2": 700},
            {"arr_struct_f1": "pink", "arr_struct_f2": 800},
        ],
        "structField": {
            "field1": "Carol",
            "field2": 25,
            "child_struct": {"child_field1": 456.789, "child_field2": True},
        },
    },
    # Second INSERT
    4: {
        "id": 4,
        "name": "Diana",
        "isActive": True,
        "intField": 45000,
        "longField": 987654321,
        "floatField": 4.0,
        "doubleField": 2.468,
        "decimalField": Decimal("65432.12345"),
        "dateField": datetime.date(2023, 4, 4),
        "binaryField": b"new binary data",
        "mapField": [
            ("key7", {"map_field_value_struct_f1": 456.789, "map_field_value_struct_f2": True}),
            ("key8", {"map_field_value_struct_f1": 123.456, "map_field_value_struct_f2": False}),
        ],
        "arrayField": [
            {"arr_struct_f1": "orange", "arr_struct_f2": 900},
            {"arr_struct_f1": "gray", "arr_struct_f2": 1000},
        ],
        "structField": {
            "field1": "Diana",
            "field2": 50,
            "child_struct": {"child_field1": 987.654, "child_field2": True},
        },
    },
}
# Second INSERT: Alice again, isActive = false.
ALICE_REINSERTED = {"isActive": False}

# fmt: off
# Where each row lives: its record key, partition path and the partition columns' values.
# primaryKey 'id,name', PARTITIONED BY (byteField, shortField), hive style.
COMPLEXKEYGEN_HIVESTYLE: dict[int, Columns] = {
    1: {"_hoodie_record_key": "id:1,name:Alice", "_hoodie_partition_path": "byteField=10/shortField=300",
        "byteField": 10, "shortField": 300},
    2: {"_hoodie_record_key": "id:2,name:Bob", "_hoodie_partition_path": "byteField=20/shortField=100",
        "byteField": 20, "shortField": 100},
    3: {"_hoodie_record_key": "id:3,name:Carol", "_hoodie_partition_path": "byteField=10/shortField=300",
        "byteField": 10, "shortField": 300},
    4: {"_hoodie_record_key": "id:4,name:Diana", "_hoodie_partition_path": "byteField=30/shortField=100",
        "byteField": 30, "shortField": 100},
}
# primaryKey 'id', PARTITIONED BY (byteField), non-hive style.
SIMPLEKEYGEN_NONHIVESTYLE: dict[int, Columns] = {
    1: {"_hoodie_record_key": "1", "_hoodie_partition_path": "10", "byteField": 10, "shortField": 300},
    2: {"_hoodie_record_key": "2", "_hoodie_partition_path": "20", "byteField": 20, "shortField": 100},
    3: {"_hoodie_record_key": "3", "_hoodie_partition_path": "10", "byteField": 10, "shortField": 200},
    4: {"_hoodie_record_key": "4", "_hoodie_partition_path": "30", "byteField": 30, "shortField": 500},
}
# primaryKey 'id', no partitions.
NONPARTITIONED: dict[int, Columns] = {
    1: {"_hoodie_record_key": "1", "_hoodie_partition_path": "", "byteField": 1, "shortField": 300},
    2: {"_hoodie_record_key": "2", "_hoodie_partition_path": "", "byteField": 0, "shortField": 100},
    3: {"_hoodie_record_key": "3", "_hoodie_partition_path": "", "byteField": 1, "shortField": 200},
    4: {"_hoodie_record_key": "4", "_hoodie_partition_path": "", "byteField": 1, "shortField": 500},
}
# fmt: on


def sample(ids: Iterable[int], layout: dict[int, Columns], *, alice_reinserted: bool) -> dict[int, Columns]:
    """Expected rows by id: each of ``ids`` as inserted, where ``layout`` puts it; Alice
    with the second INSERT's isActive if ``alice_reinserted``."""
    rows = {i: {**INSERTED[i], **layout[i]} for i in ids}
    if alice_reinserted and 1 in rows:
        rows[1] |= ALICE_REINSERTED
    return rows
