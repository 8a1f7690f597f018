"""Report: what a person reads, from a solved model.

Tables, words and pictures, never new numbers: everything shown is computed by the model,
the solver, the bounds or the metrics. A new way of showing results goes here.

Modules:

- ``risk``: the risk table (one row per person, worst first) and its summary
- ``html``: the self-contained HTML report and its template (``templates/``)
- ``plots``: matplotlib figures (posteriors, risk, privacy curves)
- ``labels``: row labels of figures that tell the rows apart (many attributes)
- ``statements``: the stated facts behind the model's facts (a vague one is two facts)
- ``safety``: data made inert (spreadsheet-safe CSV cells, plain-text figure labels),
  re-exported from the base module :mod:`maxent_privacy.safety`
- ``likeliest``: each row's likeliest value, read sparsely off the cells; the rounding rule
- ``row_bounds``: the risk table's intervals (bounds of each row's value only; auto/all/none)
- ``identity``: identity (re-identification) risk per row: prosecutor, journalist; k, l
- ``nonsensitive``: the values declared not sensitive, checked against the release's
- ``facts_impact``: per fact, people it puts at risk; pooled releases, each one alone
- ``act``: what a publisher needs to act, for the page (ties, worst case, identity, facts,
  what to do: the groups most exposed)
- ``adversary_scale``: ``report --adversary learned``: people at risk per adversary
  (maximum entropy, learned, worst case)
- ``interval_plot``: the riskiest people's intervals as bars with the maxent dot
- ``tables``: the page of published counts tables (suppressed cells recovered, the
  microdata pinned, the maximum-entropy table's certificate) and their audit frame
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
