//! What `rebalance` refuses before any key is copied: an id given two
//! addresses, an address naming no node, a node with no server address,
//! and two nodes that reach one server (by address or by the identity the
//! server answers with).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::address::{self, Address, Reached};
use super::args::Args;
use super::backend::Backend;
use super::plan::Plan;
use crate::error::CliError;

/// Why two nodes on one server are refused.
const SAME_SERVER: &str = "a key moving between them would be copied onto itself, found already there, and \
                           deleted by --delete; give each node a server of its own";

impl Args {
    /// Refuses, before any server is contacted, a node of `plan` that has
    /// no `--address` and whose id is no `HOST:PORT`, and two nodes of
    /// either ring that reach one server (through `--address` or their ids):
    /// a key moving between them would be copied onto itself, found
    /// already there, and deleted by `--delete`.
    pub(super) fn check_servers(&self, plan: &Plan) -> Result<(), CliError> {
        let mut ids: Vec<&str> = Vec::new();
        for node in plan.old.nodes().iter().chain(plan.new.nodes()) {
            if !ids.contains(&node.id()) {
                ids.push(node.id());
            }
        }
        let mut own: Vec<(&str, Address)> = Vec::new();
        for &id in &ids {
            if self.addresses.iter().any(|(node, _)| node == id) {
                continue;
            }
            let address = Address::parse(id).map_err(|reason| {
                CliError::Rebalance(format!(
                    "node {id:?} has no --address and its id is not a server address HOST:PORT ({reason}): \
                     give --address {id}=HOST:PORT"
                ))
            })?;
            own.push((id, address));
        }
        let reached: Vec<Reached<'_>> = ids
            .iter()
            .map(|&id| match self.addresses.iter().find(|(node, _)| node == id) {
                Some((_, address)) => Reached { id, address, given: true },
                None => {
                    let address = &own.iter().find(|(node, _)| *node == id).expect("parsed above").1;
                    Reached { id, address, given: false }
                }
            })
            .collect();
        match address::shared_server(&reached) {
            Some(shared) => Err(CliError::Rebalance(format!("{shared}: {SAME_SERVER}"))),
            None => Ok(()),
        }
    }

    /// Refuses an id given two addresses: which one was meant?
    pub(super) fn check_addresses(&self) -> Result<(), CliError> {
        for (i, (id, address)) in self.addresses.iter().enumerate() {
            if let Some((_, other)) = self.addresses[..i].iter().find(|(earlier, _)| earlier == id) {
                return Err(CliError::Rebalance(format!(
                    "--address {id}={}: node {id:?} was given an address already ({}); give each node one",
                    address.as_str(),
                    other.as_str()
                )));
            }
        }
        Ok(())
    }

    /// The `--address`es whose id is a node of neither ring of `plan`.
    pub(super) fn unused_addresses<'a>(&'a self, plan: &'a Plan) -> impl Iterator<Item = &'a (String, Address)> {
        let known = |id: &str| plan.old.nodes().iter().chain(plan.new.nodes()).any(|n| n.id() == id);
        self.addresses.iter().filter(move |(id, _)| !known(id))
    }

    /// Refuses an `--address` whose id is a node of neither ring (a typo
    /// would otherwise leave the node reached at its id, and the address
    /// unused).
    pub(super) fn check_addresses_name_nodes(&self, plan: &Plan, from: &Path, to: &Path) -> Result<(), CliError> {
        let Some((id, address)) = self.unused_addresses(plan).next() else { return Ok(()) };
        let mut ids: Vec<&str> = plan.old.nodes().iter().chain(plan.new.nodes()).map(|n| n.id()).collect();
        ids.sort_unstable();
        ids.dedup();
        let more = ids.len().saturating_sub(8);
        let mut listed = ids.iter().take(8).map(|id| format!("{id:?}")).collect::<Vec<_>>().join(", ");
        if more > 0 {
            listed.push_str(&format!(" and {more} more"));
        }
        Err(CliError::Rebalance(format!(
            "--address {id}={}: no node {id:?} in {} or {} (their nodes: {listed})",
            address.as_str(),
            from.display(),
            to.display()
        )))
    }
}

/// Each node's server identity ([`Backend::identity`]), refusing two nodes
/// whose servers give the same one: addresses that differ (a host's LAN
/// address and 127.0.0.1) can still reach one server. A server that does
/// not answer is left out; it fails when it is used.
pub(super) fn identities(
    args: &Args,
    plan: &Plan,
    store: &mut dyn Backend,
) -> Result<HashMap<String, String>, CliError> {
    let mut identities: HashMap<String, String> = HashMap::new();
    let mut asked = HashSet::new();
    for id in plan.old.nodes().iter().chain(plan.new.nodes()).map(|n| n.id()) {
        if !asked.insert(id) {
            continue;
        }
        let address = args.address(id);
        let Ok(Some(identity)) = store.identity(address) else { continue };
        if let Some((other, _)) = identities.iter().find(|(_, known)| **known == identity) {
            return Err(CliError::Rebalance(format!(
                "nodes {other:?} ({}) and {id:?} ({address}) are one server: both answer as {} {identity}: \
                 {SAME_SERVER}",
                args.address(other),
                store.name()
            )));
        }
        identities.insert(id.to_owned(), identity);
    }
    Ok(identities)
}
