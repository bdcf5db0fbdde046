//! The key hashes of the peer systems, bit-exact with their C code on
//! x86-64: libmemcached's libhashkit and twemproxy's hashkit (one-at-a-time,
//! MD5, the CRCs, the four FNVs, Hsieh, Murmur, Jenkins, Murmur3), ketama's
//! MD5 words, the Redis Cluster slot, HAProxy's request hashes (sdbm, djb2,
//! wt6) and `full_hash`, and the 64-bit MurmurHash2 of libstdc++ and Envoy.
//! [`KeyHash`](super::KeyHash) and [`HashFunction`](super::HashFunction)
//! name them.
//!
//! Sources: awesomized/libmemcached `src/libhashkit/*.cc`; twitter/twemproxy
//! `src/hashkit/nc_*.c`; haproxy/haproxy `src/hash.c`; the vectors in the
//! tests below are theirs (`test/fixtures/hashes.hpp`, `src/test_all.c`).

use md5::{Digest, Md5};

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
pub(super) fn md5_word(bytes: &[u8], w: usize) -> u32 {
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

/// Bob Jenkins' one-at-a-time over signed bytes (libhashkit `one_at_a_time.cc`).
pub(super) fn one_at_a_time(key: &[u8]) -> u32 {
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

/// 64-bit FNV-1 over signed bytes, its low 32 bits (libhashkit `fnv_64.cc`).
pub(super) fn fnv1_64(key: &[u8]) -> u32 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &c in key {
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        h ^= c as i8 as i64 as u64;
    }
    h as u32
}

/// The 32-bit FNVs over signed bytes: FNV-1a when `xor_first`, else FNV-1
/// (libhashkit `fnv_32.cc` and `fnv_64.cc`'s `FNV1A_64`).
pub(super) fn fnv(key: &[u8], offset: u32, prime: u32, xor_first: bool) -> u32 {
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
pub(super) fn crc16_register(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0u32, |crc, &b| (crc << 8) ^ u32::from(CRC16_XMODEM[(((crc >> 8) ^ u32::from(b)) & 0xff) as usize]))
}

/// Paul Hsieh's SuperFastHash started from 0 (libhashkit `hsieh.cc`).
pub(super) fn hsieh(key: &[u8]) -> u32 {
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

/// 32-bit MurmurHash2 with seed `0xdeadbeef * len` (libhashkit `murmur.cc`).
pub(super) fn murmur2(key: &[u8]) -> u32 {
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

/// Bob Jenkins' lookup3 `hashlittle` with initval 13 (libhashkit `jenkins.cc`).
pub(super) fn jenkins(key: &[u8]) -> u32 {
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

/// MurmurHash3 x86_32 with seed `0xdeadbeef * len` (libhashkit `murmur3.cc`).
pub(super) fn murmur3(key: &[u8]) -> u32 {
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

/// 64-bit MurmurHash2 as libstdc++'s `_Hash_bytes` (`hash_bytes.cc`) and
/// Envoy's `MurmurHash::murmurHash2`: 8-byte words little-endian, a tail of
/// 1 to 7 bytes read little-endian.
pub(super) fn murmur2_64(bytes: &[u8], seed: u64) -> u64 {
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
pub(super) fn wt6(bytes: &[u8]) -> u32 {
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

/// HAProxy's `hash_sdbm` (`src/hash.c`): `h = c + (h << 6) + (h << 16) - h`
/// per byte, unsigned bytes, u32 arithmetic.
#[inline]
pub(super) fn sdbm(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0u32, |h, &c| u32::from(c).wrapping_add(h << 6).wrapping_add(h << 16).wrapping_sub(h))
}

/// HAProxy's `hash_djb2` (`src/hash.c`): `h = h * 33 + c` per byte from
/// 5381, unsigned bytes, u32 arithmetic.
#[inline]
pub(super) fn djb2(bytes: &[u8]) -> u32 {
    bytes.iter().fold(5381u32, |h, &c| h.wrapping_mul(33).wrapping_add(u32::from(c)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::{HashFunction, KeyHash};

    /// Check values from outside this crate: Envoy's own test of its
    /// `MurmurHash::murmurHash2` (`test/common/common/hash_test.cc`, seed
    /// `STD_HASH_SEED` = 0xc70f6907), Apache Kudu's `TestMurmur2Hash64`
    /// (`src/kudu/util/hash_util-test.cc`, seeds 0 and 42), and SMHasher's
    /// verification value of MurmurHash64A, 0x1F0D3804 (keys `[0]`,
    /// `[0, 1]`, ... of lengths 0 to 255 with seed `256 - length`, their
    /// hashes concatenated little-endian and hashed with seed 0; the low 32
    /// bits of that hash).
    #[test]
    fn murmur2_64_matches_published_check_values() {
        for (text, hash) in [
            ("foo", 9_631_199_822_919_835_226_u64),
            ("bar", 11_474_628_671_133_349_555),
            ("foo\nbar", 16_306_510_975_912_980_159),
            ("lyft", 12_847_078_931_730_529_320),
            ("", 6_142_509_188_972_423_790),
        ] {
            assert_eq!(murmur2_64(text.as_bytes(), 0xc70f_6907), hash, "{text:?}");
            assert_eq!(HashFunction::MurmurHash2.hash64(text.as_bytes()), hash, "{text:?}");
        }
        assert_eq!(murmur2_64(b"ab", 0), 7_115_271_465_109_541_368);
        assert_eq!(murmur2_64(b"abcdefg", 0), 2_601_573_339_036_254_301);
        assert_eq!(murmur2_64(b"quick brown fox", 42), 3_575_930_248_840_144_026);
        let key: Vec<u8> = (0..=255).collect();
        let hashes: Vec<u8> =
            (0..256).flat_map(|len| murmur2_64(&key[..len], 256 - len as u64).to_le_bytes()).collect();
        assert_eq!(murmur2_64(&hashes, 0) as u32, 0x1F0D_3804);
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
}
