"""Data made inert, re-exported: the guards live in :mod:`maxent_privacy.safety`, a base
module (like ``files`` and ``errors``), so that every wing that writes a cell or draws a
label (the adversaries' comparison plot too) imports them without importing the report.

>>> from maxent_privacy.report.safety import neutralize
>>> neutralize("=1+2")
"'=1+2"
"""

from ..safety import FORMULA_START, PLAIN, neutralize, plain_label, spreadsheet_safe

__all__ = ["FORMULA_START", "PLAIN", "neutralize", "plain_label", "spreadsheet_safe"]
