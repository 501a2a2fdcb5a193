"""What the accounting tests share: a printed number's own rounding interval."""

from __future__ import annotations


def printed(value: float, text: str) -> bool:
    """True when ``value`` rounds to the printed ``text`` (within half a unit of its last
    digit, plus 1e-9 for float noise): a printed number's own rounding interval."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(value - float(text)) <= 0.5 * 10.0**-decimals + 1e-9
