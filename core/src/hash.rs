//! Every key hash the placement algorithms use: XXH3-64 for the native
//! algorithms (placement format 1, see `SPEC.md`), the names of the peer
//! systems' hashes ([`KeyHash`], [`HashFunction`]) and how a ring hashes
//! its keys ([`KeyRule`]), and the integer mixers the native algorithms
//! share (`fmix64`, `splitmix64`). The peers' hash functions themselves,
//! bit-exact with their C code on x86-64, are in `peers`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;
use xxhash_rust::xxh64::xxh64;

use crate::error::RingError;

mod peers;

pub use peers::{SLOT_COUNT, crc16, key_slot};
pub(crate) use peers::{full_hash, md5_high64, md5_words};

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

/// A named 32-bit key hash of a peer system. Names are twemproxy's `hash:`
/// values (libmemcached's `MEMCACHED_HASH_*` and pylibmc's `hash` behaviour
/// call them `default`, `md5`, `crc`, `fnv1_64`, `fnv1a_64`, `fnv1_32`,
/// `fnv1a_32`, `hsieh`, `murmur`, `jenkins`, `murmur3`).
///
/// Bytes are read as x86-64 C `char`, that is signed, where the C code
/// adds or XORs them whole (one-at-a-time, the four FNVs, Hsieh's 3-byte
/// tail): `hash(b"\xc3\xa9")` differs from an unsigned-byte reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
#[allow(non_camel_case_types)] // fnv1a_64 and fnv1a_32 as the peers spell them
pub enum KeyHash {
    /// Bob Jenkins' one-at-a-time (libmemcached's default, `HASH_DEFAULT`).
    OneAtATime,
    /// The first 4 bytes of MD5, little-endian (ketama).
    Md5,
    /// CRC-16/XMODEM run on an unmasked 32-bit register (twemproxy `crc16`):
    /// the low 16 bits are CRC-16/XMODEM, the bits above are carried shifts.
    Crc16,
    /// Bits 16..31 of CRC-32 (IEEE), masked to 15 bits: a value in
    /// `0..32768` (libmemcached `crc`, twemproxy `crc32`).
    Crc32,
    /// CRC-32 (IEEE, reflected 0xEDB88320), all 32 bits (twemproxy `crc32a`,
    /// nginx).
    Crc32a,
    /// 64-bit FNV-1, low 32 bits.
    Fnv1_64,
    /// 64-bit FNV-1a offset and prime in 32-bit arithmetic (libhashkit's
    /// `FNV1A_64` as written, which is the low 32 bits of 64-bit FNV-1a).
    Fnv1a_64,
    /// 32-bit FNV-1.
    Fnv1_32,
    /// 32-bit FNV-1a.
    Fnv1a_32,
    /// Paul Hsieh's SuperFastHash started from 0 instead of the length.
    Hsieh,
    /// MurmurHash2 (32-bit) with seed `0xdeadbeef * len`.
    Murmur,
    /// Bob Jenkins' lookup3 `hashlittle` with initval 13.
    Jenkins,
    /// MurmurHash3 x86_32 with seed `0xdeadbeef * len` (libmemcached 1.1;
    /// not in twemproxy).
    Murmur3,
}

impl KeyHash {
    /// Every named hash, in twemproxy's order, then `murmur3`.
    pub const ALL: [KeyHash; 13] = [
        KeyHash::OneAtATime,
        KeyHash::Md5,
        KeyHash::Crc16,
        KeyHash::Crc32,
        KeyHash::Crc32a,
        KeyHash::Fnv1_64,
        KeyHash::Fnv1a_64,
        KeyHash::Fnv1_32,
        KeyHash::Fnv1a_32,
        KeyHash::Hsieh,
        KeyHash::Murmur,
        KeyHash::Jenkins,
        KeyHash::Murmur3,
    ];

