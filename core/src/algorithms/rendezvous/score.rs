//! Rendezvous's `integer` score: `-log2(u)` in 64-bit fixed point by
//! integer operations only ([`neg_log2`]), so every platform ranks every
//! node alike (`core/SPEC.md`, *rendezvous*). The algorithm divides a
//! node's weight ratio by it.

/// `round(2^64 * log2(1 + i / 256))` for `i` in `0..256` (computed with 80
/// significant digits; `tests::table_is_log2` checks every entry).
const LOG2_TABLE: [u64; 256] = [
    0x0000000000000000,
    0x01709c46d7aac775,
    0x02dfca16dde10a30,
    0x044d8c45ea5ec313,
    0x05b9e5a170b48a63,
    0x0724d8eea143e19a,
    0x088e68ea899a0977,
    0x09f6984a342d1310,
    0x0b5d69bac77ec399,
    0x0cc2dfe1a4a8ca30,
    0x0e26fd5c8555af7a,
    0x0f89c4c19929cfd1,
    0x10eb389fa29f9ab4,
    0x124b5b7e135a3c8a,
    0x13aa2fdd27f1c2d8,
    0x1507b836033bb6d5,
    0x1663f6fac913167d,
    0x17beee96b8a2813c,
    0x1918a16e46335aae,
    0x1a7111df348493eb,
    0x1bc84240adabba64,
    0x1d1e34e35b82da4d,
    0x1e72ec117fa5b21d,
    0x1fc66a0f0b00a490,
    0x2118b119b4f3c72c,
    0x2269c369120c5bfe,
    0x23b9a32eaa56f6bd,
    0x250852960f4c7f1b,
    0x2655d3c4f15c343f,
    0x27a228db3514c7e0,
    0x28ed53f307ee9a62,
    0x2a375720f4b91491,
    0x2b803473f7ad0f3f,
    0x2cc7edf592262cfa,
    0x2e0e85a9de04fe54,
    0x2f53fd8fa0bbbde3,
    0x309857a05e0765fc,
    0x31db95d06a56d76c,
    0x331dba0efce1be06,
    0x345ec6464170d594,
    0x359ebc5b69d927e0,
    0x36dd9e2ebf2bd2d8,
    0x381b6d9bb29bdc82,
    0x39582c78ee1b912e,
    0x3a93dc9864b2df92,
    0x3bce7fc762901dc3,
    0x3d0817ce9cd49990,
    0x3e40a672411e4e8f,
    0x3f782d7204d01447,
    0x40aeae8934198eec,
    0x41e42b6ec0c025bc,
    0x4318a5d550aa3a94,
    0x444c1f6b4c2dd72c,
    0x457e99daec23fd66,
    0x46b016ca47c1c14a,
    0x47e097db62384cb0,
    0x49101eac381ce609,
    0x4a3eacd6cc9a0d8c,
    0x4b6c43f1366abdbc,
    0x4c98e58daca0d66c,
    0x4dc4933a9337b366,
    0x4eef4e828773ea56,
    0x501918ec6c1125d7,
    0x5141f3fb753f0e53,
    0x5269e12f346e2bf9,
    0x5390e203a3eda7ef,
    0x54b6f7f1325acdf7,
    0x55dc246ccde32ac4,
    0x570068e7ef5a1e7f,
    0x5823c6d0a522b65c,
    0x59463f919dee9b95,
    0x5a67d4923352e1a3,
    0x5b8887367433795e,
    0x5ca858df2f060a51,
    0x5dc74ae9fbecef92,
    0x5ee55eb146ab115e,
    0x6002958c587150cb,
    0x611ef0cf6186371f,
    0x623a71cb82c89693,
    0x635519ced70dc6ad,
    0x646eea247c5c22d3,
    0x6587e4149d026e34,
    0x66a008e4788cbcd3,
    0x67b759d66c977e23,
    0x68cdd829fd814276,
    0x69e3851bdefbd14a,
    0x6af861e5fc7d2387,
    0x6c0c6fbf8190d19a,
    0x6d1fafdce20a8290,
    0x6e32236fe219e65d,
    0x6f43cba79e40c2ad,
    0x7054a9b0932b9701,
    0x7164beb4a56d59fa,
    0x72740bdb291ecf4e,
    0x73829248e961f325,
    0x749053202fc9f548,
    0x759d4f80cba83bf9,
    0x76a98888193ee405,
    0x77b4ff5108d9313b,
    0x78bfb4f425ca6038,
    0x79c9aa879d534831,
    0x7ad2e11f456f3950,
    0x7bdb59cca38881f4,
    0x7ce3159ef3150344,
    0x7dea15a32c1b3b38,
    0x7ef05ae409a0288f,
    0x7ff5e66a0ffe6ae7,
    0x80fab93b9326ff92,
    0x81fed45cbccbf99d,
    0x830238cf927591f5,
    0x8404e793fb81ea93,
    0x8506e1a7c70fde00,
    0x86082806b1d532c4,
    0x8708bbaa6be0889d,
    0x88089d8a9e4753d9,
    0x8907ce9cf0c0396a,
    0x8a064fd50f2a1cf1,
    0x8b042224af00303c,
    0x8c01467b94bb5276,
    0x8cfdbdc799210b8b,
    0x8df988f4ae806f1e,
    0x8ef4a8ece5dd30c4,
    0x8fef1e9874093212,
    0x90e8eaddb6acd18b,
    0x91e20ea1393e4040,
    0x92da8ac5b9e822b4,
    0x93d2602c2e5fc02c,
    0x94c98fb3c8ab0290,
    0x95c01a39fbd687a0,
    0x96b6009a809c0325,
    0x97ab43af59f930a1,
    0x989fe450d9b791d0,
    0x9993e355a4e53643,
    0x9a874192b83ec743,
    0x9b79ffdb6c8b1202,
    0x9c6c1f017ae84941,
    0x9d5d9fd5010b3666,
    0x9e4e832485709116,
    0x9f3ec9bcfb80b357,
    0xa02e7469c7a5df5f,
    0xa11d83f4c3554b38,
    0xa20bf926410b256e,
    0xa2f9d4c51039c527,
    0xa3e71796812c371a,
    0xa4d3c25e68dc57f2,
    0xa5bfd5df24bcabe3,
    0xa6ab52d99e762253,
    0xa7963a0d4f99f3bb,
    0xa8808c384547c6ef,
    0xa96a4a1723c84a78,
    0xaa5374652a1c6d8e,
    0xab3c0bdc358163d9,
    0xac241134c4e99e1c,
    0xad0b8525fc6ae15e,
    0xadf26865a8a1a557,
    0xaed8bba84209e24e,
    0xafbe7fa0f04d75c6,
    0xb0a3b5018d8844ce,
    0xb1885c7aa9824203,
    0xb26c76bb8cdf7cc4,
    0xb35004723c465e69,
    0xb433064b7b7c39bc,
    0xb5157cf2d0785040,
    0xb5f76912866d705c,
    0xb6d8cb53b0ca4ecc,
    0xb7b9a45e2e30bd34,
    0xb899f4d8ab63df29,
    0xb979bd68a62d7e5d,
    0xba58feb2703a9e37,
    0xbb37b95931ef6e6f,
    0xbc15edfeed32bbde,
    0xbcf39d448030fe26,
    0xbdd0c7c9a817204f,
    0xbead6e2d03c52202,
    0xbf89910c1678ae89,
    0xc06531034a6fc649,
    0xc1404eadf38396df,
    0xc21aeaa651bb9dbe,
    0xc2f5058593d93084,
    0xc3ce9fe3d9db85f3,
    0xc4a7ba58377c5a03,
    0xc5805578b6a5470b,
    0xc65871da59dded9b,
    0xc73010111eb3043f,
    0xc80730b0001667f2,
    0xc8ddd448f8b845a6,
    0xc9b3fb6d055974e6,
    0xca89a6ac27171b3a,
    0xcb5ed69565afaf7f,
    0xcc338bb6d1c1742a,
    0xcd07c69d87027ef5,
    0xcddb87d5ae726421,
    0xceaecfea80859b33,
    0xcf819f66474ab28e,
    0xd053f6d260896732,
    0xd125d6b73fdbb557,
    0xd1f73f9c70c0f684,
    0xd2c8320898ab212f,
    0xd398ae8179063deb,
    0xd468b58bf13a2596,
    0xd53847ac00a69be7,
    0xd6076564c899d942,
    0xd6d60f388e41968b,
    0xd7a445a8bc96ad5c,
    0xd8720935e6435ebd,
    0xd93f5a5fc7845237,
    0xda0c39a548045ecc,
    0xdad8a7847cb32f34,
    0xdba4a47aa996d25a,
    0xdc703104439848ea,
    0xdd3b4d9cf24b2078,
    0xde05fabf91b02c8f,
    0xded038e633f36da9,
    0xdf9a088a232535e7,
    0xe0636a23e2ee9b17,
    0xe12c5e2b3241455c,
    0xe1f4e5170d02a99b,
    0xe2bcff5dadb2be89,
    0xe384ad748f0e3b06,
    0xe44befd06dac6c3a,
    0xe512c6e54998b1b0,
    0xe5d9332667e7ad76,
    0xe69f350654483612,
    0xe764ccf6e29017eb,
    0xe829fb693044b399,
    0xe8eec0cda61f8649,
    0xe9b31d93f98ea94c,
    0xea77122b2e315597,
    0xeb3a9f01975077f2,
    0xebfdc484d953623d,
    0xecc08321eb30a61e,
    0xed82db4517db253e,
    0xee44cd59ffab62f3,
    0xef0659cb99c52334,
    0xefc781043579625f,
    0xf088436d7ba4b14f,
    0xf148a170700a00fe,
    0xf2089b7572a9e8d7,
    0xf2c831e4411672b1,
    0xf3876523f7c37731,
    0xf446359b13539551,
    0xf504a3af71e1cf72,
    0xf5c2afc65447d86a,
    0xf6805a445f611ab8,
    0xf73da38d9d4a83eb,
    0xf7fa8c057e9f1e32,
    0xf8b7140edbb181d9,
    0xf9733c0bf5c22856,
    0xfa2f045e7832aa72,
    0xfaea6d6779b5f2e8,
    0xfba577877d7d6ebd,
    0xfc60231e74634473,
    0xfd1a708bbe119b15,
    0xfdd4602e2a26f9fd,
    0xfe8df263f957ca16,
    0xff47278ade8d012f,
];

