//! The core's module layout: no module imports (directly or through
//! others) a module that imports it, so each algorithm file depends only on
//! the shared parts below it (`scheme`, `params`, `hash`, `continuum`,
//! `node`, `error`), and the facade (`ring`, `algorithm`) sits on top.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each module's `use crate::...` imports outside its `#[cfg(test)]` part.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap();
        let mut deps = BTreeSet::new();
        for line in code.lines().map(str::trim) {
            let Some(rest) = line.strip_prefix("use crate::").or_else(|| line.strip_prefix("pub use crate::")) else {
                continue;
            };
            let rest = rest.trim_end_matches(';');
            let heads: Vec<&str> = match rest.strip_prefix('{') {
                Some(list) => list.trim_end_matches('}').split(',').map(str::trim).collect(),
                None => vec![rest],
            };
            deps.extend(heads.iter().map(|h| h.split("::").next().unwrap().to_owned()));
        }
        graph.insert(name, deps);
    }
    graph
}

#[test]
fn no_module_imports_a_module_that_imports_it() {
    let graph = imports();
    assert!(graph.len() > 20, "read {} modules", graph.len());
    assert!(graph["ring"].contains("scheme") && graph["vnode"].contains("scheme"), "{graph:?}");
    // Depth-first search for a cycle through the modules of the crate.
    fn visit<'a>(
        module: &'a str,
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(at) = path.iter().position(|&m| m == module) {
            panic!("import cycle: {} -> {module}", path[at..].join(" -> "));
        }
        if !done.insert(module) {
            return;
        }
        path.push(module);
        for dep in graph[module].iter().filter(|d| graph.contains_key(*d)) {
            visit(dep, graph, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        visit(module, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn algorithm_files_do_not_import_the_facade() {
    let graph = imports();
    for algorithm in [
        "vnode",
        "ketama",
        "libmemcached",
        "twemproxy",
        "uhashring",
        "hashring_js",
        "nginx",
        "jump",
        "rendezvous",
        "maglev",
        "slots",
        "modula",
    ] {
        let deps = &graph[algorithm];
        for facade in ["ring", "algorithm", "config"] {
            assert!(!deps.contains(facade), "{algorithm} imports {facade}");
        }
    }
}
