//! The workspace's module layout: in every crate, no module imports
//! (directly or through others) a module that imports it, and the core's
//! algorithm files (named by the registry, `Algorithm::scheme`) depend only
//! on the shared parts below them, never on the facade. And no hand-written
//! source file is over 700 lines.
//!
//! Imports are read with `syn`: `use crate::...` trees however they are
//! written (groups, nested groups, several lines, `self`/`super` paths) and
//! every path in the code that starts with `crate::` (types, calls, trait
//! bounds, and in macro arguments, read from their tokens), outside
//! `#[cfg(test)]` items. A path to a name the crate root
//! re-exports (`crate::Ring`) is followed to the module that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

/// The crates of the workspace, by folder: the root Cargo.toml's
/// `members`, so a new crate is checked without a list here.
fn crates() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let line = manifest.lines().find(|l| l.trim_start().starts_with("members")).expect("workspace members");
    let list = line.split_once('[').and_then(|(_, rest)| rest.split_once(']')).expect("members = [...]").0;
    list.split(',').map(|m| m.trim().trim_matches('"').to_owned()).filter(|m| !m.is_empty()).collect()
}

/// A crate's modules: path (`rebalance::redis`) to the modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned()
}

/// Whether an item is compiled only for tests.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string().contains("test")))
}

/// One source file of a crate: its module path and parsed items.
struct Source {
    module: String,
    file: syn::File,
}

/// Every module file of the crate under `src` (the root is module "").
fn sources(src: &Path) -> Vec<Source> {
    let mut found = Vec::new();
    let mut stack = vec![src.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = relative.iter().map(|p| p.to_str().unwrap().to_owned()).collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            found.push(Source { module: parts.join("::"), file });
        }
    }
    found
}

/// The paths a module names: its `use` trees and every other path,
/// outside test-only items, each as segments (a `use` group expanded).
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.push(prefix, &n.ident.to_string()),
            syn::UseTree::Rename(r) => self.push(prefix, &r.ident.to_string()),
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|item| self.use_tree(prefix, item)),
        }
    }

    fn push(&mut self, prefix: &[String], last: &str) {
        let mut path = prefix.to_vec();
        if last != "self" {
            path.push(last.to_owned());
        }
        self.found.push(path);
    }
}

impl<'a> Visit<'a> for Paths {
    fn visit_item(&mut self, item: &'a syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Trait(t) => &t.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if test_only(attrs) {
            return;
        }
        if let syn::Item::Use(u) = item {
            return self.use_tree(&mut Vec::new(), &u.tree);
        }
        syn::visit::visit_item(self, item);
    }

    /// `pub(super)` and `pub(in crate::x)` name who may see an item, not
    /// what it uses.
    fn visit_visibility(&mut self, _: &'a syn::Visibility) {}

    fn visit_path(&mut self, path: &'a syn::Path) {
        self.found.push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    /// A macro's arguments are tokens, not syntax, to `syn`: a
    /// `crate::x::y` path inside `format!(..)` or `tokio::join!(..)` is
    /// read from their text.
    fn visit_macro(&mut self, mac: &'a syn::Macro) {
        syn::visit::visit_macro(self, mac);
        let text = mac.tokens.to_string();
        let word = |c: char| c.is_alphanumeric() || c == '_';
        for (at, _) in text.match_indices("crate") {
            if text[..at].chars().next_back().is_some_and(word) {
                continue;
            }
            let mut path = vec!["crate".to_owned()];
            let mut rest = &text[at + "crate".len()..];
            while let Some(next) = rest.trim_start().strip_prefix("::") {
                let next = next.trim_start();
                let len = next.find(|c: char| !word(c)).unwrap_or(next.len());
                if len == 0 {
                    break;
                }
                path.push(next[..len].to_owned());
                rest = &next[len..];
            }
            if path.len() > 1 {
                self.found.push(path);
            }
        }
    }
}

/// The module a path from module `from` leads to, if it leads into the
/// crate: `crate::`, `self::` and `super::` paths, and a path through the
/// root's re-exports to the module that defines the name.
fn target(
    path: &[String],
    from: &str,
    modules: &BTreeSet<String>,
    reexports: &BTreeMap<String, String>,
) -> Option<String> {
    let mut base: Vec<String> = if from.is_empty() { Vec::new() } else { from.split("::").map(String::from).collect() };
    let rest = match path.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            &path[1..]
        }
        Some("self") => &path[1..],
        // A path starting with a child module's name (declared with `mod`).
        Some(first) if modules.contains(&[base.as_slice(), &[first.to_owned()]].concat().join("::")) => path,
        Some("super") => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            base.truncate(base.len().saturating_sub(ups));
            &path[ups..]
        }
        _ => return None,
    };
    // The longest module prefix of base + rest; at least the module the path
    // starts from (`super::Args` names an item of the parent module).
    let mut best = (!base.is_empty()).then(|| base.join("::")).filter(|m| modules.contains(m));
    let mut full = base;
    for segment in rest {
        full.push(segment.clone());
        let name = full.join("::");
        if modules.contains(&name) {
            best = Some(name);
        } else {
            if best.is_none() && full.len() == 1 {
                return reexports.get(&full[0]).cloned();
            }
            break;
        }
    }
    best
}