/// `floor(2^65 / (256 + i))`: `1 / (1 + i / 256)` scaled so that a 55-bit
/// offset times it, shifted right by 56, is that offset's ratio in units of 2^-64.
const RECIPROCALS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        table[i] = ((1u128 << 65) / (256 + i as u128)) as u64;
        i += 1;
    }
    table
};

/// `round(2^64 / j)` for `j = 2..=6`, and `round(2^63 / ln 2)`.
const K2: u64 = 0x8000_0000_0000_0000;
const K3: u64 = 0x5555_5555_5555_5555;
const K4: u64 = 0x4000_0000_0000_0000;
const K5: u64 = 0x3333_3333_3333_3333;
const K6: u64 = 0x2aaa_aaaa_aaaa_aaab;
const INV_LN2: u64 = 0xb8aa_3b29_5c17_f0bc;

/// The high 64 bits of a 64 x 64-bit product.
#[inline(always)]
fn hi(a: u64, b: u64) -> u64 {
    ((u128::from(a) * u128::from(b)) >> 64) as u64
}

/// `-log2(y / 2^64)` for `y >= 1`, in fixed point with 57 fractional bits
/// (at least 1), by integer operations only (`core/SPEC.md`, *rendezvous*):
/// `y = 2^e * m` with `m` in [1, 2); `log2 m = log2(1 + i/256) + log2(1 +
/// rho)`, the first from [`LOG2_TABLE`], the second from the series of
/// `ln(1 + rho)` to `rho^6` (`rho < 2^-8`, so the first term left out is
/// below 2^-58.8) times `1 / ln 2`. Within 2 units of the true value.
#[inline]
pub(super) fn neg_log2(y: u64) -> u64 {
    debug_assert!(y >= 1);
    let e = 63 - y.leading_zeros();
    let t = y << (63 - e);
    let i = ((t >> 55) & 0xff) as usize;
    let offset = t & ((1 << 55) - 1);
    let rho = ((u128::from(offset) * u128::from(RECIPROCALS[i])) >> 56) as u64;
    let mut h = K5 - hi(rho, K6);
    h = K4 - hi(rho, h);
    h = K3 - hi(rho, h);
    h = K2 - hi(rho, h);
    let ln1p = rho - hi(rho, hi(rho, h));
    let fraction = ((u128::from(ln1p) * u128::from(INV_LN2)) >> 63) as u64;
    let log2_m = LOG2_TABLE[i].saturating_add(fraction);
    (u64::from(64 - e) << 57) - (log2_m >> 7)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::fmix64;

    /// `(a * b) >> 128` for 128-bit `a`, `b`.
    fn mul_hi_128(a: u128, b: u128) -> u128 {
        let (a1, a0, b1, b0) = (a >> 64, a & u128::from(u64::MAX), b >> 64, b & u128::from(u64::MAX));
        let (high, cross1, cross2, low) = (a1 * b1, a1 * b0, a0 * b1, a0 * b0);
        let middle = (low >> 64) + (cross1 & u128::from(u64::MAX)) + (cross2 & u128::from(u64::MAX));
        high + (cross1 >> 64) + (cross2 >> 64) + (middle >> 64)
    }

    /// `log2(t / 2^63)` for `t` in [2^63, 2^64), times 2^64, to within a
    /// unit or two: 64 digits of the squaring algorithm in 126-bit fixed point.
    fn reference_log2(t: u64) -> u64 {
        let two = 1u128 << 127;
        let mut z = u128::from(t) << 63;
        let mut bits = 0u64;
        for _ in 0..64 {
            z = mul_hi_128(z, z) << 2;
            bits <<= 1;
            if z >= two {
                bits |= 1;
                z >>= 1;
            }
        }
        bits
    }

    #[test]
    fn table_is_log2() {
        for (i, &entry) in LOG2_TABLE.iter().enumerate() {
            let reference = reference_log2((256 + i as u64) << 55);
            assert!(entry.abs_diff(reference) <= 2, "entry {i}: {entry:#x}, reference {reference:#x}");
        }
    }

    #[test]
    fn neg_log2_is_within_two_units() {
        let check = |y: u64| {
            let e = 63 - y.leading_zeros();
            let t = y << (63 - e);
            // 64 - e - log2(m), with 57 fractional bits, from the reference.
            let exact = (u128::from(64 - e) << 64) - u128::from(reference_log2(t));
            let want = (exact >> 7) as u64;
            let got = neg_log2(y);
            assert!(got.abs_diff(want) <= 2, "y {y:#x}: {got:#x}, reference {want:#x}");
            assert!(got >= 1);
        };
        let mut state = 0x243f_6a88_85a3_08d3u64;
        for i in 0..100_000u64 {
            state = fmix64(state.wrapping_add(i));
            check(state | 1);
            check((state >> (i % 64)) | 1);
        }
        for y in [1, 3, 255, 257, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, u64::MAX, u64::MAX - 2] {
            check(y);
        }
        for i in 0..256u64 {
            for offset in [0, 1, (1 << 55) - 1] {
                check(((256 + i) << 55) | offset | 1);
            }
        }
    }
}
