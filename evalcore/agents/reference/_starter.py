"""The reference agent's starter tools: vetted functions with docstrings, type hints and tests.

Each tool is a plain, self-contained function (it imports what it needs inside its body), so
its source text, as stored in the registry, runs on its own in the sandbox exactly as it runs
in-process. Each tool's tests are a ``test_<name>()`` function of plain ``assert`` statements.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


def percentage(percent: float, value: float) -> float:
    """Percentage: take or compute x percent of y, the percentage of a number or value.

    Calculates what a given percent of a value is, e.g. 15% of 80 is 12.

    Args:
        percent: The percentage, e.g. 15 for 15%.
        value: The number to take the percentage of.

    Returns:
        ``percent * value / 100`` as a float.

    Raises:
        ValueError: If an argument is not a finite number.
    """
    import math

    for label, x in (("percent", percent), ("value", value)):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise ValueError(f"percentage: {label} must be a finite number, got {x!r}")
    return float(percent * value / 100)


def reverse_string(text: str) -> str:
    """Reverse a string, word or text: write its characters backwards in reverse order.

    For example reverse 'hello' is 'olleh'.

    Args:
        text: The text to reverse.

    Returns:
        The characters of ``text`` in reverse order.

    Raises:
        ValueError: If ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise ValueError(f"reverse_string: text must be a string, got {type(text).__name__}")
    return text[::-1]


def factorial(n: int) -> int:
    """Factorial: compute the factorial n! of a non-negative whole number.

    Multiplies all whole numbers from 1 to n, e.g. the factorial of 5 is 120.

    Args:
        n: A whole number between 0 and 1000 (an integral float such as 5.0 is accepted).

    Returns:
        ``n!`` as an int.

    Raises:
        ValueError: If ``n`` is negative, not a whole number, or larger than 1000.
    """
    import math

    if isinstance(n, bool) or not isinstance(n, (int, float)):
        raise ValueError(f"factorial: n must be a whole number, got {n!r}")
    if isinstance(n, float):  # a whole float (5.0) is accepted at run time
        whole = float(n)
        if not math.isfinite(whole) or not whole.is_integer():
            raise ValueError(f"factorial is only defined for whole numbers, got {n!r}")
        n = int(whole)
    if n < 0:
        raise ValueError(f"factorial is not defined for negative numbers, got {n}")
    if n > 1000:
        raise ValueError(f"factorial: n must be at most 1000, got {n}")
    return math.factorial(n)


def convert_temperature(value: float, from_unit: str, to_unit: str) -> float:
    """Temperature conversion: convert degrees between Celsius, Fahrenheit and Kelvin.

    Converts a temperature from one unit to another, e.g. 100 C is 212 F.

    Args:
        value: The temperature in ``from_unit``.
        from_unit: "C", "F" or "K" (or "celsius", "fahrenheit", "kelvin").
        to_unit: "C", "F" or "K" (or "celsius", "fahrenheit", "kelvin").

    Returns:
        The temperature in ``to_unit``, rounded to 10 decimal places.

    Raises:
        ValueError: On an unknown unit, a value that is not a finite number, or a
            temperature below absolute zero.
    """
    import math

    names = {"c": "C", "celsius": "C", "centigrade": "C", "f": "F", "fahrenheit": "F", "k": "K", "kelvin": "K"}
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"convert_temperature: value must be a finite number, got {value!r}")
    units = []
    for label, unit in (("from_unit", from_unit), ("to_unit", to_unit)):
        key = str(unit).strip().lower().lstrip("°").strip()
        if key not in names:
            raise ValueError(f"convert_temperature: unknown {label} {unit!r} (use C, F or K)")
        units.append(names[key])
    src, dst = units
    kelvin = {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": float(value)}[src]
    if kelvin < -1e-9:
        raise ValueError(f"convert_temperature: {value} {src} is below absolute zero")
    out = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[dst]
    if src == dst:
        out = float(value)
    return round(out, 10)


def test_percentage() -> None:
    assert percentage(15, 80) == 12.0
    assert percentage(50, 10) == 5.0
    assert abs(percentage(12.5, 64) - 8.0) < 1e-12
    assert percentage(0, 123) == 0.0
    try:
        percentage("a", 3)  # type: ignore[arg-type]  # a wrong type on purpose: the check under test
    except ValueError:
        pass
    else:
        raise AssertionError("non-number accepted")


def test_reverse_string() -> None:
    assert reverse_string("hello") == "olleh"
    assert reverse_string("") == ""
    assert reverse_string("ab c") == "c ba"
    try:
        reverse_string(5)  # type: ignore[arg-type]  # a wrong type on purpose: the check under test
    except ValueError:
        pass
    else:
        raise AssertionError("non-string accepted")


def test_factorial() -> None:
    assert factorial(0) == 1
    assert factorial(5) == 120
    assert factorial(10) == 3628800
    assert factorial(5.0) == 120  # type: ignore[arg-type]  # a whole float, accepted at run time
    for bad in (-5, 2.5, 1001):
        try:
            factorial(bad)  # type: ignore[arg-type]  # wrong values on purpose: the checks under test
        except ValueError:
            pass
        else:
            raise AssertionError(f"factorial({bad!r}) did not raise")


def test_convert_temperature() -> None:
    assert convert_temperature(100, "C", "F") == 212.0
    assert convert_temperature(32, "fahrenheit", "celsius") == 0.0
    assert convert_temperature(0, "C", "K") == 273.15
    assert convert_temperature(98.6, "F", "C") == 37.0
    assert convert_temperature(300, "K", "K") == 300.0
    for bad in ((-300, "C", "F"), (1, "X", "C")):
        try:
            convert_temperature(*bad)
        except ValueError:
            pass
        else:
            raise AssertionError(f"convert_temperature{bad!r} did not raise")


@dataclass(frozen=True)
class StarterTool:
    """A vetted starter tool: the function, its source and its tests' source."""

    name: str
    function: Callable[..., Any]
    code: str
    tests: str


def _source(fn: Callable[..., Any]) -> str:
    return inspect.getsource(fn).strip() + "\n"


STARTER_TOOLS: dict[str, StarterTool] = {
    fn.__name__: StarterTool(fn.__name__, fn, _source(fn), _source(test))
    for fn, test in (
        (percentage, test_percentage),
        (reverse_string, test_reverse_string),
        (factorial, test_factorial),
        (convert_temperature, test_convert_temperature),
    )
}
"""The starter tools by name (every fresh registry holds exactly these)."""
