//! Hashing of keys and of point labels (placement format 1, see `SPEC.md`).

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Hashes a key for placement: XXH3-64 of the key's bytes under `seed`.
///
/// A string key is hashed as its UTF-8 bytes. The result is the key's
/// position on the ring, a `u64` in `[0, 2^64)`.
#[inline]
pub fn hash_key(key: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(key, seed)
}

/// Hashes point `index` of the node `id`: XXH3-64 under `seed` of the label
/// `id bytes || index as 4 bytes little-endian`.
///
/// The label is injective: its last 4 bytes are always the index and the
/// bytes before them are always the id, so two different (id, index) pairs
/// never produce the same bytes (node "a-1" point 0 and node "a-10" point 0
/// hash different labels). The encoding has no dependence on platform, word
/// size or endianness.
pub fn hash_point(id: &[u8], index: u32, seed: u64) -> u64 {
    let mut label = Vec::with_capacity(id.len() + 4);
    label.extend_from_slice(id);
    label.extend_from_slice(&index.to_le_bytes());
    xxh3_64_with_seed(&label, seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hash_is_xxh3_64_of_the_bytes() {
        // XXH3-64 of the empty input with seed 0, from the xxHash reference.
        assert_eq!(hash_key(b"", 0), 0x2D06_8005_38D3_94C2);
        assert_ne!(hash_key(b"abc", 0), hash_key(b"abc", 1));
    }

    #[test]
    fn point_label_is_id_then_index_little_endian() {
        assert_eq!(hash_point(b"a-1", 0, 0), hash_key(b"a-1\0\0\0\0", 0));
        assert_eq!(hash_point(b"n", 0x0102_0304, 7), hash_key(b"n\x04\x03\x02\x01", 7));
        assert_ne!(hash_point(b"a-1", 0, 0), hash_point(b"a-10", 0, 0));
    }
}
