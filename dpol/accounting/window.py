"""Window-DP bookkeeping for the window tree mechanism (WDP, Definition 6).

**Window DP is strictly weaker than DP.** Element i is protected, at (epsilon, delta),
only in the joint release of the outputs at times i .. i+W-1 (Definition 6, off-by-one
fixed: docs/errata.md, WDP-4); under the window tree later outputs contain it through an
exact sum. **Expired elements are not protected.** Only W >= T gives ordinary DP.

Layout (WDP Section III; docs/errata.md, WDP-8): W runs as ``W' = 2**ceil(log2 W)``
(WDP-4), and an element lies in ``log2(W') + 1`` noisy nodes (``floor(log2 horizon) + 1``
when ``W' >= horizon``).

Examples
--------
>>> effective_window(5), window_levels(5), window_levels(1024, horizon=100)
(8, 4, 7)
>>> list(protected_releases(3, window=4))
[3, 4, 5, 6]
"""

from __future__ import annotations

from dpol._validation import check_int
from dpol.accounting.guarantee import PrivacyGuarantee

__all__ = ["effective_window", "protected_releases", "window_guarantee", "window_levels"]


def effective_window(window: int) -> int:
    """The power-of-two window ``W' = 2**ceil(log2 W)`` the window tree actually runs with.

    docs/errata.md, WDP-4. ``W' >= W`` and ``W' < 2 W``; ``W' == W`` for powers of 2.

    Examples
    --------
    >>> [effective_window(w) for w in (1, 2, 3, 16, 17)]
    [1, 2, 4, 16, 32]
    """
    window = check_int("window", window, low=1)
    return 1 << (window - 1).bit_length()


def window_levels(window: int, horizon: int | None = None) -> int:
    """Number of noisy nodes one element can lie in: the per-element composition count m.

    ``m = log2(W') + 1``, ``W' = effective_window(window)`` (docs/errata.md, WDP-8), capped
    at ``floor(log2 horizon) + 1`` when ``W' >= horizon`` (then the binary tree).

    Examples
    --------
    >>> window_levels(16), window_levels(16, horizon=1000), window_levels(64, horizon=64)
    (5, 5, 7)
    """
    w = effective_window(window)
    levels = w.bit_length()  # log2(W') + 1 for a power of two
    if horizon is not None:
        horizon = check_int("horizon", horizon, low=1)
        if w >= horizon:
            levels = min(levels, horizon.bit_length())  # floor(log2 horizon) + 1
    return levels


def protected_releases(i: int, window: int, *, horizon: int | None = None) -> range:
    """Release times (1-based) at which element ``i`` is protected: ``i .. i+W-1`` (WDP-4).

    The release at time t is the one published right after element t is inserted. Releases
    before i do not involve element i; releases at ``i + W`` or later are **not** protected
    (the element enters them exactly). With ``horizon`` the range is cut at the last release.

    Examples
    --------
    >>> list(protected_releases(1, window=3)), list(protected_releases(9, 4, horizon=10))
    ([1, 2, 3], [9, 10])
    """
    i = check_int("i", i, low=1)
    window = check_int("window", window, low=1)
    stop = i + window
    if horizon is not None:
        horizon = check_int("horizon", horizon, low=1)
        stop = max(i, min(stop, horizon + 1))
    return range(i, stop)


def window_guarantee(
    epsilon: float, delta: float, window: int, neighbouring: str = "replace_one"
) -> PrivacyGuarantee:
    """The window (epsilon, delta)-DP guarantee with window ``window`` (WDP, Definition 6).

    ``window`` is the window the guarantee states (an element is protected in the releases
    ``i .. i+window-1``); a mechanism run with ``effective_window(window)`` satisfies it.
    The returned :class:`PrivacyGuarantee` carries ``window``, which marks it as window DP:
    strictly weaker than DP, expired elements unprotected.

    Examples
    --------
    >>> g = window_guarantee(0.5, 0.0, 8, "add_remove")
    >>> g.window, g.neighbouring, g.is_pure
    (8, 'add_remove', True)
    """
    window = check_int("window", window, low=1)
    return PrivacyGuarantee(epsilon, delta, neighbouring=neighbouring, window=window)