    /// The name written in configs (`"one_at_a_time"`, `"fnv1a_64"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            KeyHash::OneAtATime => "one_at_a_time",
            KeyHash::Md5 => "md5",
            KeyHash::Crc16 => "crc16",
            KeyHash::Crc32 => "crc32",
            KeyHash::Crc32a => "crc32a",
            KeyHash::Fnv1_64 => "fnv1_64",
            KeyHash::Fnv1a_64 => "fnv1a_64",
            KeyHash::Fnv1_32 => "fnv1_32",
            KeyHash::Fnv1a_32 => "fnv1a_32",
            KeyHash::Hsieh => "hsieh",
            KeyHash::Murmur => "murmur",
            KeyHash::Jenkins => "jenkins",
            KeyHash::Murmur3 => "murmur3",
        }
    }

    /// The hash of `key`'s bytes.
    pub fn hash(self, key: &[u8]) -> u32 {
        match self {
            KeyHash::OneAtATime => peers::one_at_a_time(key),
            KeyHash::Md5 => peers::md5_word(key, 0),
            KeyHash::Crc16 => peers::crc16_register(key),
            KeyHash::Crc32 => (crc32fast::hash(key) >> 16) & 0x7fff,
            KeyHash::Crc32a => crc32fast::hash(key),
            KeyHash::Fnv1_64 => peers::fnv1_64(key),
            KeyHash::Fnv1a_64 => peers::fnv(key, 0x8422_2325, 0x1b3, true),
            KeyHash::Fnv1_32 => peers::fnv(key, 0x811c_9dc5, 0x0100_0193, false),
            KeyHash::Fnv1a_32 => peers::fnv(key, 0x811c_9dc5, 0x0100_0193, true),
            KeyHash::Hsieh => peers::hsieh(key),
            KeyHash::Murmur => peers::murmur2(key),
            KeyHash::Jenkins => peers::jenkins(key),
            KeyHash::Murmur3 => peers::murmur3(key),
        }
    }
}

impl fmt::Display for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for KeyHash {
    type Err = RingError;

    /// Parses a name as written by [`KeyHash::name`]. Errors:
    /// [`RingError::InvalidConfig`] naming the unknown value and the known ones.
    fn from_str(name: &str) -> Result<KeyHash, RingError> {
        KeyHash::ALL.into_iter().find(|h| h.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!(
                "unknown key_hash {name:?}; expected one of {}",
                KeyHash::ALL.map(KeyHash::name).join(", ")
            ),
        })
    }
}

/// A load balancer's hash function (the `hash_function` parameter): Envoy's
/// and gRPC's host hash for ring points (`xx_hash`, `murmur_hash_2`), or
/// HAProxy's request hash (`sdbm`, `djb2`, `wt6`, `crc32`). Each
/// algorithm takes its own peer's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HashFunction {
    /// XXH64 with seed 0 (Envoy's `XX_HASH`, the default; gRPC's only one).
    XxHash,
    #[serde(rename = "murmur_hash_2")]
    /// 64-bit MurmurHash2 as libstdc++'s `_Hash_bytes`, seed `0xc70f6907`
    /// (Envoy's `MURMUR_HASH_2`, `std::hash` of a string in libstdc++).
    MurmurHash2,
    /// HAProxy `sdbm` (its default): `h = c + (h << 6) + (h << 16) - h` per byte.
    Sdbm,
    /// HAProxy `djb2`: `h = h * 33 + c` per byte, from 5381.
    Djb2,
    /// HAProxy `wt6`, Willy Tarreau's 6-rotation hash.
    Wt6,
    /// HAProxy `crc32`: CRC-32 (IEEE), all 32 bits.
    Crc32,
}

impl HashFunction {
    /// Every hash function.
    pub const ALL: [HashFunction; 6] = [
        HashFunction::XxHash,
        HashFunction::MurmurHash2,
        HashFunction::Sdbm,
        HashFunction::Djb2,
        HashFunction::Wt6,
        HashFunction::Crc32,
    ];

