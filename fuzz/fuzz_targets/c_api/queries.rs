//! Read-only calls on a ring: the node accessors (`ring_node_id`,
//! `ring_node_weight`), lookups by key and by hash (`ring_get_node`,
//! `ring_get_node_by_hash`, `ring_get_nodes`, `ring_get_node_batch`) and
//! `ring_ownership`.

use std::ptr;

use ring::ring_result::*;
use shardring::RingError;

use crate::codes::{Expect, check_code, check_index_code};
use crate::input::{Bytes, Index, Nulls, Pick};
use crate::strings::{key_of, pointer, returned_bytes};
use crate::world::World;

impl World {
    pub(crate) fn node_info(&mut self, pick: Pick, index: Index, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let count = shadow.as_ref().map_or(0, |s| s.nodes().len());
        let index = index.get(count);
        let (id_null, len_null, weight_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let in_range = index < count;
        let (mut id, mut id_len, mut weight) = (ptr::null(), usize::MAX, f64::NAN);
        // SAFETY: NULL or live handle; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_node_id(
                ptr,
                index,
                if id_null { ptr::null_mut() } else { &mut id },
                if len_null { ptr::null_mut() } else { &mut id_len },
            )
        };
        check_index_code("ring_node_id", code, ptr.is_null() || id_null || len_null, in_range);
        if code == RING_OK {
            // SAFETY: the id is valid while the ring lives.
            let bytes = unsafe { returned_bytes(id, id_len) };
            assert_eq!(bytes, shadow.as_ref().unwrap().nodes()[index].id().as_bytes());
        } else {
            assert!(id.is_null() && id_len == usize::MAX, "ring_node_id wrote on failure");
        }
        // SAFETY: as above.
        let code =
            unsafe { ring::ring_node_weight(ptr, index, if weight_null { ptr::null_mut() } else { &mut weight }) };
        check_index_code("ring_node_weight", code, ptr.is_null() || weight_null, in_range);
        if code == RING_OK {
            assert_eq!(weight.to_bits(), shadow.unwrap().nodes()[index].weight().to_bits());
        } else {
            assert!(weight.is_nan(), "ring_node_weight wrote on failure");
        }
    }

    pub(crate) fn get_node(&mut self, pick: Pick, key: &Bytes, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, len) = key.get();
        let (index_null, id_null, len_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || index_null, RING_NULL_ARGUMENT);
        let key = key_of(&bytes, len);
        expect.problem_if(key.is_none(), RING_NULL_ARGUMENT);
        let core = match (&shadow, &key) {
            (Some(shadow), Some(key)) => Some(shadow.get_index(key)),
            _ => None,
        };
        expect.core = core.clone().map(|r| r.map(|_| ()));
        let (mut index, mut id, mut id_len) = (usize::MAX, ptr::null(), usize::MAX);
        // SAFETY: key valid for `len` bytes or NULL; out-pointers NULL or writable.
        let code = unsafe {
            ring::ring_get_node(
                ptr,
                pointer(&bytes).cast(),
                len,
                if index_null { ptr::null_mut() } else { &mut index },
                if id_null { ptr::null_mut() } else { &mut id },
                if len_null { ptr::null_mut() } else { &mut id_len },
            )
        };
        check_code("ring_get_node", code, &expect);
        if code != RING_OK {
            assert!(index == usize::MAX && id.is_null() && id_len == usize::MAX, "ring_get_node wrote on failure");
            return;
        }
        let (shadow, want) = (shadow.unwrap(), core.unwrap().unwrap());
        assert_eq!(index, want, "ring_get_node index");
        if !id_null && !len_null {
            // SAFETY: valid while the ring lives.
            assert_eq!(unsafe { returned_bytes(id, id_len) }, shadow.nodes()[want].id().as_bytes());
        } else {
            assert!(id.is_null() && id_len == usize::MAX, "ring_get_node wrote half an id");
        }
    }

    pub(crate) fn get_node_by_hash(&mut self, pick: Pick, hash: u64, narrow: bool, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let hash = match (&shadow, narrow) {
            (Some(shadow), true) if shadow.algorithm().hash_bits() < 64 => {
                hash & ((1 << shadow.algorithm().hash_bits()) - 1)
            }
            _ => hash,
        };
        let out_null = nulls.null(0);
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || out_null, RING_NULL_ARGUMENT);
        let core = shadow.as_ref().map(|s| s.index_by_hash(hash));
        expect.core = core.clone().map(|r| r.map(|_| ()));
        let mut index = usize::MAX;
        // SAFETY: NULL or live; out NULL or writable.
        let code =
            unsafe { ring::ring_get_node_by_hash(ptr, hash, if out_null { ptr::null_mut() } else { &mut index }) };
        check_code("ring_get_node_by_hash", code, &expect);
        if code == RING_OK {
            assert_eq!(index, core.unwrap().unwrap());
        } else {
            assert_eq!(index, usize::MAX, "ring_get_node_by_hash wrote on failure");
        }
    }

    pub(crate) fn get_nodes(&mut self, pick: Pick, key: &Bytes, len: usize, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let (bytes, key_len) = key.get();
        let (out_null, count_null) = (nulls.null(0), nulls.null(1));
        let mut out = vec![usize::MAX; len];
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null() || count_null || (out_null && len > 0), RING_NULL_ARGUMENT);
        let key = key_of(&bytes, key_len);
        expect.problem_if(key.is_none(), RING_NULL_ARGUMENT);
        let core = match (&shadow, &key) {
            (Some(shadow), Some(key)) => {
                let mut want = vec![usize::MAX; len];
                Some(shadow.get_n_indices(key, &mut want).map(|found| want[..found].to_vec()))
            }
            _ => None,
        };
        expect.core = core.clone().map(|r| r.map(|_| ()));
        let mut count = usize::MAX;
        // SAFETY: `out` holds `len` elements (or is NULL); key valid or NULL.
        let code = unsafe {
            ring::ring_get_nodes(
                ptr,
                pointer(&bytes).cast(),
                key_len,
                if out_null { ptr::null_mut() } else { out.as_mut_ptr() },
                len,
                if count_null { ptr::null_mut() } else { &mut count },
            )
        };
        check_code("ring_get_nodes", code, &expect);
        if code != RING_OK {
            assert!(count == usize::MAX && out.iter().all(|&i| i == usize::MAX), "ring_get_nodes wrote on failure");
            return;
        }
        let want = core.unwrap().unwrap();
        let shadow = shadow.unwrap();
        assert_eq!(count, want.len().min(len));
        assert_eq!(count, len.min(shadow.live_node_count()));
        assert_eq!(&out[..count], &want[..], "ring_get_nodes list");
        assert!(out[count..].iter().all(|&i| i == usize::MAX), "ring_get_nodes wrote past the list");
        assert!(out[..count].iter().all(|&i| i < shadow.nodes().len()));
    }

    pub(crate) fn batch(&mut self, pick: Pick, keys: &[Bytes], extra: i8, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let keys: Vec<(Option<Vec<u8>>, usize)> = keys.iter().map(Bytes::get).collect();
        let key_count = keys.len();
        let out_len = (key_count as isize + isize::from(extra % 4)).max(0) as usize;
        let (keys_null, lens_null, out_null) = (nulls.null(0), nulls.null(1), nulls.null(2));
        let key_ptrs: Vec<*const u8> = keys.iter().map(|(b, _)| pointer(b).cast()).collect();
        let key_lens: Vec<usize> = keys.iter().map(|&(_, len)| len).collect();
        let mut out = vec![usize::MAX; out_len];

        let mut expect = Expect::new();
        expect.problem_if(key_count > 0 && (keys_null || lens_null || out_null), RING_NULL_ARGUMENT);
        expect.problem_if(out_len < key_count, RING_BUFFER_TOO_SMALL);
        expect.problem_if(ptr.is_null(), RING_NULL_ARGUMENT);
        let readable: Option<Vec<Vec<u8>>> = keys.iter().map(|(b, len)| key_of(b, *len)).collect();
        expect.problem_if(readable.is_none(), RING_NULL_ARGUMENT);
        let core: Option<Result<Vec<usize>, RingError>> = shadow.as_ref().map(|shadow| {
            if shadow.live_node_count() == 0 {
                return Err(RingError::EmptyRing);
            }
            Ok(readable.iter().flatten().map(|key| shadow.get_index(key).unwrap()).collect())
        });
        expect.core = core.clone().map(|r| r.map(|_| ()));
        // SAFETY: the arrays hold `key_count` elements, keys valid for their
        // lengths (or NULL), `out` holds `out_len` elements (or is NULL).
        let code = unsafe {
            ring::ring_get_node_batch(
                ptr,
                if keys_null { ptr::null() } else { key_ptrs.as_ptr() },
                if lens_null { ptr::null() } else { key_lens.as_ptr() },
                key_count,
                if out_null { ptr::null_mut() } else { out.as_mut_ptr() },
                out_len,
            )
        };
        check_code("ring_get_node_batch", code, &expect);
        if code != RING_OK {
            assert!(out.iter().all(|&i| i == usize::MAX), "ring_get_node_batch wrote on failure");
            return;
        }
        let want = core.unwrap().unwrap();
        assert_eq!(&out[..key_count], &want[..], "ring_get_node_batch indices");
        assert!(out[key_count..].iter().all(|&i| i == usize::MAX), "ring_get_node_batch wrote past key_count");
    }

    pub(crate) fn ownership(&mut self, pick: Pick, len: usize, nulls: Nulls) {
        let (ptr, shadow) = self.ring(pick);
        let out_null = nulls.null(0);
        let mut out = vec![-7.0f64; len];
        let mut expect = Expect::new();
        expect.problem_if(ptr.is_null(), RING_NULL_ARGUMENT);
        if let Some(shadow) = &shadow {
            let nodes = shadow.nodes().len();
            expect.problem_if(len < nodes, RING_BUFFER_TOO_SMALL);
            expect.problem_if(out_null && nodes > 0, RING_NULL_ARGUMENT);
        }
        expect.core = Some(Ok(()));
        // SAFETY: `out` holds `len` elements or is NULL.
        let code = unsafe { ring::ring_ownership(ptr, if out_null { ptr::null_mut() } else { out.as_mut_ptr() }, len) };
        check_code("ring_ownership", code, &expect);
        if code != RING_OK {
            assert!(out.iter().all(|&s| s == -7.0), "ring_ownership wrote on failure");
            return;
        }
        let shadow = shadow.unwrap();
        let shares = shadow.ownership();
        for (i, (_, share)) in shares.iter().enumerate() {
            assert_eq!(out[i].to_bits(), share.to_bits(), "share of node {i}");
            assert!((0.0..=1.0).contains(&out[i]));
        }
        assert!(out[shares.len()..].iter().all(|&s| s == -7.0), "ring_ownership wrote past the node count");
    }
}
