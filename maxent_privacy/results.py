"""Results of a solve: posteriors as DataFrames, duals, the certificate, a summary.

>>> from maxent_privacy import MaxEntModel, Bucketized, datasets
>>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
...                                sa="disease", group="bucket"))
>>> result = model.solve()
>>> result.posterior().sum(axis=1).round(9).unique().tolist()
[1.0]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from ._validation import check_choice
from .numerics import entropy_terms

__all__ = ["Certificate", "Result"]


@dataclass(frozen=True)
class Certificate:
    """What our own arithmetic says about a solver's answer.

    * ``data_residual``: largest violation of a QI-/SA-invariant, relative to its right
      side (records / max(1, records)); negative cells count as violations too.
    * ``knowledge_residual``: largest violation of a fact, in the fact's own units
      (probability for ``P(...)`` facts).
    * ``entropy``: H(S | Q, B) of the answer, nats per record (Du et al. Eq. (2)).
    * ``dual_bound``: the Lagrange dual at the solver's multipliers, an upper bound on the
      maximum entropy (NaN when a fact is not linear).
    * ``gap``: dual_bound - entropy (>= 0 up to the residuals).
    """

    data_residual: float
    knowledge_residual: float
    entropy: float
    dual_bound: float
    gap: float
    tolerance: float
    n_records: int

    @property
    def primal_residual(self) -> float:
        """The larger of the data and knowledge residuals."""
        return max(self.data_residual, self.knowledge_residual)

    @property
    def ok(self) -> bool:
        """True when the residual is within tolerance."""
        return self.primal_residual <= self.tolerance

    def __str__(self) -> str:
        return (
            f"residual {self.primal_residual:.1e} (data {self.data_residual:.1e}, knowledge "
            f"{self.knowledge_residual:.1e}), entropy {self.entropy:.6f} nats/record, "
            f"dual bound {self.dual_bound:.6f}, gap {self.gap:.1e}"
        )


def _read_only(array) -> np.ndarray:
    """A view of ``array`` that cannot be written through."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


