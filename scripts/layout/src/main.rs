//! `check-layout [ROOT]`: the promises of the source layout that cargo
//! does not check, run by `scripts/check-layout.sh` (and so by `make
//! test`) from the repository's root:
//!
//! - no module of a crate names another that names it back, directly or
//!   through others ([`modules`]);
//! - the client library has no feature gates: the window is a crate of
//!   its own, and "headless" is the binary built without it;
//! - no Rust file is longer than [`CEILING`] lines;
//! - every path the newcomer's documents name exists ([`paths`]);
//! - every Markdown file reads as CommonMark should: no fence left open,
//!   no heading inside a code block, every relative link and anchor
//!   resolves ([`markdown`]).
//!
//! It prints one line per broken promise and fails, or one line saying
//! what holds.

mod markdown;
mod modules;
mod paths;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The most lines a Rust file may have: past it, a file does more than
/// one job, or its tests belong in a file of their own.
const CEILING: usize = 700;

/// The documents whose paths must exist: the code map, the contributor's
/// guide, the README and everything under `docs/`.
const DOCUMENTS: [&str; 3] = ["ARCHITECTURE.md", "CONTRIBUTING.md", "README.md"];

/// Source folders left out: build output, and the fuzz workspace's
/// generated corpus.
const SKIPPED: [&str; 2] = ["target", ".git"];

fn main() -> ExitCode {
    let root = std::env::args_os()
        .nth(1)
        .map_or_else(|| PathBuf::from("."), PathBuf::from);
    match check(&root) {
        Ok(problems) if problems.is_empty() => {
            println!(
                "layout: no module cycles; the client library has no feature gates; no Rust file \
                 over {CEILING} lines; every path the documents name exists; {} Markdown files \
                 with their fences closed, no heading in a code block and every relative link \
                 and anchor resolved",
                markdown::files(&root).len()
            );
            ExitCode::SUCCESS
        }
        Ok(problems) => {
            for problem in &problems {
                eprintln!("layout: {problem}");
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("layout: cannot read the sources: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Every broken promise under `root`, one line each.
fn check(root: &Path) -> std::io::Result<Vec<String>> {
    let mut problems = Vec::new();
    for src in crate_sources(root) {
        for cycle in modules::crate_cycles(&src)? {
            let names: Vec<String> = cycle
                .iter()
                .map(|edge| {
                    format!(
                        "{} -> {} ({})",
                        edge.from.join("::"),
                        edge.to.join("::"),
                        edge.at
                    )
                })
                .collect();
            problems.push(format!(
                "a module cycle in {}: {}",
                src.display(),
                names.join("; ")
            ));
        }
    }
    for file in modules::rust_files(&root.join("client/src")) {
        if std::fs::read_to_string(&file)?.contains("cfg(feature") {
            problems.push(format!(
                "{} has a feature gate; the client library has none (the window is the \
                 lockstep-window crate)",
                file.display()
            ));
        }
    }
    for file in all_rust_files(root) {
        let lines = std::fs::read_to_string(&file)?.lines().count();
        if lines > CEILING {
            problems.push(format!(
                "{} has {lines} lines, more than {CEILING}",
                file.display()
            ));
        }
    }
    let roots: Vec<String> = std::fs::read_dir(root)?
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    for document in documents(root) {
        let text = std::fs::read_to_string(&document)?;
        for (path, line) in paths::named_paths(&text, &roots) {
            if !root.join(&path).exists() {
                problems.push(format!(
                    "{}:{line} names `{path}`, which does not exist",
                    document.display()
                ));
            }
        }
    }
    problems.extend(markdown_problems(root)?);
    Ok(problems)
}

/// The problems of every Markdown file under `root` ([`markdown`]), one
/// line each, with paths relative to `root`.
fn markdown_problems(root: &Path) -> std::io::Result<Vec<String>> {
    let mut read: BTreeMap<PathBuf, markdown::Document> = BTreeMap::new();
    for file in markdown::files(root) {
        let relative = file.strip_prefix(root).unwrap_or(&file).to_path_buf();
        read.insert(relative, markdown::read(&std::fs::read_to_string(&file)?));
    }
    let mut anchors_of = |path: &Path| read.get(path).map(|document| document.anchors.clone());
    let mut problems = Vec::new();
    for (path, document) in &read {
        problems.extend(markdown::problems(path, document, root, &mut anchors_of));
    }
    Ok(problems)
}

/// The `src` folder of every crate: a folder with a `Cargo.toml` and a
/// `src`, at the root or one or two levels down (`games/tally`,
/// `scripts/layout`).
fn crate_sources(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut level = vec![root.to_path_buf()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for dir in level {
            if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
                found.push(dir.join("src"));
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let skipped = path
                    .file_name()
                    .is_some_and(|name| SKIPPED.iter().any(|s| name == *s));
                if path.is_dir() && !skipped {
                    next.push(path);
                }
            }
        }
        level = next;
    }
    found.sort();
    found
}

/// Every Rust file of the repository outside build output.
fn all_rust_files(root: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| {
            path.is_dir()
                && !path
                    .file_name()
                    .is_some_and(|name| SKIPPED.iter().any(|s| name == *s))
        })
        .flat_map(|dir| modules::rust_files(&dir))
        .collect();
    files.sort();
    files
}

/// The documents whose paths are checked.
fn documents(root: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = DOCUMENTS.iter().map(|name| root.join(name)).collect();
    found.extend(modules::files_under(&root.join("docs"), "md"));
    found
}
