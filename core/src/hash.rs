//! Every key hash the placement algorithms use, in one place: XXH3-64 for
//! the native algorithms (placement format 1, see `SPEC.md`) and the named
//! 32-bit hashes of the peer systems (libmemcached's libhashkit, twemproxy,
//! nginx, Redis Cluster), bit-exact with their C code on x86-64.
//!
//! Sources: awesomized/libmemcached `src/libhashkit/*.cc`; twitter/twemproxy
//! `src/hashkit/nc_*.c`; the vectors in the tests below are theirs
//! (`test/fixtures/hashes.hpp`, `src/test_all.c`).

use std::fmt;
use std::str::FromStr;

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_64_with_seed;
use xxhash_rust::xxh64::xxh64;

use crate::error::RingError;

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
            KeyHash::OneAtATime => one_at_a_time(key),
            KeyHash::Md5 => md5_word(key, 0),
            KeyHash::Crc16 => crc16_register(key),
            KeyHash::Crc32 => (crc32fast::hash(key) >> 16) & 0x7fff,
            KeyHash::Crc32a => crc32fast::hash(key),
            KeyHash::Fnv1_64 => fnv1_64(key),
            KeyHash::Fnv1a_64 => fnv(key, 0x8422_2325, 0x1b3, true),
            KeyHash::Fnv1_32 => fnv(key, 0x811c_9dc5, 0x0100_0193, false),
            KeyHash::Fnv1a_32 => fnv(key, 0x811c_9dc5, 0x0100_0193, true),
            KeyHash::Hsieh => hsieh(key),
            KeyHash::Murmur => murmur2(key),
            KeyHash::Jenkins => jenkins(key),
            KeyHash::Murmur3 => murmur3(key),
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
            HashFunction::MurmurHash2 => murmur2_64(bytes, 0xc70f_6907),
            other => u64::from(other.hash32(bytes)),
        }
    }

    /// HAProxy's request hashes (`src/hash.c`), unsigned bytes, u32
    /// arithmetic; the 64-bit ones truncated.
    pub(crate) fn hash32(self, bytes: &[u8]) -> u32 {
        match self {
            HashFunction::Sdbm => {
                bytes.iter().fold(0u32, |h, &c| u32::from(c).wrapping_add(h << 6).wrapping_add(h << 16).wrapping_sub(h))
            }
            HashFunction::Djb2 => bytes.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(u32::from(c))),
            HashFunction::Wt6 => wt6(bytes),
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

/// 64-bit MurmurHash2 as libstdc++'s `_Hash_bytes` (`hash_bytes.cc`) and
/// Envoy's `MurmurHash::murmurHash2`: 8-byte words little-endian, a tail of
/// 1 to 7 bytes read little-endian.
pub(crate) fn murmur2_64(bytes: &[u8], seed: u64) -> u64 {
    const MUL: u64 = 0xc6a4_a793_5bd1_e995;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let mut hash = seed ^ (bytes.len() as u64).wrapping_mul(MUL);
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        let data = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        hash ^= shift_mix(data.wrapping_mul(MUL)).wrapping_mul(MUL);
        hash = hash.wrapping_mul(MUL);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        let data = tail.iter().rev().fold(0u64, |v, &b| (v << 8) | u64::from(b));
        hash ^= data;
        hash = hash.wrapping_mul(MUL);
    }
    shift_mix(shift_mix(hash).wrapping_mul(MUL))
}

/// HAProxy's `hash_wt6` (`src/hash.c`). A rotation by 0 gives the value
/// itself, as the C `(v << 0) | (v >> 32)` does on x86-64.
fn wt6(bytes: &[u8]) -> u32 {
    let (mut h0, mut h1, mut s0, mut s1) = (0xa53c_965a_u32, 0x5ca6_953a_u32, 6u32, 18u32);
    for &t in bytes {
        let t = u32::from(t);
        h0 = !(h0 ^ t);
        h1 = !(h1.wrapping_add(t));
        let x = h1.rotate_left(s0);
        h1 = h0.rotate_left(s1);
        h0 = x;
        let u = ((h0 >> 16) ^ h1) & 0xffff;
        s0 = u & 31;
        s1 = u >> 11;
    }
    h0 ^ h1
}