class Result:
    """The maximum-entropy estimate of a model, checked by our certificate.

    Attributes
    ----------
    x : ndarray
        Value-cell values (expected record counts), aligned with the value cells of
        ``structure.cells`` (pooled releases: placement cells left out).
    table : ndarray
        The estimate on every cell of the model, placement cells included (the table
        that :meth:`bounds` takes as one it has already seen).
    structure : Structure
        The model's structure this answer refers to (:mod:`maxent_privacy.releases.structure`).
    status : str
        ``"optimal"``, or ``"optimal_inaccurate"`` when the solver said so or the duality
        gap is large (the residual check passed in both cases).
    certificate : Certificate
    duals : Series
        One value per fact (``name`` or ``name[i]`` for vector facts): the rate of change
        of the maximum entropy H (nats per record) when the fact is relaxed by one unit.
        For ``expr == p`` and ``expr <= p`` that is dH*/dp; for ``expr >= p`` it is
        -dH*/dp. Inequality duals are >= 0 and 0 when the fact is slack. NaN for a fact
        whose cells the presolve fixed entirely (its multiplier is not unique; for a
        ``P(...) == 0`` fact the derivative is +inf) and for non-linear facts.
    solver_stats : dict
        Solver, components, closed-form count, times and iterations.
    components : DataFrame
        One row per solved component (and one for all closed-form ones).
    history : DataFrame or None
        For the learned adversary (:func:`maxent_privacy.definetti`): one row per round
        (log-likelihood, change, seconds); None for ``model.solve()``.
    """

    def __init__(
        self,
        model,
        x,
        status,
        certificate,
        duals,
        solver_stats,
        components,
        fact_residuals,
        fixed,
        violations=None,
    ):
        self.model = model
        # the model may change later (persons added): keep what this answer refers to
        self.structure = structure = model.structure
        #: the model's revision this answer was solved from (see :meth:`check_current`)
        self._solved_from = (structure, tuple(getattr(model, "facts", ())))
        z = structure.value_cell  # placements (pooled releases) are not posteriors
        self._person_names = [p.name for p in model.persons]
        self._person_class = structure.person_class
        self._cls = structure.cell_class[z]
        self._class_n = structure.class_n
        #: value cells of counterfeit records (phantom classes): no one's, never a row
        self._phantom = structure.phantom_cell[z]
        self.x = x[z]
        self.table = x
        self.status = status
        self.certificate = certificate
        self.duals = duals
        self.solver_stats = solver_stats
        self.components = components
        self.fact_residuals = pd.Series(fact_residuals, name="residual", dtype=float)
        self.fixed = fixed
        #: soft facts: how far each is off (0 when it holds), in the fact's units
        self.violations = pd.Series(violations or {}, name="violation", dtype=float)
        #: the rounds of a learned estimate (:func:`maxent_privacy.definetti`); None here
        self.history = None

    @cached_property
    def _cells(self) -> pd.DataFrame:
        """The value cells of ``structure.cells`` (made on first use: millions of rows)."""
        return self.structure.cells[self.structure.value_cell].reset_index(drop=True)

    # ------------------------------------------- read-only views for the report
    @property
    def value_cells(self) -> pd.DataFrame:
        """The value cells of ``structure.cells``, aligned with :attr:`x` (shared, not a
        copy: do not modify; :meth:`cell_table` is a copy with the estimate)."""
        return self._cells

    @property
    def cell_class(self) -> np.ndarray:
        """The record class of each value cell (read-only), aligned with :attr:`x`."""
        return _read_only(self._cls)

    @property
    def class_n(self) -> np.ndarray:
        """The number of records of each record class (read-only)."""
        return _read_only(self._class_n)

    @property
    def phantom(self) -> np.ndarray:
        """True for the value cells of counterfeit records (read-only): no one's, never a
        row of a posterior."""
        return _read_only(self._phantom)

    @property
    def person_names(self) -> tuple:
        """The people singled out with ``model.person`` when this result was solved."""
        return tuple(self._person_names)

    # ------------------------------------------------------------- posteriors
    def cell_table(self) -> pd.DataFrame:
        """``model.cells`` with the estimated count ``x`` and ``P(s | class)`` (value
        cells; with counterfeit records their phantom classes' cells too, ``phantom``
        True)."""
        cells = self._cells.copy()
        cells["x"] = self.x
        cells["p"] = self.x / cells["n"].to_numpy(dtype=float)
        return cells

    def posterior(self, by: str | None = None) -> pd.DataFrame:
        """P(S | QI) as a DataFrame: index = QI values, columns = sensitive values.

        ``by="group"`` gives P(S | QI, group), the index then ends with the group column.
        Rows sum to 1. Rows are real people's: counterfeit records have no QI value.
        """
        m = self.model
        by = check_choice(by, "by", (None, "group"))
        keys = list(m.qi) + ([m.group] if by == "group" else [])
        cells = self._cells[keys + [m.sa]].copy()
        cells["x"] = self.x
        if self._phantom.any():  # counterfeit records have no QI value
            cells = cells[~self._phantom]
        table = cells.groupby(keys + [m.sa], sort=True, observed=True)["x"].sum()
        table = table.unstack(m.sa, fill_value=0.0)
        sizes = self.structure.records_by(keys)
        table = table.div(sizes.reindex(table.index).to_numpy(dtype=float), axis=0)
        columns = sorted(table.columns, key=str)
        table = table[columns]
        if not isinstance(table.index, pd.MultiIndex):
            table.index = pd.MultiIndex.from_arrays([table.index], names=keys)
        table.columns.name = m.sa
        return table

    def person_posterior(self) -> pd.DataFrame:
        """P(S | person): one row per person id (releases with a ``person`` column, pooled
        releases) and per individual singled out with ``model.person`` before the solve.
        It reads only this answer's own snapshot of the model (its structure and people),
        so it stays true after the model changes; someone singled out later is not in it."""
        m = self.model
        real = ~self._phantom  # counterfeit records are no one
        values = sorted(self._cells[m.sa][real].unique().tolist(), key=str)
        frames = []
        if self._person_class is not None:
            cells = pd.DataFrame(
                {"cls": self._cls[real], "s": self._cells[m.sa].to_numpy()[real], "x": self.x[real]}
            )
            by_class = cells.groupby(["cls", "s"])["x"].sum().unstack(fill_value=0.0)
            by_class = by_class.div(self._class_n[by_class.index.to_numpy()], axis=0)
            by_class = by_class.reindex(columns=values, fill_value=0.0)
            pc = self._person_class
            table = by_class.reindex(pc.to_numpy()).set_axis(pc.index, axis=0)
            table.index.name = "person"
            frames.append(table)
        named = [
            n
            for n in self._person_names
            if self._person_class is None or n not in set(map(str, self._person_class.index))
        ]
        if named:
            cells = self._cells[["person", m.sa]].copy()
            cells["x"] = self.x
            cells = cells[cells["person"].isin(named)]
            table = cells.groupby(["person", m.sa], sort=False)["x"].sum().unstack(fill_value=0.0)
            frames.append(table.reindex(index=named, columns=values, fill_value=0.0))
        if not frames:
            return pd.DataFrame(columns=pd.Index(values, name=m.sa), dtype=float)
        out = pd.concat(frames)
        out.columns.name = m.sa
        out.index.name = "person"
        return out

    def person_entropy(self, base: float = 2.0) -> pd.Series:
        """Entropy of each person's posterior (bits by default; ``base=np.e`` for nats)."""
        table = self.person_posterior()
        h = entropy_terms(table.to_numpy(dtype=float), 1.0).sum(axis=1) / np.log(base)
        return pd.Series(h, index=table.index, name="entropy")

    def person_groups(self) -> pd.DataFrame:
        """P(group | person): which bucket holds each singled-out individual."""
        m = self.model
        cells = self._cells[["person", m.group]].copy()
        cells["x"] = self.x
        cells = cells[cells["person"].notna()]
        table = cells.groupby(["person", m.group], sort=False)["x"].sum().unstack(fill_value=0.0)
        return table.reindex(index=self._person_names)

    def posterior_of(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Posterior rows for each row of ``frame`` (matched on the QI columns)."""
        post = self.posterior()
        keys = pd.MultiIndex.from_frame(frame[self.model.qi])
        return post.reindex(keys)

    @property
    def entropy(self) -> float:
        """H(S | Q, B) of the estimate, nats per record."""
        return self.certificate.entropy

    # -------------------------------------------------------------- reports
    def summary(self) -> str:
        """A few lines of text: sizes, solver, status, certificate and duals (of the model
        as it was solved)."""
        st = self.structure
        s = self.solver_stats
        lines = [
            f"Privacy-MaxEnt result: {st.n_records} records, {len(st.classes)} classes, "
            f"{st.n_cells} cells, {len(self._solved_from[1])} facts",  # as solved
            f"solver {s['solver']}: status {self.status}; {s['components']} components "
            f"({s['closed_form']} closed form, {s['solved']} solved), "
            f"{s['fixed_by_presolve']} cells fixed by presolve, "
            f"{s['total_time']:.2f} s",
            f"certificate: {self.certificate}",
        ]
        if len(self.duals):
            lines.append("duals (dH*/d(relaxation), nats/record per unit):")
            for name, v in self.duals.head(20).items():
                lines.append(f"  {name}: {v:.6g}")
            if len(self.duals) > 20:
                lines.append(f"  ... ({len(self.duals) - 20} more)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html

        s = self.solver_stats
        c = self.certificate
        rows = [
            (
                "records / classes / cells",
                f"{self.structure.n_records} / {len(self.structure.classes)} / "
                f"{self.structure.n_cells}",
            ),
            ("facts", str(len(self._solved_from[1]))),
            ("solver", f"{s['solver']} ({self.status})"),
            ("components", f"{s['components']} ({s['closed_form']} closed form)"),
            ("entropy H(S|Q,B)", f"{c.entropy:.6f} nats/record"),
            ("dual bound / gap", f"{c.dual_bound:.6f} / {c.gap:.1e}"),
            ("residual (data / knowledge)", f"{c.data_residual:.1e} / {c.knowledge_residual:.1e}"),
        ]
        body = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        duals = self.duals.to_frame()._repr_html_() if len(self.duals) else ""
        return f"<b>Privacy-MaxEnt result</b><table>{body}</table>{duals}"

    def __repr__(self) -> str:
        return (
            f"<Result {self.status}: H={self.certificate.entropy:.6f} nats/record, "
            f"residual {self.certificate.primal_residual:.1e}, "
            f"{len(self.duals)} duals>"
        )

    def plot(
        self,
        ax=None,
        by: str | None = None,
        cmap: str = "viridis",
        annotate=None,
        top: int | None = 30,
    ):
        """Heatmap of the posterior P(S | QI) (matplotlib): ``by="group"`` per QI value and
        bucket, ``by="person"`` per person (:meth:`person_posterior`).

        A table of more than ``top`` rows shows its ``top`` riskiest (largest posterior
        first) and says so in the title; ``top=None`` draws every row, still within a
        readable figure size (see :func:`maxent_privacy.report.plots.plot_posterior`).
        :func:`maxent_privacy.report.plots.plot_risk` draws how many people are how exposed.

        >>> from maxent_privacy import Bucketized, MaxEntModel, datasets
        >>> release = Bucketized(datasets.du2008_figure1(), qi=["gender", "degree"],
        ...                      sa="disease", group="bucket")
        >>> ax = MaxEntModel(release).solve().plot()
        """
        from .report.plots import plot_posterior

        table = self.person_posterior() if by == "person" else self.posterior(by=by)
        what = {"person": "people", "group": "(QI value, group) rows"}.get(by, "QI values")
        return plot_posterior(table, ax=ax, cmap=cmap, annotate=annotate, top=top, what=what)

    def check_current(self, what: str = "this result", people_only: bool = False) -> None:
        """Raise :class:`~maxent_privacy.errors.StaleResult` when the model changed since
        this result was solved: facts added, removed or replaced (any change to
        ``model.facts``), people singled out with ``model.person`` (``people_only``: only
        the latter). ``what`` (the method called) starts the message. :meth:`bounds`,
        :meth:`risk_table`, :meth:`report` and :meth:`person_posterior` call it: they read
        the model again and would mix this estimate with another model's facts or people.
        """
        from .errors import StaleResult

        m = self.model
        structure, facts = self._solved_from
        now = list(getattr(m, "facts", ()))
        people = getattr(m, "structure", structure) is not structure
        same = len(now) == len(facts) and all(a is b for a, b in zip(now, facts, strict=True))
        if not people and (same or people_only):
            return
        old = {id(f) for f in facts}
        added = [f.name for f in now if id(f) not in old]
        kept = {id(f) for f in now}
        removed = [f.name for f in facts if id(f) not in kept]
        changes = []
        if people:
            changes.append("people were singled out with model.person(...)")
        if added and not people:
            changes.append("facts were added (" + ", ".join(map(repr, added[:3])) + ")")
        if removed and not people:
            changes.append("facts were removed (" + ", ".join(map(repr, removed[:3])) + ")")
        if not changes:
            changes.append("its facts changed")
        raise StaleResult(
            f"{what}: the model changed after this result was solved ({'; '.join(changes)}); "
            "this estimate belongs to the model as it was: solve again (model.solve())"
        )

    def risk_table(self, threshold: float = 0.5, **options) -> pd.DataFrame:
        """Who is at risk: one row per person (or QI value and group), worst first; see
        :func:`maxent_privacy.report.risk_table` (``options`` go there: ``csv_safe=False``
        keeps formula-like text cells raw)."""
        from .report.risk import risk_table

        return risk_table(self, threshold=threshold, **options)

    def report(self, path, threshold: float = 0.5, **options) -> None:
        """Write a self-contained HTML risk report for a privacy officer to ``path``; see
        :func:`maxent_privacy.report.write_report` (``options`` go there). A risk table
        already computed is reused, never bounded again: the one given (``table=``) or the
        one this result keeps from :meth:`risk_table` (same ``nonsensitive`` and
        ``bounds``; any threshold). ``top`` is a whole number >= 1 (ArgumentError)."""
        from .report.html import write_report

        self.check_current("report()")
        write_report(self, path, threshold=threshold, **options)

    def bounds(
        self, by: str | None = None, values=None, exact: bool = False, **options
    ) -> pd.DataFrame:
        """``model.bounds(...)`` with the estimate beside it: columns ``lower``,
        ``maxent``, ``upper``, ... (the estimate always lies within the LP bounds). The
        estimate is a table the model allows, so the LP phase starts from it
        (``start``): a cell it makes positive needs no LP to show that it can be.

        >>> from maxent_privacy import MaxEntModel, Bucketized, datasets
        >>> model = MaxEntModel(Bucketized(datasets.du2008_figure1(),
        ...     qi=["gender", "degree"], sa="disease", group="bucket"))
        >>> model.add(model.P("Breast Cancer", gender="male") == 0)
        >>> row = model.solve().bounds().loc[("male", "college", "Flu")]
        >>> [round(float(row[c]), 6) for c in ("lower", "maxent", "upper")]
        [0.333333, 0.444444, 0.666667]
        """
        from .bounds.intervals import bounds, maxent_column

        self.check_current("bounds()")
        options.setdefault("start", self.table)
        frame = bounds(self.model, by=by, values=values, exact=exact, **options)
        frame.insert(1, "maxent", maxent_column(self, frame, by))
        return frame