/// The import graph of the crate in folder `name`.
fn graph(name: &str) -> Graph {
    let src = workspace().join(name).join("src");
    let sources = sources(&src);
    let modules: BTreeSet<String> = sources.iter().map(|s| s.module.clone()).filter(|m| !m.is_empty()).collect();
    // Names the root re-exports (`pub use ring::{Ring, RingBuilder}`), by the module defining them.
    let mut reexports = BTreeMap::new();
    if let Some(root) = sources.iter().find(|s| s.module.is_empty()) {
        for item in &root.file.items {
            if let syn::Item::Use(u) = item {
                let mut paths = Paths::default();
                paths.use_tree(&mut Vec::new(), &u.tree);
                for path in paths.found {
                    let module = target(&path, "", &modules, &BTreeMap::new())
                        .or_else(|| modules.contains(&path[0]).then(|| path[0].clone()));
                    if let (Some(module), Some(last)) = (module, path.last()) {
                        reexports.insert(last.clone(), module);
                    }
                }
            }
        }
    }
    let mut graph = Graph::new();
    for source in sources.iter().filter(|s| !s.module.is_empty()) {
        let mut paths = Paths::default();
        paths.visit_file(&source.file);
        let mut deps = BTreeSet::new();
        for path in &paths.found {
            if let Some(module) = target(path, &source.module, &modules, &reexports)
                && module != source.module
            {
                deps.insert(module);
            }
        }
        graph.insert(source.module.clone(), deps);
    }
    graph
}

