//! Module cycles: two modules of one crate that name each other, directly
//! or through others.
//!
//! A crate's modules are its source files (`a.rs` and `a/mod.rs` are the
//! module `a`, `a/b.rs` is `a::b`). A file that names `crate::x::y`,
//! `super::y` or `self::y` depends on that module; the dependency counts
//! between the two siblings where their paths part (a file of `net`
//! naming `crate::play::notice` makes `net` depend on `play`), so a child
//! naming its parent, or a parent its child, is no edge. Unit tests are
//! left out: a module's `tests` may name anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A module path inside a crate: `["play", "notice"]`; the root is empty.
pub type ModPath = Vec<String>;

/// Where one module names another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// The naming module, as the sibling at the level they part.
    pub from: ModPath,
    /// The named module, likewise.
    pub to: ModPath,
    /// The file and line of the first such name.
    pub at: String,
}

/// The module path of the file `file` under a crate's `src`.
pub fn module_of(relative: &Path) -> ModPath {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !matches!(stem, "mod" | "lib" | "main") {
            parts.push(stem.to_string());
        }
    }
    parts
}

/// The modules `source`, the text of the module `module`, names, with
/// their line numbers: every `crate::`, `super::` and `self::` path, and
/// every item of a `use crate::{..}` group. Comments and unit tests are
/// skipped.
pub fn references(module: &ModPath, source: &str) -> Vec<(ModPath, usize)> {
    let mut found = Vec::new();
    let mut skip_depth: Option<i64> = None;
    let mut depth: i64 = 0;
    let mut test_next = false;
    for (index, line) in source.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim();
        let opens = code.matches('{').count() as i64;
        let closes = code.matches('}').count() as i64;
        if let Some(start) = skip_depth {
            depth += opens - closes;
            if depth <= start {
                skip_depth = None;
            }
            continue;
        }
        if trimmed.starts_with("#[cfg(test)]") {
            test_next = true;
            continue;
        }
        if test_next && trimmed.starts_with("mod ") && trimmed.ends_with('{') {
            skip_depth = Some(depth);
            depth += opens - closes;
            test_next = false;
            continue;
        }
        if !trimmed.starts_with("#[") {
            test_next = false;
        }
        depth += opens - closes;
        for path in paths_in(code) {
            if let Some(resolved) = resolve(module, &path) {
                found.push((resolved, index + 1));
            }
        }
    }
    found
}

/// The `crate::`/`super::`/`self::` paths written in `code`, as their
/// segments; a `use` group contributes one path per item.
fn paths_in(code: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let rest = &code[i..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|head| rest.starts_with(head));
        let boundary = i == 0 || !is_ident(bytes[i - 1]) && bytes[i - 1] != b':';
        if !(starts && boundary) {
            i += 1;
            continue;
        }
        let (segments, group, used) = path_at(rest);
        i += used.max(1);
        match group {
            Some(items) => {
                for item in items {
                    let mut full = segments.clone();
                    full.extend(item);
                    paths.push(full);
                }
            }
            None => paths.push(segments),
        }
    }
    paths
}

fn is_ident(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// The path at the start of `text`: its segments, the first segments of
/// each item if it ends in a `{..}` group, and the bytes it took.
#[allow(clippy::type_complexity, reason = "a private parser's one result")]
fn path_at(text: &str) -> (Vec<String>, Option<Vec<Vec<String>>>, usize) {
    let mut segments = Vec::new();
    let mut pos = 0;
    loop {
        let ident_len = text[pos..].bytes().take_while(|b| is_ident(*b)).count();
        if ident_len == 0 {
            break;
        }
        segments.push(text[pos..pos + ident_len].to_string());
        pos += ident_len;
        if !text[pos..].starts_with("::") {
            return (segments, None, pos);
        }
        pos += 2;
        if text[pos..].starts_with('{') {
            let inner_start = pos + 1;
            let mut level = 1;
            let mut end = inner_start;
            for (offset, c) in text[inner_start..].char_indices() {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    _ => {}
                }
                if level == 0 {
                    end = inner_start + offset;
                    break;
                }
                end = inner_start + offset + c.len_utf8();
            }
            let items = split_top(&text[inner_start..end])
                .into_iter()
                .map(|item| {
                    item.trim()
                        .split("::")
                        .map(|s| s.trim().to_string())
                        .take_while(|s| !s.is_empty() && s.bytes().all(is_ident))
                        .collect::<Vec<_>>()
                })
                .filter(|item| !item.is_empty())
                .collect();
            return (segments, Some(items), end + 1);
        }
    }
    (segments, None, pos)
}

