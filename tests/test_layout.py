"""The package's layout (issues 20 and 38): wings with a docstring each, imports in one
direction (the wing order below, :data:`ORDER`, with a short allowlist of facades,
:data:`ALLOWED`), no module over 800 lines, no function over 100 lines or with more than 10
parameters, and every name users could import before the wings still importable.

The import graph is read from the source with ``ast``: every ``import`` and ``from ...
import`` of a module of the package, at module level or inside a function (an import
inside a function is a dependency all the same), except those under ``if TYPE_CHECKING:``.
A package's ``__init__`` is a node of its own.
"""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
import warnings
from pathlib import Path

import pytest

import maxent_privacy

PACKAGE = Path(maxent_privacy.__file__).parent
MAX_LINES = 800
#: the longest function (``def`` to its last line) and the most parameters (``self`` and
#: ``cls`` not counted; ``*args`` and ``**options`` count one each)
MAX_FUNCTION_LINES = 100
MAX_PARAMETERS = 10

#: The wings in the order the data flows. A module imports its own wing, the base modules
#: and the wings before its own, never one after it (imports inside functions count).
#: ``datasets`` builds the papers' releases; ``results`` precedes ``solve``, which makes a
#: Result; the command line comes last and runs the distributed command too.
ORDER = (
    "releases",
    "datasets",
    "knowledge",
    "model",
    "results",
    "solve",
    "bounds",
    "tables",
    "adversaries",
    "anonymize",
    "report",
    "distributed",
    "cli",
)
#: Modules any wing may import; they import only each other. ``maxent_privacy`` itself
#: (its ``__init__``) imports its names lazily, by ``importlib``, never by ``import``.
BASE = ("maxent_privacy", "errors", "files", "numerics", "_validation", "_frames", "safety")
#: Imports against the order that stay, (importer, imported): each a facade, a method that
#: hands its object to a later wing (as cvxpy's ``Problem.solve``), or an old name.
ALLOWED = {
    ("model", "solve"): "MaxEntModel.solve() hands the model to the solve chain",
    ("model", "solve.problem"): "MaxEntModel.problem() is the compiled problem",
    ("model", "bounds.intervals"): "MaxEntModel.bounds() hands the model to the bounds",
    ("model", "tables.model"): "MaxEntModel(tables) without people is the model of tables",
    ("results", "bounds.intervals"): "Result.bounds(): the bounds beside the estimate",
    ("results", "report.plots"): "Result.plot() draws with the report's figures",
    ("results", "report.risk"): "Result.risk_table() is the report's risk table",
    ("results", "report.html"): "Result.report() writes the report's HTML",
    ("adversaries.robustness", "anonymize.robust"): (
        "robustness.robust_anonymize: the deprecated old name, imported only when asked for"
    ),
}

