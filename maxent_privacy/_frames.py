"""pandas helpers that behave the same on pandas 2.x and 3.x.

A one-column key is a flat ``Index`` when it comes from ``groupby([col])`` and a one-level
``MultiIndex`` when it comes from ``MultiIndex.from_frame``. pandas 3 aligns the two in
``reindex``; pandas 2 matches nothing (every row NaN). :func:`reindex_keys` aligns them on
both.

>>> import pandas as pd
>>> counts = pd.Series([3, 4], index=pd.Index(["F", "M"], name="sex"))
>>> keys = pd.MultiIndex.from_frame(pd.DataFrame({"sex": ["M", "F", "X"]}))
>>> reindex_keys(counts, keys).tolist()
[4.0, 3.0, nan]
"""

from __future__ import annotations

import pandas as pd

__all__ = ["flat_keys", "reindex_keys"]


def flat_keys(index: pd.Index) -> pd.Index:
    """``index`` itself, or its only level when it is a one-level ``MultiIndex``."""
    if isinstance(index, pd.MultiIndex) and index.nlevels == 1:
        return index.get_level_values(0)
    return index


def reindex_keys(obj, keys: pd.Index, **kwargs):
    """``obj.reindex(keys, **kwargs)`` (rows), matching a one-level ``MultiIndex`` with a
    flat index either way round; the result's index is ``keys`` itself."""
    if not isinstance(keys, pd.Index):
        keys = pd.Index(keys)
    if obj.index.nlevels == 1 and keys.nlevels == 1:
        flat = obj.set_axis(flat_keys(obj.index), axis=0)
        return flat.reindex(flat_keys(keys), **kwargs).set_axis(keys, axis=0)
    return obj.reindex(keys, **kwargs)
