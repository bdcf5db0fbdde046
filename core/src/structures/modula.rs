//! The modula distribution of libmemcached (`MEMCACHED_DISTRIBUTION_MODULA`)
//! and twemproxy (`distribution: modula`): a table of node indices, a key
//! belonging to entry `hash mod len`. libmemcached's table is its server
//! list; twemproxy's holds `weight` entries per server in server order
//! (`src/hashkit/nc_modula.c`). Replicas follow libmemcached's: entries
//! `(h mod len) + 1, + 2, ...`, wrapping; twemproxy has none and its table
//! is walked alike.

use crate::scheme::{Lookup, mark_table};

/// The table: `0[i]` is a node index.
#[derive(Debug)]
pub(crate) struct Modula(pub(crate) Vec<u32>);

impl Lookup for Modula {
    fn owner(&self, hash: u64) -> usize {
        self.0[(hash % self.0.len() as u64) as usize] as usize
    }

    fn walk(&self, hash: u64, visit: &mut dyn FnMut(usize) -> bool) {
        let first = (hash % self.0.len() as u64) as usize;
        let (after, before) = self.0.split_at(first);
        for &owner in before.iter().chain(after) {
            if visit(owner as usize) {
                return;
            }
        }
    }

    fn mark_live(&self, live: &mut [bool]) {
        mark_table(&self.0, live)
    }

    fn heap_bytes(&self) -> usize {
        self.0.len() * size_of::<u32>()
    }

    fn arc_ends(&self) -> Option<Vec<(u64, usize)>> {
        None
    }

    /// `1/len` per entry a node has.
    fn expected_shares(&self, shares: &mut [f64]) {
        self.0.iter().for_each(|&o| shares[o as usize] += 1.0 / self.0.len() as f64);
    }
}