#: every public name each module defined before the wings (issue 20), by its old path;
#: the old path must still import and have every one of them
BEFORE = {
    "_io": "atomic_write check_target save_figure write_bytes write_frame write_text",
    "anonymize": "anatomize check_l_diversity history_guided rebucketize",
    "attacks": (
        "FINDING_COLUMNS History check_kc difference findings intersection kc_violations "
        "placement record_tracing"
    ),
    "bounds": (
        "ATTAIN BATCH CERTIFIED INTEGRAL METHODS POSITIVE bounds maxent_column relaxation_gap"
    ),
    "channels": "inference_channels",
    "checks": (
        "COLLECTIONS check_cells check_columns check_frame check_k check_label check_missing "
        "check_roles check_unique first_bad_cell qi_list resolve_c shorten"
    ),
    "cli": (
        "EXIT_BROKEN_PIPE EXIT_CODES EXIT_INPUT EXIT_INTERNAL EXIT_INTERRUPTED EXIT_OK "
        "EXIT_OUTPUT EXIT_SOLVER SOLVER_HELP analyze demo main read_release_csv report"
    ),
    "conflicts": "MAX_MOVES conflict_moves explain_infeasibility explained is_feasible",
    "data": "Bucketized ReleaseBase check_input_table check_same_schema validate_release",
    "datasets": (
        "ADULT_COLUMNS ADULT_QI ADULT_SA du2008_adult du2008_figure1 load_adult wang2008_figure1"
    ),
    "datasets_byun": "byun2008_tables",
    "dual": "DualResult NotConverged lp_forced_zeros newton_maxent",
    "errors": (
        "InaccurateSolution InfeasibleKnowledge KnowledgeError MaxEntError OutputError "
        "ReleaseError SolverFailed SolverNotInstalled SolverOptionError UnsupportedModel"
    ),
    "facts": (
        "CONVEX Fact LINEAR SOFT Tag check_range compile_fact compile_soft default_name "
        "footprint footprint_constraint label_of linearize refuse_strict substitute tag tag_of"
    ),
    "generalized": "Cell FORMATS Generalized check_population covers find_generalized parse_cell",
    "knowledge": "Grouped Soft Vague count_having soft vague",
    "metrics": "breaches estimation_accuracy max_posterior person_risk true_posterior",
    "model": "MaxEntModel Person",
    "mondrian": "mondrian",
    "numerics": "bipartite_components cell_components entropy_terms sorted_distinct",
    "parser": (
        "BinOp Condition Count Expr KnowledgeFileError MAX_FILE_BYTES MAX_LINE_CHARS "
        "MAX_MESSAGE_CHARS MAX_NESTING Neg Num Prob Statement apply_knowledge load_knowledge "
        "parse_knowledge"
    ),
    "plotting": (
        "MAX_HEIGHT MAX_LABELS MAX_WIDTH plot_posterior plot_privacy_curve plot_risk riskiest"
    ),
    "pooled": "build_pooled",
    "ranges": "Between between describe is_range select",
    "report": (
        "fact_in_words per_person render_report risk_summary risk_table write_report "
        "write_risk_table"
    ),
    "results": "Certificate Result",
    "robustness": (
        "MAX_STATES Prior compare_posteriors delta_ceil delta_max delta_report exact_posterior "
        "permanent query_error robust_anonymize robustness_table satisfies_delta_bound "
        "wong2010_example"
    ),
    "rules": "RULE_COLUMNS Rules mine_rules",
    "solve": (
        "Chain Conic DropImpliedRows FixForcedCells ForcedZeros InaccuracyWarning "
        "InfeasibleKnowledge JointCells MAXENT MaxEntProblem Memo Newton Result RowMap "
        "ScaleFactRows SolveOptions SolverFailed SplitComponents ZeroLog certify choose "
        "exp_cone_solvers explained gap_ok lp_zeros_of_problem runner solve solve_parts "
        "solver_options"
    ),
    "solve.certificate": "InaccuracyWarning certify dual_bound entropy_of gap_ok",
    "solve.chain": "Chain Stage",
    "solve.closed_form": "ClosedForm closed_components",
    "solve.components": "Part PartSolution Parts Solution SplitComponents",
    "solve.conic": "Conic",
    "solve.dispatch": "Memo batches runner solve_parts",
    "solve.flows": (
        "FLOW_BATCH_EDGES Network PooledFlows PooledRows circulation_zeros group_network "
        "pooled_flow_zeros settled_flows value_network"
    ),
    "solve.forced_zeros": (
        "ForcedZeros ZeroLog lp_forced_zeros lp_zeros_by_component lp_zeros_of_problem"
    ),
    "solve.hessian": (
        "BJ_MAX_BLOCK BJ_MAX_ITER BJ_MIN_ROWS GRAM_MAX_PAIRS Gram PCG_DIVERGED PCG_MIN_ITER "
        "RIDGES block_jacobi hessian hessian_of solve_newton solve_upper"
    ),
    "solve.newton": (
        "DualResult DualUnbounded NotConverged SCALING_SWEEPS class_rows newton_maxent "
        "recession_zeros"
    ),
    "solve.newton_backend": "Newton run_job",
    "solve.options": (
        "DEFAULT_OPTIONS MAXENT SolveOptions choose exp_cone_solvers refusal solver_options"
    ),
    "solve.placements": "JOINT_MAX_FACTOR Joint JointCells joint_cell_count link_multipliers",
    "solve.polish": "polish polish_kkt",
    "solve.presolve": (
        "FixForcedCells InfeasibleKnowledge MaxEntProblem PooledFlows PooledRows Reduced "
        "dataclass presolve_cells reduce_to_free replace sorted_distinct tl"
    ),
    "solve.problem": "MaxEntProblem RowMap compile_problem",
    "solve.rank": "DropImpliedRows independent_rows",
    "solve.scaling": "ScaleFactRows row_max_abs",
    "solve.tight": "rect_tight tight_rows",
    "solve.tolerances": (
        "BUCKET_FLOW_TIGHT FLOW_INTEGER GAP_RELATIVE KKT LP_POSITIVE NEWTON_MAX_ITER "
        "NEWTON_SETTLED NEWTON_TOL POLISH_ACCEPT POLISH_MAX_ROWS POLISH_MIN_SECONDS POLISH_STOP "
        "POLISH_TIME_FACTOR PRESOLVE_MAX_ROUNDS PROGRESS_CELLS PROGRESS_COMPONENTS "
        "PROGRESS_NEWTON_CELLS QR_MAX_COLUMNS QR_MAX_ROWS RANK SUSPECT TIGHT "
        "ZERO_INEQUALITY_RHS ZERO_RHS"
    ),
    "structure": "Structure build_single remap_matrix",
}

