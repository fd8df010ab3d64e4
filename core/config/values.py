"""Integer option values, checked by one rule wherever an option or argument takes a count."""

from __future__ import annotations

import numbers

from hudi_ray.core.exceptions import HudiConfigError


def _integer(value: object, strings: bool) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        # NumPy's integers register as Integral; its bool_ does not, so it stays out with bool.
        return int(value)
    if not strings:
        return None
    try:
        # Options come as text (Spark, hoodie.* keys): their text is the value.
        # A NumPy bool_ reads "True" or "False", so it is no integer here either.
        return int(str(value).strip())
    except ValueError:
        return None


def int_option(value: object, name: str, *, minimum: int, strings: bool = True, where: str = "") -> int:
    """``value`` as an int of at least ``minimum``, or ``HudiConfigError`` naming ``name``.

    Integers (NumPy's too) are taken; with ``strings``, so is any other value
    whose text is an integer (options arrive as text). Booleans never are,
    NumPy's included, though Python counts them as integers. ``where`` ends
    the message (e.g. which table was read). Hudi config keys (``hoodie.*``)
    are reported in hudi-rs's words, other names as the argument they are.
    """
    number = _integer(value, strings)
    bound = "> 0" if minimum == 1 else f">= {minimum}"
    if name.startswith("hoodie."):
        if number is None:
            raise HudiConfigError(f"Failed to parse {value!r} for config {name}: not an integer{where}")
        if number < minimum:
            raise HudiConfigError(f"Config {name} must be {bound}, got {number}{where}")
        return number
    if number is None or number < minimum:
        raise HudiConfigError(f"{name} must be an integer {bound}, got {value!r}{where}")
    return number
