//! Keys packed back to back, so a binding can hand a whole batch to the core
//! (and release its interpreter lock) after one pass over its own objects.

use std::borrow::Cow;

/// A batch of keys stored back to back in one buffer, with each key's end
/// offset. Built by [`KeyBatch::push`], or over an existing buffer with
/// [`KeyBatch::from_lengths`]; read in order with [`KeyBatch::iter`], which
/// [`crate::Ring::get_indices`] and [`crate::Ring::balance`] accept.
#[derive(Debug, Clone, Default)]
pub struct KeyBatch<'a> {
    bytes: Cow<'a, [u8]>,
    ends: Vec<usize>,
}

impl<'a> KeyBatch<'a> {
    /// An empty batch with room for `keys` keys of about `bytes_per_key` bytes.
    pub fn with_capacity(keys: usize, bytes_per_key: usize) -> KeyBatch<'static> {
        KeyBatch { bytes: Cow::Owned(Vec::with_capacity(keys * bytes_per_key)), ends: Vec::with_capacity(keys) }
    }

    /// The keys laid out back to back in `bytes`, the `i`-th `lengths[i]`
    /// bytes long. Returns `None` when the lengths add up to more than
    /// `bytes` holds (trailing bytes are ignored).
    pub fn from_lengths(bytes: Cow<'a, [u8]>, lengths: impl IntoIterator<Item = usize>) -> Option<KeyBatch<'a>> {
        let mut end = 0usize;
        let ends = lengths
            .into_iter()
            .map(|length| {
                end = end.checked_add(length)?;
                (end <= bytes.len()).then_some(end)
            })
            .collect::<Option<Vec<usize>>>()?;
        Some(KeyBatch { bytes, ends })
    }

    /// Appends a key (copied).
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.to_mut().extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch holds no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The keys, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.ends.len()).map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1] };
            &self.bytes[start..self.ends[i]]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pushed_and_laid_out_keys_read_back_in_order() {
        let mut batch = KeyBatch::with_capacity(3, 4);
        for key in [&b"ab"[..], b"", b"cde"] {
            batch.push(key);
        }
        assert_eq!(batch.iter().collect::<Vec<_>>(), vec![&b"ab"[..], b"", b"cde"]);
        let laid = KeyBatch::from_lengths(Cow::Borrowed(&b"abcdeXX"[..]), [2, 0, 3]).unwrap();
        assert_eq!((laid.len(), laid.iter().collect::<Vec<_>>()), (3, vec![&b"ab"[..], b"", b"cde"]));
        assert!(KeyBatch::from_lengths(Cow::Borrowed(&b"abc"[..]), [2, 2]).is_none());
        assert!(KeyBatch::from_lengths(Cow::Borrowed(&b"abc"[..]), [usize::MAX, 2]).is_none());
        assert!(KeyBatch::default().is_empty());
    }
}
