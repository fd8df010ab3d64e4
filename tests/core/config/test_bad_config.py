"""A missing or damaged table configuration (the ``.hoodie`` folder, ``hoodie.properties``,
its table version) and table options of the wrong value are errors naming the key and
the file, never a table read with guessed settings."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import hudi_ray
from hudi_ray import (
    HudiConfigError,
    HudiCorruptFileError,
    HudiReadOptions,
    HudiTableBuilder,
    HudiTableNotFoundError,
    HudiTimelineError,
)
from tests.core.damage import TABLE, V6_TABLE

# -- the table's folder and hoodie.properties ------------------------------------------------------


def test_missing_hoodie_folder(tmp_path: Path) -> None:
    with pytest.raises(HudiTableNotFoundError, match=r"\.hoodie"):
        HudiTableBuilder.from_base_uri(str(tmp_path)).build()


def test_missing_base_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(HudiTableNotFoundError, match=str(missing)):
        hudi_ray.HudiTable(str(missing))


def test_missing_properties(copy_of) -> None:
    path = copy_of(TABLE)
    (path / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(HudiTableNotFoundError, match=r"hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_properties_backup_is_used_when_properties_missing(copy_of) -> None:
    path = copy_of(TABLE)
    props = path / ".hoodie" / "hoodie.properties"
    props.rename(path / ".hoodie" / "hoodie.properties.backup")
    table = HudiTableBuilder.from_base_uri(str(path)).build()
    assert table.table_name == "v9_txns_cow_simple_meta"


def test_corrupt_properties(copy_of) -> None:
    path = copy_of(TABLE)
    (path / ".hoodie" / "hoodie.properties").write_bytes(b"\x00\xff\xfe garbage \x00")
    with pytest.raises(HudiCorruptFileError, match=r"hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_properties_without_required_keys(copy_of) -> None:
    path = copy_of(TABLE)
    (path / ".hoodie" / "hoodie.properties").write_text("hoodie.table.version=9\n")
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.name.*hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_properties_with_bad_value(copy_of) -> None:
    path = copy_of(TABLE)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "\nhoodie.table.type=SOMETHING_ELSE\n")
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.type.*SOMETHING_ELSE"):
        HudiTableBuilder.from_base_uri(str(path)).build()


# -- table version ---------------------------------------------------------------------------------


def _edit_properties(path: Path, old: str, new: str) -> Path:
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    assert old in text
    props.write_text(text.replace(old, new))
    return props


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("hoodie.table.version=9\n", ""),
        # One flipped bit in the key ("r" 0x72 -> "v" 0x76) hides the version.
        ("hoodie.table.version=9", "hoodie.table.vevsion=9"),
    ],
)
def test_table_version_missing(copy_of, old: str, new: str) -> None:
    path = copy_of(TABLE)
    _edit_properties(path, old, new)
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.version.*hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_table_version_value_with_a_flipped_bit(copy_of) -> None:
    path = copy_of(TABLE)
    # "9" is 0x39; one bit away is "=" (0x3d) and "1" (0x31).
    for bad in ("=", "1"):
        _edit_properties(path, "hoodie.table.version=", f"hoodie.table.version={bad}")
        with pytest.raises(HudiConfigError, match=rf"hoodie\.table\.version.*{bad}"):
            HudiTableBuilder.from_base_uri(str(path)).build()
        _edit_properties(path, f"hoodie.table.version={bad}", "hoodie.table.version=")


def test_table_version_contradicts_layout_property(copy_of) -> None:
    path = copy_of(TABLE)
    _edit_properties(path, "hoodie.table.version=9", "hoodie.table.version=6")
    with pytest.raises(HudiConfigError, match=r"hoodie\.table\.version=6.*hoodie\.timeline\.layout\.version=1"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_table_version_contradicts_timeline_folder(copy_of) -> None:
    path = copy_of(TABLE)
    props = _edit_properties(path, "hoodie.table.version=9", "hoodie.table.version=6")
    _edit_properties(path, "hoodie.timeline.layout.version=2", "hoodie.timeline.layout.version=1")
    with pytest.raises(HudiTimelineError, match=rf"{props.name}.*timeline"):
        HudiTableBuilder.from_base_uri(str(path)).build()


def test_old_table_version_claiming_new_layout(copy_of) -> None:
    path = copy_of(V6_TABLE)
    _edit_properties(path, "hoodie.table.version=6", "hoodie.table.version=8")
    _edit_properties(path, "hoodie.timeline.layout.version=1", "hoodie.timeline.layout.version=2")
    (path / ".hoodie" / "timeline").mkdir()
    with pytest.raises(HudiTimelineError, match=r"hoodie\.properties"):
        HudiTableBuilder.from_base_uri(str(path)).build()


# -- table options ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "enabled"), [(None, True), ("true", True), ("false", False), ("FALSE", False)])
def test_metadata_table_enabled_config(value: str | None, enabled: bool) -> None:
    from hudi_ray.core.config import TableConfig

    options = {} if value is None else {"hoodie.metadata.enable": value}
    assert TableConfig(options).metadata_table_enabled is enabled


def test_metadata_enable_must_be_boolean(table_path) -> None:
    builder = HudiTableBuilder.from_base_uri(str(table_path(TABLE))).with_hudi_option("hoodie.metadata.enable", "maybe")
    with pytest.raises(HudiConfigError, match=r"hoodie\.metadata\.enable .*'maybe'"):
        builder.build()


def test_unknown_hoodie_key_warns_once_with_closest_key(table_path) -> None:
    path = str(table_path(TABLE))
    key = "hoodie.metadata.enabel"
    with pytest.warns(UserWarning, match=r"hoodie\.metadata\.enabel.*did you mean 'hoodie\.metadata\.enable'"):
        HudiTableBuilder.from_base_uri(path).with_hudi_option(key, "false").build()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HudiTableBuilder.from_base_uri(path).with_hudi_option(key, "false").build()
        HudiReadOptions(hudi_options={key: "x"})
    with pytest.warns(UserWarning, match=r"hoodie\.read\.as\.of\.timestamps.*'hoodie\.read\.as\.of\.timestamp'"):
        HudiReadOptions().with_hudi_option("hoodie.read.as.of.timestamps", "1")
