//! The classic consistent-hashing experiments on 1,000,000 keys: how much
//! moves when a node joins or leaves, how evenly vnodes spread keys, and how
//! weights divide the space. Prints the tables docs/performance.md quotes.
//!
//! cargo run --release -p shardring --example experiments

use shardring::{Node, Ring};

const KEYS: usize = 1_000_000;

fn ring(count: usize, vnodes: u32) -> Ring {
    let nodes = (0..count).map(|i| Node::new(format!("node-{i:02}"), 1.0));
    Ring::builder().vnodes(vnodes).nodes(nodes).build().expect("valid ring")
}

fn main() {
    let keys: Vec<String> = (0..KEYS).map(|i| format!("key:{i:08}")).collect();

    println!("Scale-out 10 -> 11 nodes, {KEYS} keys (theory: 1/11 = 9.09% move, all to the new node)");
    println!("| vnodes | moved (sampled) | moved (exact) | to new node | donor nodes |");
    println!("|---:|---:|---:|---:|---:|");
    for vnodes in [1, 10, 100, 160, 1000] {
        let before = ring(10, vnodes);
        let after = before.with_node(Node::new("node-10", 1.0)).unwrap();
        let mut moved = 0usize;
        let mut to_new = 0usize;
        for key in &keys {
            let (old, new) = (before.get_index(key).unwrap(), after.get_index(key).unwrap());
            if old != new {
                moved += 1;
                to_new += usize::from(new == 10);
            }
        }
        let diff = before.diff(&after).unwrap();
        println!(
            "| {vnodes} | {:.2}% | {:.2}% | {:.1}% | {} |",
            pct(moved),
            100.0 * diff.moved_share,
            100.0 * to_new as f64 / moved as f64,
            diff.flows.len()
        );
    }

    let moved_modulo = keys
        .iter()
        .filter(|k| {
            let h = shardring::hash_key(k.as_bytes(), 0);
            h % 10 != h % 11
        })
        .count();
    println!("\nModulo (hash % N) 10 -> 11 nodes: {:.2}% of keys moved (theory 10/11 = 90.91%)", pct(moved_modulo));

    println!("\nBalance of 10 equal nodes, {KEYS} keys (keys per node against the mean)");
    println!("| vnodes | max/mean | min/mean | CV |");
    println!("|---:|---:|---:|---:|");
    for vnodes in [1, 10, 100, 160, 1000] {
        let b = ring(10, vnodes).balance(&keys).unwrap();
        println!(
            "| {vnodes} | {:.3} | {:.3} | {:.3} |",
            b.by_node.max_over_mean, b.by_node.min_over_mean, b.by_node.cv
        );
    }

    let r = ring(10, 160);
    let counts = r.balance(&keys).unwrap().counts;
    let busiest = (0..10).max_by_key(|&i| counts[i]).unwrap();
    let id = r.nodes()[busiest].id().to_owned();
    let diff = r.diff(&r.without_node(&id).unwrap()).unwrap();
    println!(
        "\nRemoving the most loaded node ({id}, {} keys, {:.2}% of the space) at 160 vnodes: its keys spread over {} of the 9 remaining nodes",
        counts[busiest],
        100.0 * diff.moved_share,
        diff.flows.len()
    );
    for flow in &diff.flows {
        println!("  {} -> {}: {:.2}%", flow.from, flow.to, 100.0 * flow.share);
    }

    let weighted = Ring::builder().node("a", 1.0).node("b", 2.0).node("c", 1.0).build().unwrap();
    let sampled = weighted.balance(&keys).unwrap().counts;
    println!("\nWeights 1:2:1 at 160 vnodes (ideal 25% / 50% / 25%)");
    for ((node, share), count) in weighted.ownership().iter().zip(sampled) {
        println!(
            "  {} weight {}: exact {:.2}%, sampled {:.2}%",
            node.id(),
            node.weight(),
            100.0 * share,
            pct(count as usize)
        );
    }
}

fn pct(count: usize) -> f64 {
    100.0 * count as f64 / KEYS as f64
}