/// HAProxy's `full_hash` (`include/haproxy/intops.h`): Bob Jenkins' 32-bit
/// integer avalanche, the `avalanche` of request hashes and the hash of
/// every node key.
#[inline]
pub(crate) fn full_hash(mut a: u32) -> u32 {
    a = a.wrapping_add(0x7ed5_5d16).wrapping_add(a << 12);
    a = (a ^ 0xc761_c23c) ^ (a >> 19);
    a = a.wrapping_add(0x1656_67b1).wrapping_add(a << 5);
    a = a.wrapping_add(0xd3a2_646c) ^ (a << 9);
    a = a.wrapping_add(0xfd70_46c5).wrapping_add(a << 3);
    a = (a ^ 0xb55a_4f09) ^ (a >> 16);
    a.wrapping_mul(3_221_225_473)
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

/// Number of Redis Cluster hash slots.
pub const SLOT_COUNT: usize = 16_384;

/// The Redis Cluster slot of a key, as `CLUSTER KEYSLOT` gives it:
/// `CRC16/XMODEM mod 16384`; if the key has a `{` followed later by a `}`
/// with at least one byte between the first `{` and the first `}` after it,
/// only those bytes are hashed (Redis Cluster specification, "Keys
/// distribution model").
pub fn key_slot(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let close = key[open + 1..].iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &key[open + 1..open + 1 + close])
    });
    crc16(tagged.unwrap_or(key)) % SLOT_COUNT as u16
}

/// A byte as x86-64 C reads a `char`: signed, sign-extended to 32 bits.
#[inline(always)]
fn signed(byte: u8) -> u32 {
    byte as i8 as i32 as u32
}

/// Word `w` (0..4) of MD5(bytes), little-endian: ketama's point and key hash.
#[inline]
pub(crate) fn md5_word(bytes: &[u8], w: usize) -> u32 {
    let digest = Md5::digest(bytes);
    u32::from_le_bytes(digest[4 * w..4 * w + 4].try_into().expect("4 bytes"))
}

/// The four little-endian words of MD5(bytes).
#[inline]
pub(crate) fn md5_words(bytes: &[u8]) -> [u32; 4] {
    let digest = Md5::digest(bytes);
    std::array::from_fn(|w| u32::from_le_bytes(digest[4 * w..4 * w + 4].try_into().expect("4 bytes")))
}

/// The first 8 bytes of MD5(bytes) as a big-endian integer: the top 64 bits
/// of uhashring's `int(md5(key).hexdigest(), 16)`.
#[inline]
pub(crate) fn md5_high64(bytes: &[u8]) -> u64 {
    let digest = Md5::digest(bytes);
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

fn one_at_a_time(key: &[u8]) -> u32 {
    let mut v = 0u32;
    for &c in key {
        v = v.wrapping_add(signed(c));
        v = v.wrapping_add(v << 10);
        v ^= v >> 6;
    }
    v = v.wrapping_add(v << 3);
    v ^= v >> 11;
    v.wrapping_add(v << 15)
}

fn fnv1_64(key: &[u8]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in key {
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        h ^= c as i8 as i64 as u64;
    }
    h as u32
}

fn fnv(key: &[u8], offset: u32, prime: u32, xor_first: bool) -> u32 {
    let mut h = offset;
    for &c in key {
        if xor_first {
            h ^= signed(c);
            h = h.wrapping_mul(prime);
        } else {
            h = h.wrapping_mul(prime);
            h ^= signed(c);
        }
    }
    h
}

const CRC16_XMODEM: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// CRC16/XMODEM (polynomial 0x1021, initial value 0, no reflection), the
/// CRC Redis Cluster uses; `crc16(b"123456789") == 0x31C3`.
pub fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |crc, &b| (crc << 8) ^ CRC16_XMODEM[usize::from((crc >> 8) as u8 ^ b)])
}

/// twemproxy's `hash_crc16`: the XMODEM table on a 32-bit register never masked.
fn crc16_register(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0u32, |crc, &b| (crc << 8) ^ u32::from(CRC16_XMODEM[(((crc >> 8) ^ u32::from(b)) & 0xff) as usize]))
}

