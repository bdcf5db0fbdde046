//! `HotKeys` in Python: the core's sketch of the keys that take the most
//! requests. A ring shows a sketch its keys once `ring.watch_hot_keys(sketch)`
//! was called.

use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::errors::out_of_range;
use crate::keys::key_bytes;

/// HotKeys(top=100, width=4096, sample=4, half_life=60.0): which keys take
/// the most requests (HeavyKeeper, bounded memory: `width` x 16 bytes).
/// OutOfRangeError naming the setting when one is out of its range.
#[pyclass(name = "HotKeys", module = "shardring", frozen)]
pub struct PyHotKeys {
    pub(crate) sketch: Arc<shardring::HotKeys>,
}

#[pymethods]
impl PyHotKeys {
    #[new]
    #[pyo3(signature = (top = 100, width = 4096, sample = 4, half_life = 60.0))]
    fn new(py: Python<'_>, top: usize, width: usize, sample: u32, half_life: f64) -> PyResult<PyHotKeys> {
        let half_life = Duration::try_from_secs_f64(half_life)
            .map_err(|_| out_of_range(py, format!("half_life {half_life} must be a number of seconds")))?;
        let options = shardring::HotKeysOptions { top, width, sample, half_life };
        let sketch = shardring::HotKeys::new(options).map_err(|message| out_of_range(py, message))?;
        Ok(PyHotKeys { sketch: Arc::new(sketch) })
    }

    /// observe(key) -> None: counts one request of `key` (str or bytes).
    fn observe(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.sketch.observe(&*key_bytes(key)?);
        Ok(())
    }

    /// top() -> list[tuple[bytes, int, float]]: the hot keys, most requested
    /// first: (key, estimated requests, estimated requests per second).
    fn top<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let top = py.detach(|| self.sketch.top());
        let rows = top.into_iter().map(|k| (PyBytes::new(py, &k.key), k.requests, k.rate));
        PyList::new(py, rows)
    }

    /// halve() -> None: halves every count now (done every half-life).
    fn halve(&self) {
        self.sketch.halve();
    }

    /// Bytes of sketch buckets.
    #[getter]
    fn sketch_bytes(&self) -> usize {
        self.sketch.sketch_bytes()
    }
}
