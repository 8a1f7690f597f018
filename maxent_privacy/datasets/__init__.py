"""Data sets: the papers' worked examples and the real UCI Adult data (shipped in ``_data``).

Modules:

- ``papers``: Du et al.'s Figure 1, Wang et al.'s Figure 1, Du's Adult sample, the Adult data
- ``byun``: Byun et al.'s Figures 1-4

>>> from maxent_privacy import datasets
>>> datasets.du2008_figure1().shape
(10, 5)
"""

from .papers import (
    ADULT_COLUMNS,
    ADULT_QI,
    ADULT_SA,
    byun2008_tables,
    du2008_adult,
    du2008_figure1,
    load_adult,
    wang2008_figure1,
)

__all__ = [
    "ADULT_COLUMNS",
    "ADULT_QI",
    "ADULT_SA",
    "byun2008_tables",
    "du2008_adult",
    "du2008_figure1",
    "load_adult",
    "wang2008_figure1",
]