fn hsieh(key: &[u8]) -> u32 {
    if key.is_empty() {
        return 0;
    }
    let get16 = |b: &[u8]| u32::from(u16::from_le_bytes([b[0], b[1]]));
    let mut hash = 0u32;
    let mut blocks = key.chunks_exact(4);
    for block in blocks.by_ref() {
        hash = hash.wrapping_add(get16(block));
        let tmp = (get16(&block[2..]) << 11) ^ hash;
        hash = (hash << 16) ^ tmp;
        hash = hash.wrapping_add(hash >> 11);
    }
    let tail = blocks.remainder();
    match tail.len() {
        3 => {
            hash = hash.wrapping_add(get16(tail));
            hash ^= hash << 16;
            hash ^= signed(tail[2]) << 18;
            hash = hash.wrapping_add(hash >> 11);
        }
        2 => {
            hash = hash.wrapping_add(get16(tail));
            hash ^= hash << 11;
            hash = hash.wrapping_add(hash >> 17);
        }
        1 => {
            hash = hash.wrapping_add(u32::from(tail[0]));
            hash ^= hash << 10;
            hash = hash.wrapping_add(hash >> 1);
        }
        _ => {}
    }
    hash ^= hash << 3;
    hash = hash.wrapping_add(hash >> 5);
    hash ^= hash << 4;
    hash = hash.wrapping_add(hash >> 17);
    hash ^= hash << 25;
    hash.wrapping_add(hash >> 6)
}