#: ``maxent_privacy.__all__`` before the wings
TOP = (
    "Bucketized Certificate Generalized InaccuracyWarning InaccurateSolution "
    "InconsistentTables InfeasibleKnowledge KnowledgeError KnowledgeFileError MaxEntError "
    "MaxEntModel "
    "OutputError Person ReleaseError Result Rules SolveOptions SolverFailed "
    "SolverNotInstalled SolverOptionError StaleResult Structure Tabulated UnsupportedModel "
    "anonymize "
    "attacks "
    "between check_kc compare_adversaries count_having datasets definetti exp_cone_solvers "
    "explain_infeasibility "
    "inference_channels metrics mine_rules mondrian plot_privacy_curve plot_risk robustness "
    "rules soft vague"
).split()

#: the modules users import by name (issue 20, item 4)
USER_MODULES = ["anonymize", "metrics", "attacks", "robustness", "rules", "datasets", "mondrian"]


def _modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package) for every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_package)
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for stmt in node.body:
                skip.update(id(n) for n in ast.walk(stmt))
    return skip


def _targets(name: str, is_package: bool, node, modules) -> list[str]:
    """The package's modules that one import statement imports."""
    if isinstance(node, ast.Import):
        bases = [(a.name, []) for a in node.names]
    else:
        if node.level:
            parts = name.split(".") if is_package else name.split(".")[:-1]
            parts = parts[: len(parts) - (node.level - 1)]
            base = ".".join(parts + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        bases = [(base, [a.name for a in node.names])]
    out = []
    for base, names in bases:
        for target in [f"{base}.{n}" for n in names if f"{base}.{n}" in modules] or [base]:
            while target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                out.append(target)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports (see the module docstring)."""
    modules = _modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _type_checking_nodes(tree)
        graph[name] = {
            t
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in skip
            for t in _targets(name, is_package, node, modules)
        }
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def visit(v):
        state[v] = 1
        path.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == 1:
                return path[path.index(w) :] + [w]
            if w not in state and (cycle := visit(w)):
                return cycle
        state[v] = 2
        path.pop()
        return None

    for v in sorted(graph):
        if v not in state and (cycle := visit(v)):
            return cycle
    return None


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    # results.py imports the report's risk table inside a method
    assert "maxent_privacy.report.risk" in graph["maxent_privacy.results"]
    assert "maxent_privacy.solve" in graph["maxent_privacy.model"]


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_module_over_800_lines():
    long = {
        name: n
        for name, (path, _) in _modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_every_wing_says_what_lives_there():
    """Each subpackage's docstring names every module in it."""
    for info in pkgutil.iter_modules(maxent_privacy.__path__):
        if not info.ispkg:
            continue
        wing = importlib.import_module(f"maxent_privacy.{info.name}")
        assert wing.__doc__ and len(wing.__doc__.strip()) > 80, info.name
        for sub in pkgutil.iter_modules(wing.__path__):
            named = (f"``{sub.name}``", f":mod:`.{sub.name}`")
            assert any(n in wing.__doc__ for n in named), f"{info.name}/ does not list {sub.name}"


def test_the_top_names_are_unchanged():
    assert sorted(maxent_privacy.__all__) == sorted(TOP)
    for name in TOP:
        assert getattr(maxent_privacy, name) is not None, name


@pytest.mark.parametrize("old", sorted(BEFORE))
def test_old_module_paths_keep_their_names(old):
    module = importlib.import_module(f"maxent_privacy.{old}")
    with warnings.catch_warnings():  # a deprecated old name is still there
        warnings.simplefilter("ignore", DeprecationWarning)
        missing = [n for n in BEFORE[old].split() if not hasattr(module, n)]
    assert not missing, f"maxent_privacy.{old} lost {missing}"


def test_an_anonymizer_under_its_old_adversary_name_warns():
    from maxent_privacy import robustness
    from maxent_privacy.anonymize import robust_anonymize

    with pytest.warns(DeprecationWarning, match="import it from maxent_privacy.anonymize"):
        assert robustness.robust_anonymize is robust_anonymize
    assert "robust_anonymize" not in robustness.__all__
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        robustness.nothing  # noqa: B018


@pytest.mark.parametrize("old", sorted(maxent_privacy._MOVED))
def test_an_old_path_is_the_new_module(old):
    module = importlib.import_module(old)
    assert module is importlib.import_module(maxent_privacy._MOVED[old])
    assert (
        module.__spec__.name == maxent_privacy._MOVED[old]
    )  # the alias did not overwrite its spec


@pytest.mark.parametrize("name", USER_MODULES)
def test_user_modules_import_every_way(name):
    by_attribute = getattr(maxent_privacy, name)
    by_import = importlib.import_module(f"maxent_privacy.{name}")
    assert by_attribute is by_import
    namespace: dict = {}
    exec(f"from maxent_privacy import {name} as m", namespace)  # noqa: S102
    assert namespace["m"] is by_import


def test_the_tests_mirror_the_wings():
    """Every wing has its folder of tests (``tests/<wing>/test_*.py``)."""
    tests = Path(__file__).parent
    for info in pkgutil.iter_modules(maxent_privacy.__path__):
        if info.ispkg:
            assert sorted((tests / info.name).glob("test_*.py")), f"no tests/{info.name}/"


# ------------------------------------------------------------------ the wing order
def _short(name: str) -> str:
    """``maxent_privacy.solve.highs`` -> ``solve.highs``; the package itself keeps its name."""
    return name.split(".", 1)[1] if "." in name else name


def _place(name: str) -> str:
    """The wing of a module (its first name below the package), or ``"base"``."""
    short = _short(name)
    top = short.split(".")[0]
    if short in BASE or top in BASE:
        return "base"
    assert top in ORDER, f"{name} is in no wing of ORDER and not in BASE"
    return top


def against_the_order(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """The imports ``(importer, imported)``, short names, that go against :data:`ORDER`
    or from a base module to a wing, allowed or not."""
    out = []
    for name, targets in graph.items():
        here = _place(name)
        for target in targets:
            there = _place(target)
            if there == "base" or here == there:
                continue
            if here == "base" or ORDER.index(there) > ORDER.index(here):
                out.append((_short(name), _short(target)))
    return sorted(out)


def test_against_the_order_finds_a_backward_import():
    graph = {
        "maxent_privacy.releases.a": {"maxent_privacy.solve.b", "maxent_privacy.errors"},
        "maxent_privacy.solve.b": {"maxent_privacy.releases.a", "maxent_privacy.solve"},
        "maxent_privacy.solve": set(),
        "maxent_privacy.errors": {"maxent_privacy.model"},
        "maxent_privacy.model": set(),
    }
    assert against_the_order(graph) == [("errors", "model"), ("releases.a", "solve.b")]


def test_every_module_has_a_place():
    for name in _modules():
        _place(name)  # asserts


def test_imports_follow_the_wing_order():
    """No module imports a later wing (inside a function too) but the facades of ALLOWED;
    base modules import only base modules."""
    wrong = [edge for edge in against_the_order(import_graph()) if edge not in ALLOWED]
    assert not wrong, "imports against the wing order: " + ", ".join(
        f"{a} -> {b}" for a, b in wrong
    )


def test_every_allowed_import_is_still_there():
    """An allowlist entry whose import went away goes too."""
    graph = import_graph()
    gone = [
        (a, b)
        for a, b in ALLOWED
        if f"maxent_privacy.{b}" not in graph.get(f"maxent_privacy.{a}", set())
    ]
    assert not gone, f"ALLOWED lists imports that no longer exist: {gone}"


# ------------------------------------------------------------------ functions
def _functions():
    """``(module:line name, parameters, lines)`` of every function of the package."""
    for name, (path, _) in sorted(_modules().items()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            a = node.args
            positional = [*a.posonlyargs, *a.args]
            n = len(positional) + len(a.kwonlyargs) + (a.vararg is not None)
            n += a.kwarg is not None
            if positional and positional[0].arg in ("self", "cls"):
                n -= 1
            where = f"{_short(name)}:{node.lineno} {node.name}"
            yield where, n, node.end_lineno - node.lineno + 1


def test_no_function_with_more_than_10_parameters():
    many = {where: n for where, n, _ in _functions() if n > MAX_PARAMETERS}
    assert not many, f"functions with more than {MAX_PARAMETERS} parameters: {many}"


def test_no_function_over_100_lines():
    long = {where: n for where, _, n in _functions() if n > MAX_FUNCTION_LINES}
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def _private_of_result() -> set[str]:
    """The private attributes and methods of :class:`~maxent_privacy.results.Result`."""
    tree = ast.parse((PACKAGE / "results.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Result")
    names = {
        n.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
    } | {n.name for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return {n for n in names if re.fullmatch(r"_[a-z]\w*[a-z0-9]", n)}


def test_the_report_reads_results_through_public_accessors():
    private = _private_of_result()
    assert {"_cells", "_cls", "_class_n", "_phantom"} <= private
    reads = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {ast.unparse(node)}"
        for path in sorted((PACKAGE / "report").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr in private
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]
    assert not reads, f"the report reads Result's private attributes: {reads}"


def test_no_two_test_files_share_a_name():
    """Test folders have no ``__init__.py``: two ``test_x.py`` in one run clash at
    collection ("import file mismatch")."""
    tests = Path(__file__).parent
    seen: dict = {}
    for path in sorted(tests.rglob("test_*.py")):
        assert path.name not in seen, f"{path} and {seen[path.name]} share a name"
        seen[path.name] = path
