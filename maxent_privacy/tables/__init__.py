"""Tables: published counts tables without a population, and the microdata they allow.

``MaxEntModel([Tabulated, ...])`` with no populations is a
:class:`~.model.TableModel`: the unknown is the microdata contingency table (records per
combination of the attributes the tables name). Its maximum-entropy estimate
(``solve().table()``), its LP and integral bounds per combination or per published cell
(``bounds(by="cell", exact=..., table=...)``: the audit of suppressed cells) and the
reconstruction summary (``reconstruction()``: records in every consistent table, cells
pinned exactly, population uniques rebuilt). See ``docs/tables.md``.

Modules:

- ``system``: the domains, the combinations and each table's rows (:func:`build_system`)
- ``rows``: every row stacked (published, total, statistics, facts) and the explanation of
  inconsistent tables
- ``scaling``: iterative scaling (IPF with intervals) for tables of counts
- ``zeros``: combinations the tables force to 0 together (no published 0 names them),
  found by an LP and proved from its duals
- ``dual``: L-BFGS-B on the dual, for large tables of intervals or statistics
- ``solve``: the maximum-entropy table (scaling, L-BFGS-B, Clarabel or Newton's method),
  with our certificate
- ``bounds``: LP and integral bounds of counts, with time limits marked
- ``model``: :class:`TableModel`, what users hold: knowledge, solve, bounds, summary
"""

from .model import Share, TableModel
from .solve import TableResult
from .system import TableSystem, build_system

__all__ = ["Share", "TableModel", "TableResult", "TableSystem", "build_system"]