fn murmur2(key: &[u8]) -> u32 {
    const M: u32 = 0x5bd1_e995;
    let len = key.len() as u32;
    let mut h = 0xdead_beef_u32.wrapping_mul(len) ^ len;
    let mut blocks = key.chunks_exact(4);
    for block in blocks.by_ref() {
        let mut k = u32::from_le_bytes(block.try_into().expect("4 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> 24;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M) ^ k;
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u32::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^ (h >> 15)
}

fn jenkins(key: &[u8]) -> u32 {
    fn mix(a: &mut u32, b: &mut u32, c: &mut u32) {
        for (x, y, z, r) in [(0, 2, 1, 4), (1, 0, 2, 6), (2, 1, 0, 8), (0, 2, 1, 16), (1, 0, 2, 19), (2, 1, 0, 4)] {
            let mut v = [*a, *b, *c];
            v[x] = v[x].wrapping_sub(v[y]);
            v[x] ^= v[y].rotate_left(r);
            v[y] = v[y].wrapping_add(v[z]);
            [*a, *b, *c] = v;
        }
    }
    fn last(a: &mut u32, b: &mut u32, c: &mut u32) {
        for (x, y, r) in [(2, 1, 14), (0, 2, 11), (1, 0, 25), (2, 1, 16), (0, 2, 4), (1, 0, 14), (2, 1, 24)] {
            let mut v = [*a, *b, *c];
            v[x] ^= v[y];
            v[x] = v[x].wrapping_sub(v[y].rotate_left(r));
            [*a, *b, *c] = v;
        }
    }
    let init = 0xdead_beef_u32.wrapping_add(key.len() as u32).wrapping_add(13);
    let (mut a, mut b, mut c) = (init, init, init);
    if key.is_empty() {
        return c;
    }
    let mut rest = key;
    while rest.len() > 12 {
        let word = |i: usize| u32::from_le_bytes(rest[i..i + 4].try_into().expect("4 bytes"));
        a = a.wrapping_add(word(0));
        b = b.wrapping_add(word(4));
        c = c.wrapping_add(word(8));
        mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    let mut block = [0u8; 12];
    block[..rest.len()].copy_from_slice(rest);
    let word = |i: usize| u32::from_le_bytes(block[i..i + 4].try_into().expect("4 bytes"));
    a = a.wrapping_add(word(0));
    b = b.wrapping_add(word(4));
    c = c.wrapping_add(word(8));
    last(&mut a, &mut b, &mut c);
    c
}

fn murmur3(key: &[u8]) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let len = key.len() as u32;
    let mut h = 0xdead_beef_u32.wrapping_mul(len);
    let mut blocks = key.chunks_exact(4);
    for block in blocks.by_ref() {
        let mut k = u32::from_le_bytes(block.try_into().expect("4 bytes"));
        k = k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
        h ^= k;
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &b) in tail.iter().enumerate() {
            k ^= u32::from(b) << (8 * i);
        }
        h ^= k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    }
    h ^= len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_is_splittable_random() {
        // SplittableRandom(0)'s first three nextLong() values (hash4j's
        // SplitMix64AlgorithmTest; ../shared/specs/modern-algorithms.md).
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

    /// libmemcached `test/fixtures/hashes.hpp`: "apple" and "The quick brown
    /// fox jumps over the lazy dog"; the é row (C3 A9) is libhashkit 1.1.4
    /// as Debian 12 builds it (no upstream vector covers bytes >= 0x80).
    #[test]
    fn libhashkit_vectors() {
        let fox = b"The quick brown fox jumps over the lazy dog".as_slice();
        let table: [(KeyHash, u32, u32, Option<u32>); 10] = [
            (KeyHash::OneAtATime, 2_297_466_611, 1_369_346_549, Some(26_298_542)),
            (KeyHash::Md5, 3_195_025_439, 2_642_219_166, Some(2_546_851_174)),
            (KeyHash::Crc32, 10_542, 16_719, Some(3_588)),
            (KeyHash::Fnv1_64, 473_199_127, 2_112_060_110, Some(3_035_330_621)),
            (KeyHash::Fnv1a_64, 1_488_911_807, 3_890_508_048, Some(3_033_280_513)),
            (KeyHash::Fnv1_32, 67_176_023, 3_922_226_286, Some(376_872_957)),
            (KeyHash::Fnv1a_32, 280_767_167, 76_545_936, Some(1_023_043_777)),
            (KeyHash::Hsieh, 3_738_850_110, 471_461_527, None),
            (KeyHash::Murmur, 4_142_305_122, 818_385_189, Some(2_111_574_343)),
            (KeyHash::Jenkins, 1_442_444_624, 314_054_204, Some(934_048_990)),
        ];
        for (hash, apple, quick, e_acute) in table {
            assert_eq!(hash.hash(b"apple"), apple, "{hash} apple");
            assert_eq!(hash.hash(fox), quick, "{hash} fox");
            if let Some(e) = e_acute {
                assert_eq!(hash.hash("é".as_bytes()), e, "{hash} é");
            }
        }
        assert_eq!(KeyHash::Murmur3.hash(b"apple"), 1_120_212_521);
        assert_eq!(KeyHash::Murmur3.hash(fox), 2_603_515_018);
        assert_eq!(KeyHash::Murmur3.hash("é".as_bytes()), 3_038_764_589);
        // Unsigned bytes would give 2928017647: libhashkit reads a signed char.
        assert_ne!(KeyHash::OneAtATime.hash("é".as_bytes()), 2_928_017_647);
    }

    /// twemproxy `src/test_all.c`, key "apple".
    #[test]
    fn twemproxy_vectors() {
        assert_eq!(KeyHash::Crc16.hash(b"apple"), 3_662_830_516);
        assert_eq!(KeyHash::Crc16.hash(b"apple") & 0xffff, 23_476);
        assert_eq!(u32::from(crc16(b"apple")), 23_476);
        assert_eq!(KeyHash::Crc32a.hash(b"apple"), 2_838_417_488);
        assert_eq!(md5_word(b"server1-8", 0), 3_853_726_576);
        assert_eq!(md5_words(b"server1-8")[3], 2_667_054_752);
    }

    #[test]
    fn empty_keys_hash_as_the_c_code_does() {
        assert_eq!(KeyHash::Hsieh.hash(b""), 0);
        assert_eq!(KeyHash::OneAtATime.hash(b""), 0);
        assert_eq!(KeyHash::Jenkins.hash(b""), 0xdead_beef_u32.wrapping_add(13));
        assert_eq!(KeyHash::Crc32a.hash(b"123456789"), 0xCBF4_3926);
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
