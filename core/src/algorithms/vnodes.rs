//! The `ring` algorithm: consistent hashing with weighted virtual nodes
//! (Karger et al., 1997; virtual nodes as in Dynamo, DeCandia et al., 2007).
//! A node of weight `w` gets `round(vnodes * w)` points (at least 1 for
//! `w > 0`), point `i` at [`hash_point`](crate::hash_point)`(id, i, seed)`;
//! equal points are ordered by owner id bytes. Keys hash with XXH3-64 under
//! the seed. Byte-exact rules: `core/SPEC.md`.
//!
//! A node's points depend on it alone, so derivations edit the parent's
//! points instead of rebuilding: adding a node merges its points in
//! (O(P + k log k) for P points and k new ones), removing one filters its
//! points out (O(P)), and a weight change does both for one node.

use std::cmp::Ordering;

use crate::error::RingError;
use crate::hash::KeyRule;
use crate::node::Node;
use crate::params::{DEFAULT_VNODES, Params, RingParams};
use crate::scheme::{Change, Facts, PerNode, Placement, PointHash, Scheme};
use crate::structures::continuum::{Continuum, MAX_POINTS, points_for, sort_by_point_then_id, too_many};

/// The `ring` algorithm.
pub(crate) struct Vnodes;

static FACTS: Facts = Facts { vnodes: Some(DEFAULT_VNODES), seeded: true, ..Facts::DEFAULT };

impl Scheme for Vnodes {
    fn facts(&self) -> &Facts {
        &FACTS
    }

    fn resolve(&self, given: &RingParams) -> Result<Params, RingError> {
        Params::base(given, FACTS.vnodes, KeyRule::Xxh3)
    }

    fn build(
        &self,
        params: &Params,
        nodes: &[Node],
        point_hash: PointHash,
        _: PerNode,
    ) -> Result<Placement, RingError> {
        let mut total: u64 = 0;
        for node in nodes {
            total = total.saturating_add(points_for(node.id(), node.weight(), params.vnodes)?);
            if total > MAX_POINTS {
                return Err(too_many(node.id(), total));
            }
        }
        let mut tagged: Vec<(u64, u32)> = Vec::with_capacity(total as usize);
        for (index, node) in nodes.iter().enumerate() {
            let count = points_for(node.id(), node.weight(), params.vnodes)? as u32;
            let id = node.id().as_bytes();
            tagged.extend((0..count).map(|point| (point_hash(id, point, params.seed), index as u32)));
        }
        sort_by_point_then_id(&mut tagged, nodes);
        let (points, owners) = tagged.into_iter().unzip();
        Ok(Placement::Continuum(Continuum::new(points, owners, 64)))
    }

    fn derive(
        &self,
        params: &Params,
        parent: &Placement,
        nodes: &[Node],
        change: Change,
        point_hash: PointHash,
    ) -> Result<Placement, RingError> {
        let Placement::Continuum(parent) = parent else { unreachable!("a ring's placement is a continuum") };
        let continuum = match change {
            Change::Removed(index) => parent.without_owner(index),
            Change::Added => {
                let index = nodes.len() - 1;
                let count = checked_total(parent, params, &nodes[index], 0)?;
                merged(parent, params, point_hash, nodes, index, count, |_| true)
            }
            Change::Reweighted(index, old_weight) => {
                let node = &nodes[index];
                let old = points_for(node.id(), old_weight, params.vnodes)?;
                let count = checked_total(parent, params, node, old)?;
                merged(parent, params, point_hash, nodes, index, count, |owner| owner != index as u32)
            }
        };
        Ok(Placement::Continuum(continuum))
    }
}

/// Point count of `node` replacing `old` points of the parent, with the
/// ring's total checked against [`MAX_POINTS`].
fn checked_total(parent: &Continuum, params: &Params, node: &Node, old: u64) -> Result<u64, RingError> {
    let count = points_for(node.id(), node.weight(), params.vnodes)?;
    let total = parent.len() as u64 - old + count;
    if total > MAX_POINTS {
        return Err(too_many(node.id(), total));
    }
    Ok(count)
}

/// The parent's points for which `keep(owner)` holds, merged with `count`
/// fresh points of `nodes[index]`, in ring order (equal points by id bytes).
fn merged(
    parent: &Continuum,
    params: &Params,
    point_hash: PointHash,
    nodes: &[Node],
    index: usize,
    count: u64,
    keep: impl Fn(u32) -> bool,
) -> Continuum {
    let id = nodes[index].id().as_bytes();
    let mut fresh: Vec<u64> = (0..count as u32).map(|i| point_hash(id, i, params.seed)).collect();
    fresh.sort_unstable();
    let capacity = parent.len() + fresh.len();
    let (mut points, mut owners) = (Vec::with_capacity(capacity), Vec::with_capacity(capacity));
    let mut fresh = fresh.into_iter().peekable();
    for (point, owner) in parent.points() {
        let owner = owner as u32;
        if !keep(owner) {
            continue;
        }
        while let Some(&new) = fresh.peek() {
            let before = new.cmp(&point).then_with(|| id.cmp(nodes[owner as usize].id().as_bytes()));
            if before == Ordering::Greater {
                break;
            }
            points.push(new);
            owners.push(index as u32);
            fresh.next();
        }
        points.push(point);
        owners.push(owner);
    }
    for new in fresh {
        points.push(new);
        owners.push(index as u32);
    }
    Continuum::new(points, owners, 64)
}
