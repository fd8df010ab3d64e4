"""Whether the columns a read names exist: one check, one family of errors."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from hudi_ray.core.exceptions import HudiFilterError, HudiSchemaError


def check_columns(names: Iterable[str], known: Collection[str], where: str, *, filters: bool = False) -> None:
    """Raise naming the ``names`` that are not in ``known`` (the columns of ``where``).

    Unknown fields of filters (``filters``) raise ``HudiFilterError``, other
    unknown columns ``HudiSchemaError``; a ``HudiFilterError`` is a
    ``HudiSchemaError`` too, so one ``except`` catches every unknown column.
    """
    have = known if isinstance(known, (set, frozenset)) else set(known)
    unknown = [n for n in dict.fromkeys(names) if n not in have]
    if not unknown:
        return
    if filters:
        what = f"Filter field {unknown[0]!r}" if len(unknown) == 1 else f"Filter fields {unknown}"
        raise HudiFilterError(f"{what} not found in the schema of {where}")
    raise HudiSchemaError(f"Projected columns {unknown} not found in the schema of {where}")
