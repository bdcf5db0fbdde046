//! `HotKeys` for Node: the core's sketch of the keys that take the most
//! requests. A ring shows a sketch its keys once `ring.watchHotKeys(sketch)`
//! was called.

use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::Buffer;
use napi::{Env, Result, Unknown};
use napi_derive::napi;

use crate::errors::range_error;
use crate::keys::with_key;

/// Settings of a `HotKeys` sketch; each left out takes its default.
#[napi(object)]
pub struct HotKeysOptions {
    /// How many hot keys to keep (default 100, at most 4,096).
    pub top: Option<u32>,
    /// Buckets per row, a power of two (default 4,096: 64 KiB).
    pub width: Option<u32>,
    /// Count one lookup in `sample` per thread, a power of two (default 4).
    pub sample: Option<u32>,
    /// Seconds after which counts halve (default 60).
    pub half_life: Option<f64>,
}

/// One hot key of `HotKeys.top()`.
#[napi(object)]
pub struct HotKey {
    /// The key's bytes.
    pub key: Buffer,
    /// Estimated requests (counts halve every half-life).
    pub requests: f64,
    /// Estimated requests per second.
    pub rate: f64,
}

/// Which keys take the most requests (HeavyKeeper; `width` x 16 bytes).
#[napi]
pub struct HotKeys {
    pub(crate) sketch: Arc<shardring::HotKeys>,
}

#[napi]
impl HotKeys {
    /// A sketch; a `RangeError` naming a setting out of its range.
    #[napi(constructor)]
    pub fn new(env: Env, options: Option<HotKeysOptions>) -> Result<Self> {
        let defaults = shardring::HotKeysOptions::default();
        let options = options.unwrap_or(HotKeysOptions { top: None, width: None, sample: None, half_life: None });
        let half_life = match options.half_life {
            Some(seconds) => Duration::try_from_secs_f64(seconds)
                .map_err(|_| range_error(&env, format!("halfLife {seconds} must be a number of seconds")))?,
            None => defaults.half_life,
        };
        let options = shardring::HotKeysOptions {
            top: options.top.map_or(defaults.top, |t| t as usize),
            width: options.width.map_or(defaults.width, |w| w as usize),
            sample: options.sample.unwrap_or(defaults.sample),
            half_life,
        };
        let sketch = shardring::HotKeys::new(options).map_err(|message| range_error(&env, message))?;
        Ok(HotKeys { sketch: Arc::new(sketch) })
    }

    /// Counts one request of `key` (a string or a Buffer).
    #[napi(ts_args_type = "key: string | Buffer")]
    pub fn observe(&self, env: Env, key: Unknown<'_>) -> Result<()> {
        with_key(&env, key, |bytes| self.sketch.observe(bytes))
    }

    /// The hot keys, most requested first.
    #[napi]
    pub fn top(&self) -> Vec<HotKey> {
        let row = |k: shardring::HotKey| HotKey { key: k.key.into(), requests: k.requests as f64, rate: k.rate };
        self.sketch.top().into_iter().map(row).collect()
    }

    /// Halves every count now (the sketch does it every half-life).
    #[napi]
    pub fn halve(&self) {
        self.sketch.halve();
    }

    /// Bytes of sketch buckets.
    #[napi(getter)]
    pub fn sketch_bytes(&self) -> u32 {
        self.sketch.sketch_bytes() as u32
    }
}