    /// The name written in configs (`"xx_hash"`, `"murmur_hash_2"`, `"sdbm"`, ...).
    pub fn name(self) -> &'static str {
        match self {
            HashFunction::XxHash => "xx_hash",
            HashFunction::MurmurHash2 => "murmur_hash_2",
            HashFunction::Sdbm => "sdbm",
            HashFunction::Djb2 => "djb2",
            HashFunction::Wt6 => "wt6",
            HashFunction::Crc32 => "crc32",
        }
    }

    /// The 64-bit host hash of Envoy and gRPC (`xx_hash`, `murmur_hash_2`);
    /// HAProxy's 32-bit ones zero-extended.
    pub(crate) fn hash64(self, bytes: &[u8]) -> u64 {
        match self {
            HashFunction::XxHash => xxh64(bytes, 0),
            HashFunction::MurmurHash2 => peers::murmur2_64(bytes, 0xc70f_6907),
            other => u64::from(other.hash32(bytes)),
        }
    }

    /// HAProxy's request hashes (`src/hash.c`), unsigned bytes, u32
    /// arithmetic; the 64-bit ones truncated.
    pub(crate) fn hash32(self, bytes: &[u8]) -> u32 {
        match self {
            HashFunction::Sdbm => peers::sdbm(bytes),
            HashFunction::Djb2 => peers::djb2(bytes),
            HashFunction::Wt6 => peers::wt6(bytes),
            HashFunction::Crc32 => crc32fast::hash(bytes),
            wide => wide.hash64(bytes) as u32,
        }
    }
}

impl fmt::Display for HashFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for HashFunction {
    type Err = RingError;

    /// Parses a name as written by [`HashFunction::name`]. Errors:
    /// [`RingError::InvalidConfig`] naming the unknown value and the known ones.
    fn from_str(name: &str) -> Result<HashFunction, RingError> {
        HashFunction::ALL.into_iter().find(|h| h.name() == name).ok_or_else(|| RingError::InvalidConfig {
            message: format!(
                "unknown hash_function {name:?}; expected one of {}",
                HashFunction::ALL.map(HashFunction::name).join(", ")
            ),
        })
    }
}

/// MurmurHash3's 64-bit finaliser (`fmix64`, Appleby 2011): a bijection on
/// `u64` whose output bits each depend on every input bit.
#[inline]
pub(crate) fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    h ^= h >> 33;
    h = h.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
    h ^ (h >> 33)
}

