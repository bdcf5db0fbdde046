//! `shardring.diff`, `Diff`, `Balance` and `Spread`: the core's analysis
//! results as Python objects.

use std::collections::HashMap;

use pyo3::prelude::*;

use shardring::{RingDiff, Spread};

use crate::errors::to_py_err;
use crate::ring::{PyRing, RingBalance};

/// diff(old, new) -> Diff
///
/// The exact difference between two rings, position by position (by node
/// id): the moved share, the share moved per (from, to) pair, and the arcs
/// that change owner (the migration plan). Computed without the GIL. Raises
/// InvalidConfigError when the seeds differ, EmptyRingError when either ring
/// has no points.
#[pyfunction]
pub(crate) fn diff(py: Python<'_>, old: &PyRing, new: &PyRing) -> PyResult<PyDiff> {
    let (old, new) = (old.snapshot(), new.snapshot());
    let diff = py.detach(|| old.ring.diff(&new.ring)).map_err(to_py_err)?;
    Ok(PyDiff { diff })
}

/// The difference between two rings (see shardring.diff).
#[pyclass(frozen, module = "shardring", name = "Diff")]
pub struct PyDiff {
    diff: RingDiff,
}

impl From<RingDiff> for PyDiff {
    fn from(diff: RingDiff) -> PyDiff {
        PyDiff { diff }
    }
}

#[pymethods]
impl PyDiff {
    /// Fraction of all keys (of the hash space) whose owner differs, in [0, 1].
    #[getter]
    fn moved_share(&self) -> f64 {
        self.diff.moved_share
    }

    /// dict[(from_id, to_id), float]: the share of the hash space moving
    /// from one node to another.
    #[getter]
    fn flows(&self) -> HashMap<(String, String), f64> {
        self.diff.flows.iter().map(|f| ((f.from.clone(), f.to.clone()), f.share)).collect()
    }

    /// list[(start, end, from_id, to_id)]: the arcs that change owner, in
    /// ring order; keys whose hash h has start <= h <= end move from
    /// `from_id` to `to_id`. Adjacent arcs with the same pair are merged.
    #[getter]
    fn arcs(&self) -> Vec<(u64, u64, String, String)> {
        self.diff.arcs.iter().map(|a| (a.start, a.end, a.from.clone(), a.to.clone())).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "Diff(moved_share={:.6}, flows={}, arcs={})",
            self.diff.moved_share,
            self.diff.flows.len(),
            self.diff.arcs.len()
        )
    }
}

/// Per-node key counts of a sample and how evenly they spread (see Ring.balance).
#[pyclass(frozen, module = "shardring", name = "Balance")]
pub struct PyBalance {
    /// Keys in the sample.
    #[pyo3(get)]
    keys: u64,
    /// dict[str, int]: keys per node id, drained nodes included.
    #[pyo3(get)]
    counts: HashMap<String, u64>,
    /// Spread of the counts over the nodes with weight > 0, against their mean.
    #[pyo3(get)]
    by_node: PySpread,
    /// Spread of each count over its fair count (keys x weight share).
    #[pyo3(get)]
    by_weight: PySpread,
}

impl From<RingBalance> for PyBalance {
    fn from(RingBalance { ring, balance }: RingBalance) -> PyBalance {
        let counts = ring.nodes().iter().map(|n| n.id().to_owned()).zip(balance.counts).collect();
        PyBalance { keys: balance.keys, counts, by_node: balance.by_node.into(), by_weight: balance.by_weight.into() }
    }
}

/// `Ring.balance` returns a `Balance`.
impl<'py> IntoPyObject<'py> for RingBalance {
    type Target = PyBalance;
    type Output = Bound<'py, PyBalance>;
    type Error = PyErr;

    fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyBalance>> {
        Bound::new(py, PyBalance::from(self))
    }
}

#[pymethods]
impl PyBalance {
    fn __repr__(&self) -> String {
        format!(
            "Balance(keys={}, by_node={}, by_weight={})",
            self.keys,
            self.by_node.__repr__(),
            self.by_weight.__repr__()
        )
    }
}

/// Spread of per-node loads against a reference (1.0 is perfect).
#[pyclass(frozen, module = "shardring", name = "Spread", from_py_object)]
#[derive(Clone)]
pub struct PySpread {
    /// Coefficient of variation (population standard deviation over mean).
    #[pyo3(get)]
    cv: f64,
    /// Largest load over the reference.
    #[pyo3(get)]
    max_over_mean: f64,
    /// Smallest load over the reference.
    #[pyo3(get)]
    min_over_mean: f64,
}

impl From<Spread> for PySpread {
    fn from(s: Spread) -> PySpread {
        PySpread { cv: s.cv, max_over_mean: s.max_over_mean, min_over_mean: s.min_over_mean }
    }
}

#[pymethods]
impl PySpread {
    fn __repr__(&self) -> String {
        format!(
            "Spread(cv={:.4}, max_over_mean={:.4}, min_over_mean={:.4})",
            self.cv, self.max_over_mean, self.min_over_mean
        )
    }
}
