"""Filter expressions: ``(field, operator, value)`` string tuples, validated eagerly."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from hudi_ray.core.exceptions import HudiFilterError


class ExprOperator(str, Enum):
    Eq = "="
    Ne = "!="
    Lt = "<"
    Lte = "<="
    Gt = ">"
    Gte = ">="
    In = "IN"
    NotIn = "NOT IN"

    @classmethod
    def parse(cls, text: str) -> ExprOperator:
        norm = " ".join(str(text).strip().upper().split())
        norm = {"==": "=", "<>": "!="}.get(norm, norm)
        for op in cls:
            if op.value == norm:
                return op
        raise HudiFilterError(f"Unsupported operator: {text!r} (expected one of {', '.join(o.value for o in cls)})")

    @property
    def is_list(self) -> bool:
        return self in (ExprOperator.In, ExprOperator.NotIn)

    def negated(self) -> ExprOperator:
        return _NEGATIONS[self]


_NEGATIONS = {
    ExprOperator.Eq: ExprOperator.Ne,
    ExprOperator.Ne: ExprOperator.Eq,
    ExprOperator.Lt: ExprOperator.Gte,
    ExprOperator.Gte: ExprOperator.Lt,
    ExprOperator.Gt: ExprOperator.Lte,
    ExprOperator.Lte: ExprOperator.Gt,
    ExprOperator.In: ExprOperator.NotIn,
    ExprOperator.NotIn: ExprOperator.In,
}


def split_values(text: str) -> list[str]:
    """Split on unescaped commas and trim; ``\\,`` is a comma, ``\\\\`` a backslash."""
    out: list[str] = []
    cur: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in ",\\":
            cur.append(text[i + 1])
            i += 2
            continue
        if c == ",":
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    out.append("".join(cur).strip())
    return [v for v in out if v != ""]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,")


@dataclass(frozen=True)
class Filter:
    """One column predicate; list operators hold one or more values."""

    field: str
    operator: ExprOperator
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.field, str) or not self.field.strip():
            raise HudiFilterError(f"Filter field must be a non-empty column name, got {self.field!r}")
        if self.operator.is_list:
            if not self.values:
                raise HudiFilterError(
                    f"{self.operator.value} operator requires at least one value for field {self.field!r}"
                )
        elif len(self.values) != 1:
            raise HudiFilterError(
                f"{self.operator.value} operator takes exactly one value for field {self.field!r}, "
                f"got {len(self.values)}"
            )

    @classmethod
    def new(cls, field: str, operator: str | ExprOperator, values: str | Sequence[str]) -> Filter:
        op = operator if isinstance(operator, ExprOperator) else ExprOperator.parse(operator)
        if isinstance(values, str):
            vals = tuple(split_values(values)) if op.is_list else (values.strip(),)
        else:
            vals = tuple(str(v) for v in values)
        return cls(field.strip() if isinstance(field, str) else field, op, vals)

    @classmethod
    def parse(cls, item: Filter | Sequence[str]) -> Filter:
        if isinstance(item, Filter):
            return item
        if isinstance(item, (str, bytes)) or len(item) != 3:
            raise HudiFilterError(f"A filter is a (field, operator, value) tuple, got {item!r}")
        field, op, value = item
        if not isinstance(value, str):
            raise HudiFilterError(f"Filter value for field {field!r} must be a string, got {value!r}")
        return cls.new(field, op, value)

    def negate(self) -> Filter:
        return Filter(self.field, self.operator.negated(), self.values)

    def to_tuple(self) -> tuple[str, str, str]:
        value = ",".join(_escape(v) for v in self.values) if self.operator.is_list else self.values[0]
        return (self.field, self.operator.value, value)

    def __str__(self) -> str:
        f, op, v = self.to_tuple()
        return f"{f} {op} {v}"


def from_str_tuples(tuples: Iterable[Filter | Sequence[str]]) -> list[Filter]:
    return [Filter.parse(t) for t in tuples]


class Column:
    """``col("city").eq("sf")`` style builder."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _one(self, op: ExprOperator, value: object) -> Filter:
        return Filter(self.name, op, (str(value),))

    def eq(self, value: object) -> Filter:
        return self._one(ExprOperator.Eq, value)

    def ne(self, value: object) -> Filter:
        return self._one(ExprOperator.Ne, value)

    def lt(self, value: object) -> Filter:
        return self._one(ExprOperator.Lt, value)

    def lte(self, value: object) -> Filter:
        return self._one(ExprOperator.Lte, value)

    def gt(self, value: object) -> Filter:
        return self._one(ExprOperator.Gt, value)

    def gte(self, value: object) -> Filter:
        return self._one(ExprOperator.Gte, value)

    def in_list(self, values: Iterable[object]) -> Filter:
        return Filter(self.name, ExprOperator.In, tuple(str(v) for v in values))

    def not_in_list(self, values: Iterable[object]) -> Filter:
        return Filter(self.name, ExprOperator.NotIn, tuple(str(v) for v in values))


def col(name: str) -> Column:
    return Column(name)
