"""Report: what a person reads, from a solved model.

Tables, words and pictures, never new numbers: everything shown is computed by the model,
the solver, the bounds or the metrics. A new way of showing results goes here.

Modules:

- ``risk``: the risk table (one row per person, worst first) and its summary
- ``html``: the self-contained HTML report and its template (``templates/``)
- ``plots``: matplotlib figures (posteriors, risk, privacy curves)
"""

from .html import fact_in_words, render_report, write_report
from .risk import per_person, risk_summary, risk_table, write_risk_table

__all__ = [
    "fact_in_words",
    "per_person",
    "render_report",
    "risk_summary",
    "risk_table",
    "write_report",
    "write_risk_table",
]