/// The first import cycle in `graph`, as the modules around it.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(module: &str, graph: &Graph, path: &mut Vec<String>, done: &mut BTreeSet<String>) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|m| m == module) {
            let mut found = path[at..].to_vec();
            found.push(module.to_owned());
            return Some(found);
        }
        if !done.insert(module.to_owned()) {
            return None;
        }
        path.push(module.to_owned());
        for dep in graph.get(module).into_iter().flatten() {
            if let Some(found) = visit(dep, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_imports_a_module_that_imports_it_in_any_crate() {
    let mut cycles = Vec::new();
    let crates = crates();
    assert!(crates.len() >= 7, "{crates:?}");
    for name in &crates {
        let name = name.as_str();
        let graph = graph(name);
        assert!(graph.len() >= 2 || name == "bench", "{name}: read {} modules", graph.len());
        if let Some(found) = cycle(&graph) {
            cycles.push(format!("{name}: {}", found.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

/// The reader sees what the old line-based one missed: a `use crate::{...}`
/// group over several lines, a nested group, an inline `crate::x::` path
/// (in a macro's arguments too), a path through a root re-export, and
/// nothing inside `#[cfg(test)]`.
#[test]
fn imports_are_read_in_every_form() {
    let code = r#"
        use crate::{
            alpha::A,
            beta::{B, gamma::C},
        };
        fn f() -> crate::delta::D { crate::epsilon::e(); crate::Thing::new() }
        fn k() -> String { format!("{}{}", crate::iota::I, my_crate::kappa::K) }
        pub(super) fn g() {}
        pub(in crate::theta) fn h() {}
        #[cfg(test)]
        mod tests { use crate::zeta::Z; }
    "#;
    let file = syn::parse_file(code).unwrap();
    let mut paths = Paths::default();
    paths.visit_file(&file);
    let modules: BTreeSet<String> =
        ["alpha", "beta", "beta::gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "here"]
            .map(String::from)
            .into();
    let reexports = BTreeMap::from([("Thing".to_owned(), "eta".to_owned())]);
    let found: BTreeSet<String> = paths.found.iter().filter_map(|p| target(p, "here", &modules, &reexports)).collect();
    let expected: BTreeSet<String> =
        ["alpha", "beta", "beta::gamma", "delta", "epsilon", "eta", "iota"].map(String::from).into();
    assert_eq!(found, expected);
    // An item of the parent module (`pub use` there or defined there).
    let parent = ["super", "Args"].map(String::from);
    assert_eq!(target(&parent, "beta::gamma", &modules, &reexports).as_deref(), Some("beta"));
    let graph = Graph::from([
        ("a".to_owned(), BTreeSet::from(["b".to_owned()])),
        ("b".to_owned(), BTreeSet::from(["c".to_owned()])),
        ("c".to_owned(), BTreeSet::from(["a".to_owned()])),
    ]);
    assert_eq!(cycle(&graph), Some(["a", "b", "c", "a"].map(String::from).to_vec()));
}

/// The algorithm modules, as the registry names them: the module of each
/// `&module::ITEM` in `Algorithm::scheme`, resolved through the registry
/// file's own `use` items (`compat::nginx` for `nginx::Nginx`).
fn registered_algorithms() -> BTreeSet<String> {
    let text = std::fs::read_to_string(workspace().join("core/src/registry.rs")).unwrap();
    let file = syn::parse_file(&text).unwrap();
    let mut imported = BTreeMap::new();
    for item in &file.items {
        if let syn::Item::Use(u) = item {
            let mut paths = Paths::default();
            paths.use_tree(&mut Vec::new(), &u.tree);
            for path in paths.found.into_iter().filter(|p| p.first().is_some_and(|s| s == "crate")) {
                imported.insert(path.last().unwrap().clone(), path[1..].join("::"));
            }
        }
    }
    let mut modules = BTreeSet::new();
    for item in &file.items {
        let syn::Item::Impl(block) = item else { continue };
        for member in &block.items {
            let syn::ImplItem::Fn(function) = member else { continue };
            if function.sig.ident != "scheme" {
                continue;
            }
            struct Arms<'m>(&'m mut Vec<Vec<String>>);
            impl<'a> Visit<'a> for Arms<'_> {
                fn visit_arm(&mut self, arm: &'a syn::Arm) {
                    if let syn::Expr::Reference(r) = &*arm.body
                        && let syn::Expr::Path(p) = &*r.expr
                    {
                        let segments: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
                        self.0.push(segments[..segments.len() - 1].to_vec());
                    }
                }
            }
            let mut arms = Vec::new();
            Arms(&mut arms).visit_block(&function.block);
            for module in arms {
                let first = imported.get(&module[0]).cloned().unwrap_or_else(|| module[0].clone());
                modules.insert([vec![first], module[1..].to_vec()].concat().join("::"));
            }
        }
    }
    modules
}

/// The modules of a folder of `core/src`, as module paths. A submodule
/// (`algorithms::rendezvous::score`, a part of `rendezvous.rs` kept in
/// `rendezvous/score.rs`) counts as the module it belongs to.
fn folder(name: &str) -> BTreeSet<String> {
    graph("core")
        .into_keys()
        .filter(|m| m.starts_with(&format!("{name}::")))
        .map(|m| m.split("::").take(2).collect::<Vec<_>>().join("::"))
        .collect()
}

/// What algorithm files may import: the shared parts below them, and one
/// another. Every other module of the crate (the facade, and anything
/// added later) is above them.
const BELOW_ALGORITHMS: [&str; 8] = ["scheme", "params", "hash", "node", "error", "structures", "algorithms", "compat"];

/// Every scheme the registry names lives in `algorithms/` (the native
/// algorithms) or `compat/` (the peer modes), and every file there is one
/// (or a part of one, in a folder of its name), so a new algorithm's file is
/// where a reader looks and no list here goes stale.
#[test]
fn the_registry_and_the_algorithm_folders_name_the_same_files() {
    let registered = registered_algorithms();
    assert!(registered.len() >= 15, "the registry names {registered:?}");
    let mut foldered = folder("algorithms");
    foldered.extend(folder("compat"));
    assert_eq!(registered, foldered, "registered schemes against the files of algorithms/ and compat/");
}

/// Algorithm files depend only on the shared parts below them (`scheme`,
/// `params`, `hash`, `node`, `error`, `structures/`) and on one another,
/// never on the facade or a module added later unless it is listed here;
/// `structures/` depends on no algorithm and no facade module.
#[test]
fn algorithm_files_do_not_import_the_facade() {
    let graph = graph("core");
    let mut checked = 0;
    for (module, deps) in &graph {
        let (is_algorithm, is_structure) =
            (module.starts_with("algorithms::") || module.starts_with("compat::"), module.starts_with("structures::"));
        if !is_algorithm && !is_structure {
            continue;
        }
        checked += 1;
        for dep in deps {
            let top = dep.split("::").next().unwrap();
            assert!(BELOW_ALGORITHMS.contains(&top), "{module} imports {dep}");
            if is_structure {
                assert!(top != "algorithms" && top != "compat", "{module} imports {dep}");
            }
        }
    }
    assert!(checked >= 18, "checked {checked} modules");
}

/// Files over [`MAX_LINES`] that are allowed to be, and why.
const LONG_FILES: [(&str, &str); 4] = [
    ("include/ring.h", "generated by cbindgen"),
    ("node/index.js", "generated by napi build"),
    ("node/index.d.ts", "generated by napi build"),
    ("include/ring.hpp", "the C++ wrapper is one header a user can vendor beside ring.h"),
];

/// The most lines a hand-written source file may have: past it, a file
/// holds more than one thing and is split by what it holds.
const MAX_LINES: usize = 700;

/// Every hand-written source file of the repository (Rust, Python, C, C++,
/// JavaScript, TypeScript, shell) is at most [`MAX_LINES`] lines long.
#[test]
fn no_source_file_is_over_the_line_limit() {
    const SKIPPED: [&str; 7] = ["target", "node_modules", ".venv", "build", ".git", "corpus", "artifacts"];
    const EXTENSIONS: [&str; 12] = ["rs", "py", "pyi", "js", "mjs", "cjs", "ts", "c", "h", "hpp", "cpp", "sh"];
    let root = workspace();
    let mut long = Vec::new();
    let mut checked = 0;
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap_or_default();
            if path.is_dir() {
                if !SKIPPED.contains(&name) {
                    stack.push(path);
                }
                continue;
            }
            if !path.extension().and_then(|e| e.to_str()).is_some_and(|e| EXTENSIONS.contains(&e)) {
                continue;
            }
            let relative = path.strip_prefix(&root).unwrap().to_str().unwrap().to_owned();
            let lines = std::fs::read_to_string(&path).map(|t| t.lines().count()).unwrap_or(0);
            checked += 1;
            if lines > MAX_LINES && !LONG_FILES.iter().any(|(file, _)| *file == relative) {
                long.push(format!("{relative}: {lines} lines"));
            }
        }
    }
    assert!(checked > 200, "only {checked} source files found under {}", root.display());
    assert!(long.is_empty(), "files over {MAX_LINES} lines (split them by what they hold):\n{}", long.join("\n"));
}
