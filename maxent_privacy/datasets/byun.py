"""Byun, Li, Bertino, Li and Sohn's worked example (Figures 1-4 of their 2008 paper).

>>> from maxent_privacy.datasets.byun import byun2008_tables
>>> tables = byun2008_tables()
>>> tables["figure3"].shape, tables["figure4"].n_groups
((7, 4), 3)
"""

from __future__ import annotations

import pandas as pd

from ..releases.generalized import Generalized

__all__ = ["byun2008_tables"]


def byun2008_tables() -> dict:
    """Figures 1-4 of Byun et al., "Privacy-preserving incremental data dissemination".

    A hospital publishes a (2, 2)-anonymous version of its patient table; then three
    patients (Alice, Hank, Sal) are admitted and it publishes a new (2, 2)-anonymous
    version of the grown table.

    Returns a dict of:

    * ``"figure1"``: the patient table (columns ``name, age, gender, diagnosis``), 4 rows;
    * ``"figure3"``: the updated patient table, 7 rows (Figure 1's and the three new);
    * ``"figure2"``, ``"figure4"``: the anonymous tables as :class:`Generalized`
      releases (columns ``age``, ``gender``, ``diagnosis``, ``group``), rows in the
      paper's order, ``"Person"`` meaning any gender, groups numbered 1, 2, ... from the
      top;
    * ``"releases"``: ``(figure2, figure4)``, oldest first;
    * ``"populations"``: the attacker's population tables for them, Figure 1's and
      Figure 3's ``name, age, gender`` columns.

    Values are exactly as printed. (Example 2 of the paper says Bob's new class holds
    "alzheimer or heart disease"; Figure 4 prints Hepatitis, which is used here.)

    >>> byun2008_tables()["figure4"].classes()["diagnosis"].tolist()
    [['Asthma', 'Cancer', 'Flu'], ['Alzheimer', 'Hepatitis'], ['Diabetes', 'Flu']]
    """
    columns = ["name", "age", "gender", "diagnosis"]
    figure1 = pd.DataFrame(
        [
            ("Tom", 21, "Male", "Asthma"),
            ("Mike", 23, "Male", "Flu"),
            ("Bob", 52, "Male", "Alzheimer"),
            ("Eve", 57, "Female", "Diabetes"),
        ],
        columns=columns,
    )
    figure3 = pd.concat(
        [
            figure1,
            pd.DataFrame(
                [
                    ("Alice", 27, "Female", "Cancer"),
                    ("Hank", 53, "Male", "Hepatitis"),
                    ("Sal", 59, "Female", "Flu"),
                ],
                columns=columns,
            ),
        ],
        ignore_index=True,
    )
    release_columns = ["age", "gender", "diagnosis", "group"]
    figure2 = pd.DataFrame(
        [
            ("[21 - 25]", "Male", "Asthma", 1),
            ("[21 - 25]", "Male", "Flu", 1),
            ("[50 - 60]", "Person", "Alzheimer", 2),
            ("[50 - 60]", "Person", "Diabetes", 2),
        ],
        columns=release_columns,
    )
    figure4 = pd.DataFrame(
        [
            ("[21 - 30]", "Person", "Asthma", 1),
            ("[21 - 30]", "Person", "Flu", 1),
            ("[21 - 30]", "Person", "Cancer", 1),
            ("[51 - 55]", "Male", "Alzheimer", 2),
            ("[51 - 55]", "Male", "Hepatitis", 2),
            ("[56 - 60]", "Female", "Flu", 3),
            ("[56 - 60]", "Female", "Diabetes", 3),
        ],
        columns=release_columns,
    )
    anys = ("*", "Person")
    release2 = Generalized(figure2, ["age", "gender"], "diagnosis", "group", any_values=anys)
    release4 = Generalized(figure4, ["age", "gender"], "diagnosis", "group", any_values=anys)
    return {
        "figure1": figure1,
        "figure2": release2,
        "figure3": figure3,
        "figure4": release4,
        "releases": (release2, release4),
        "populations": (
            figure1[["name", "age", "gender"]].copy(),
            figure3[["name", "age", "gender"]].copy(),
        ),
    }
