//! The paths a document names: every inline code span (`` `like/this.rs` ``)
//! that looks like a path of the repository must exist, so the code map
//! cannot go stale when a file moves.
//!
//! A span is taken for a repository path when it starts with a folder or
//! file at the repository's root (`client/src/lib.rs`, `docs/`), or, with
//! no slash, names a Markdown or TOML file (`DETERMINISM.md`,
//! `clippy.toml`). Other spans with a slash are something else: a folder
//! the programs create (`replays/`) or a project on GitHub.

/// The file name endings that make a span without a slash a path.
const EXTENSIONS: [&str; 2] = [".md", ".toml"];

/// The paths named in `markdown`'s inline code spans, with their line
/// numbers: spans of one word, with a `/` or a known file ending, outside
/// fenced code blocks. An anchor (`#...`) is dropped; generated paths
/// (`target/...`) and patterns (`*`, `...`, `<...>`) are not paths.
pub fn named_paths(markdown: &str, roots: &[String]) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    let mut fenced = false;
    for (index, line) in markdown.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for span in line.split('`').skip(1).step_by(2) {
            if let Some(path) = as_path(span, roots) {
                found.push((path, index + 1));
            }
        }
    }
    found
}

/// `span` as a repository path, if it is one; `roots` are the names at the
/// repository's root.
fn as_path(span: &str, roots: &[String]) -> Option<String> {
    let path = span.split('#').next()?.trim_end_matches(':');
    let plain = path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/_.-".contains(&b));
    let pathlike = match path.split_once('/') {
        Some((first, _)) => roots.iter().any(|root| root == first),
        None => EXTENSIONS.iter().any(|ext| path.ends_with(ext)),
    };
    let generated = path.starts_with("target/") || path.starts_with('/');
    let relative = path.starts_with("./") || path.starts_with("../");
    let pattern = path.contains("...") || path.contains("//");
    (plain && pathlike && !generated && !relative && !pattern && !path.is_empty())
        .then(|| path.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_in_code_spans_are_found_and_other_code_is_not() {
        let text = "The gate is `engine/src/gate.rs`, see `docs/guide/lan.md#blocked`.\n\
                    Run `cargo test -p x` and `lockstep_engine::gate`, build to \
                    `target/release/x`.\n```\n`engine/in/a/fence.rs`\n```\n`Cargo.toml` and `client/`\n\
                    Dumps go to `desync/`; name files like `gate.rs`; see `someone/project`.\n";
        let roots = ["engine", "docs", "client", "target"].map(String::from);
        assert_eq!(
            named_paths(text, &roots),
            [
                ("engine/src/gate.rs".to_string(), 1),
                ("docs/guide/lan.md".to_string(), 1),
                ("Cargo.toml".to_string(), 6),
                ("client".to_string(), 6),
            ]
        );
    }
}