/// `a, b::{c, d}, e` split at the commas outside braces.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut level = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => level += 1,
            '}' => level -= 1,
            ',' if level == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// `path` as written in the module `module`, as a path from the crate
/// root. (`super` in `a/b.rs` and in `a/b/mod.rs` is `a` alike.)
fn resolve(module: &ModPath, path: &[String]) -> Option<ModPath> {
    let (head, rest) = path.split_first()?;
    let mut base: ModPath = match head.as_str() {
        "crate" => Vec::new(),
        "self" => module.clone(),
        "super" => {
            let mut parent = module.clone();
            parent.pop()?;
            parent
        }
        _ => return None,
    };
    let mut rest = rest;
    while let Some((next, tail)) = rest.split_first() {
        if next != "super" {
            break;
        }
        base.pop()?;
        rest = tail;
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The sibling modules where `from` and `to` part, if they are siblings
/// that exist: `(["net"], ["play"])` for `net::x` naming `play::notice`.
pub fn sibling_edge(
    from: &ModPath,
    to: &ModPath,
    modules: &BTreeSet<ModPath>,
) -> Option<(ModPath, ModPath)> {
    let common = from.iter().zip(to).take_while(|(a, b)| a == b).count();
    if common >= from.len() || common >= to.len() {
        return None;
    }
    let a = from[..=common].to_vec();
    let b = to[..=common].to_vec();
    modules.contains(&b).then_some((a, b))
}

/// Every cycle among `edges`: the strongly connected components of more
/// than one module, each with the edges inside it.
pub fn cycles(edges: &[Edge]) -> Vec<Vec<Edge>> {
    let mut graph: BTreeMap<&ModPath, BTreeSet<&ModPath>> = BTreeMap::new();
    for edge in edges {
        graph.entry(&edge.from).or_default().insert(&edge.to);
        graph.entry(&edge.to).or_default();
    }
    let nodes: Vec<&ModPath> = graph.keys().copied().collect();
    let reach = |start: &ModPath| -> BTreeSet<&ModPath> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![start];
        while let Some(node) = stack.pop() {
            for next in graph.get(node).into_iter().flatten() {
                if seen.insert(*next) {
                    stack.push(next);
                }
            }
        }
        seen
    };
    let reachable: BTreeMap<&ModPath, BTreeSet<&ModPath>> =
        nodes.iter().map(|node| (*node, reach(node))).collect();
    let mut done: BTreeSet<&ModPath> = BTreeSet::new();
    let mut found = Vec::new();
    for node in &nodes {
        if done.contains(node) {
            continue;
        }
        let component: BTreeSet<&ModPath> = nodes
            .iter()
            .copied()
            .filter(|other| {
                other == node || reachable[node].contains(other) && reachable[other].contains(node)
            })
            .collect();
        done.extend(component.iter().copied());
        if component.len() > 1 {
            found.push(
                edges
                    .iter()
                    .filter(|edge| component.contains(&edge.from) && component.contains(&edge.to))
                    .cloned()
                    .collect(),
            );
        }
    }
    found
}

/// Every `.rs` file under `dir`, sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    files_under(dir, "rs")
}

/// Every file under `dir` whose name ends in `.extension`, outside build
/// output (`target`), sorted.
pub fn files_under(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if path.file_name().is_some_and(|name| name != "target") {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|ext| ext == extension) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The modules `source`, the text of `module`, declares for its unit
/// tests only: `#[cfg(test)] mod harness;`.
fn test_children(module: &ModPath, source: &str) -> Vec<ModPath> {
    let mut children = Vec::new();
    let mut test_next = false;
    for line in source.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            test_next = true;
            continue;
        }
        if test_next {
            let declared = trimmed
                .strip_prefix("pub(crate) mod ")
                .or_else(|| trimmed.strip_prefix("mod "))
                .and_then(|rest| rest.strip_suffix(';'));
            if let Some(name) = declared {
                let mut child = module.clone();
                child.push(name.to_string());
                children.push(child);
            }
        }
        test_next = test_next && trimmed.starts_with("#[");
    }
    children
}

