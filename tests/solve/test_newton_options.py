"""newton_maxent's options are records (DualStart, Layout, NewtonSettings); its old
parameters still work, with a DeprecationWarning, and give the same answer."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from maxent_privacy.solve.newton import DualStart, NewtonSettings, newton_maxent


def problem():
    """Two classes of 2 records over two values, one SA row: value 0 holds 3 records."""
    n = np.array([2.0, 2.0, 2.0, 2.0])
    cls = np.array([0, 0, 1, 1])
    R = np.array([2.0, 2.0])
    rows = sp.csr_array(np.array([[1.0, 0.0, 1.0, 0.0]]))
    return n, cls, R, rows, np.array([3.0])


def test_the_records_and_the_old_parameters_agree():
    new = newton_maxent(*problem(), settings=NewtonSettings(tol=1e-12))
    np.testing.assert_allclose(new.x, [1.5, 0.5, 1.5, 0.5], atol=1e-9)
    with pytest.warns(DeprecationWarning, match="tol as parameters are deprecated"):
        old = newton_maxent(*problem(), tol=1e-12)
    np.testing.assert_allclose(old.x, new.x, atol=1e-12)
    with pytest.warns(DeprecationWarning, match="lam0, mu0, tol"):
        positional = newton_maxent(*problem(), None, None, new.lam, None, 1e-12)
    np.testing.assert_allclose(positional.x, new.x, atol=1e-12)
    warm = newton_maxent(*problem(), start=DualStart(new.lam), settings=NewtonSettings(1e-12))
    assert warm.iterations <= new.iterations


def test_an_unknown_option_is_refused():
    with pytest.raises(TypeError, match="unexpected keyword 'tolerance'"):
        newton_maxent(*problem(), tolerance=1e-9)