/// Value `k` (from 0) of the SplitMix64 stream seeded with `seed` (Steele,
/// Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA
/// 2014; `java.util.SplittableRandom(seed).nextLong()` called `k + 1`
/// times): `mix64(seed + (k + 1) * 0x9e3779b97f4a7c15)`, wrapping. The
/// random values of `jumpback` and the rehashes of `memento`.
#[inline]
pub(crate) fn splitmix64(seed: u64, k: u64) -> u64 {
    let mut z = seed.wrapping_add(k.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// How a ring hashes keys, resolved once from its algorithm and parameters
/// (by each algorithm's scheme).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum KeyRule {
    /// XXH3-64 under the ring's seed ([`hash_key`]).
    Xxh3,
    /// A peer's named 32-bit hash.
    Named(KeyHash),
    /// The Redis Cluster slot ([`key_slot`]).
    Slot,
    /// twemproxy's: a named hash of the key or of its hash tag
    /// ([`tagged_key_hash`]); 0 for an empty key.
    Tagged(KeyHash, Option<[u8; 2]>),
    /// uhashring's: the top 64 bits of the key's 128-bit MD5, big-endian.
    Md5High64,
    /// Envoy's and gRPC's request hash of one header value: XXH64, seed 0.
    Xxh64,
    /// HAProxy's: a request hash function, then `full_hash` when `avalanche`.
    Haproxy(HashFunction, bool),
}

impl KeyRule {
    /// The key's hash under this rule; `seed` applies to [`KeyRule::Xxh3`] only.
    #[inline(always)]
    pub(crate) fn hash(self, key: &[u8], seed: u64) -> u64 {
        match self {
            KeyRule::Xxh3 => hash_key(key, seed),
            peer => peer.peer_hash(key),
        }
    }

    /// The peers' key hashes, kept out of line so the XXH3 path of
    /// [`KeyRule::hash`] stays small enough to inline.
    #[inline(never)]
    fn peer_hash(self, key: &[u8]) -> u64 {
        match self {
            KeyRule::Named(hash) => u64::from(hash.hash(key)),
            KeyRule::Tagged(hash, tag) => u64::from(tagged_key_hash(hash, tag, key)),
            KeyRule::Slot => u64::from(key_slot(key)),
            KeyRule::Md5High64 => md5_high64(key),
            KeyRule::Xxh64 => xxh64(key, 0),
            KeyRule::Haproxy(function, avalanche) => {
                let hash = function.hash32(key);
                u64::from(if avalanche { full_hash(hash) } else { hash })
            }
            KeyRule::Xxh3 => hash_key(key, 0),
        }
    }

    /// The named hash, for the rules that have one.
    pub(crate) fn named(self) -> Option<KeyHash> {
        match self {
            KeyRule::Named(hash) | KeyRule::Tagged(hash, _) => Some(hash),
            _ => None,
        }
    }
}

/// twemproxy's key hash: with a hash tag `ab`, only the bytes between the
/// first `a` and the first `b` after it are hashed, when that `b` exists and
/// is not right after the `a`; otherwise the whole key is. An empty key
/// hashes to 0 (`nc_server.c`, `server_pool_hash`).
pub(crate) fn tagged_key_hash(hash: KeyHash, tag: Option<[u8; 2]>, key: &[u8]) -> u32 {
    if key.is_empty() {
        return 0;
    }
    let tagged = tag.and_then(|[open, close]| {
        let start = key.iter().position(|&b| b == open)? + 1;
        let end = start + key[start..].iter().position(|&b| b == close)?;
        (end > start).then(|| &key[start..end])
    });
    hash.hash(tagged.unwrap_or(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_is_splittable_random() {
        // SplittableRandom(0)'s first three nextLong() values (hash4j's
        // SplitMix64AlgorithmTest, dynatrace-oss/hash4j 41d814f; docs/algorithms.md, *jumpback*).
        assert_eq!(
            [0, 1, 2].map(|k| splitmix64(0, k)),
            [0xe220_a839_7b1d_cdaf, 0x6e78_9e6a_a1b9_65f4, 0x06c4_5d18_8009_454f]
        );
    }

    #[test]
    fn hash_tags_follow_nc_server() {
        let tag = Some(*b"{}");
        let fnv = KeyHash::Fnv1a_64;
        assert_eq!(tagged_key_hash(fnv, tag, b"user:{42}:name"), fnv.hash(b"42"));
        // An empty tag, or no closing byte, hashes the whole key.
        assert_eq!(tagged_key_hash(fnv, tag, b"a{}b"), fnv.hash(b"a{}b"));
        assert_eq!(tagged_key_hash(fnv, tag, b"a{b"), fnv.hash(b"a{b"));
        // A later closing byte is never looked for: `{}x1}y` hashes whole.
        assert_eq!(tagged_key_hash(fnv, tag, b"{}x1}y"), fnv.hash(b"{}x1}y"));
        assert_eq!(tagged_key_hash(fnv, None, b""), 0);
    }

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

    #[test]
    fn names_round_trip_and_unknown_names_are_listed() {
        for hash in KeyHash::ALL {
            assert_eq!(hash.name().parse::<KeyHash>().unwrap(), hash);
            assert_eq!(serde_json::to_string(&hash).unwrap(), format!("\"{}\"", hash.name()));
        }
        let err = "crc".parse::<KeyHash>().unwrap_err().to_string();
        assert!(err.contains("\"crc\"") && err.contains("one_at_a_time"), "{err}");
    }
}