/// The cycles among the modules of the crate whose sources are `src`.
pub fn crate_cycles(src: &Path) -> std::io::Result<Vec<Vec<Edge>>> {
    let files = rust_files(src);
    let mut modules = BTreeSet::new();
    let mut sources = Vec::new();
    let mut test_only = BTreeSet::new();
    for file in &files {
        let relative = file.strip_prefix(src).unwrap_or(file);
        let module = module_of(relative);
        let source = std::fs::read_to_string(file)?;
        test_only.extend(test_children(&module, &source));
        sources.push((file, module, source));
    }
    // A module's unit tests, and what only they use, may name anything.
    sources.retain(|(_, module, _)| {
        !test_only
            .iter()
            .any(|test| module.starts_with(test.as_slice()))
    });
    for (_, module, _) in &sources {
        modules.insert(module.clone());
    }
    let mut edges: Vec<Edge> = Vec::new();
    for (file, module, source) in &sources {
        for (named, line) in references(module, source) {
            let Some((from, to)) = sibling_edge(module, &named, &modules) else {
                continue;
            };
            if !edges.iter().any(|edge| edge.from == from && edge.to == to) {
                edges.push(Edge {
                    from,
                    to,
                    at: format!("{}:{line}", file.display()),
                });
            }
        }
    }
    Ok(cycles(&edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> ModPath {
        text.split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }

    #[test]
    fn a_files_module_follows_its_path() {
        assert_eq!(module_of(Path::new("lib.rs")), path(""));
        assert_eq!(module_of(Path::new("play/mod.rs")), path("play"));
        assert_eq!(module_of(Path::new("play/notice.rs")), path("play::notice"));
    }

    #[test]
    fn crate_super_self_and_use_groups_are_read() {
        let source = "use crate::io::{net, clock::now};\nuse super::sibling::Thing;\n\
                      let x = self::child::f();\n// crate::commented::Out\n";
        let found: Vec<ModPath> = references(&path("play::notice"), source)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(
            found,
            [
                path("io::net"),
                path("io::clock::now"),
                path("play::sibling::Thing"),
                path("play::notice::child::f"),
            ]
        );
    }

    #[test]
    fn unit_tests_are_skipped() {
        let source = "fn f() {}\n#[cfg(test)]\nmod tests {\n    use crate::other::X;\n}\n\
                      use crate::after::Y;\n";
        let found: Vec<ModPath> = references(&path("a"), source)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(found, [path("after::Y")]);
    }

    #[test]
    fn modules_declared_for_tests_only_are_known() {
        let source = "mod real;\n#[cfg(test)]\nmod harness;\n#[cfg(test)]\nmod tests {\n}\n";
        assert_eq!(
            test_children(&path("link"), source),
            [path("link::harness")]
        );
    }

    #[test]
    fn an_edge_is_between_the_siblings_where_the_paths_part() {
        let modules: BTreeSet<ModPath> = ["io", "io::link", "play", "play::notice"]
            .into_iter()
            .map(path)
            .collect();
        assert_eq!(
            sibling_edge(&path("io::link"), &path("play::notice::Notice"), &modules),
            Some((path("io"), path("play")))
        );
        assert_eq!(
            sibling_edge(&path("play::notice"), &path("play::Thing"), &modules),
            None,
            "a child naming its parent's item"
        );
        assert_eq!(
            sibling_edge(&path("play"), &path("play::notice::Notice"), &modules),
            None,
            "a parent naming its child"
        );
        assert_eq!(
            sibling_edge(&path("play::notice"), &path("final_line"), &modules),
            None,
            "an item of the root, not a module"
        );
    }

    #[test]
    fn a_cycle_is_found_and_a_chain_is_not() {
        let edge = |from: &str, to: &str| Edge {
            from: path(from),
            to: path(to),
            at: String::new(),
        };
        let chain = [edge("a", "b"), edge("b", "c")];
        assert!(cycles(&chain).is_empty());
        let cycle = [
            edge("a", "b"),
            edge("b", "c"),
            edge("c", "a"),
            edge("c", "d"),
        ];
        let found = cycles(&cycle);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].len(), 3, "{found:?}");
    }
}
