//! The paths a document names: every inline code span (`` `like/this.rs` ``)
//! that looks like a path of the repository must exist, so the code map
//! cannot go stale when a file moves.

/// The file name endings that make a span without a slash a path.
const EXTENSIONS: [&str; 6] = [".rs", ".md", ".toml", ".sh", ".txt", ".png"];

/// The paths named in `markdown`'s inline code spans, with their line
/// numbers: spans of one word, with a `/` or a known file ending, outside
/// fenced code blocks. An anchor (`#...`) is dropped; generated paths
/// (`target/...`) and patterns (`*`, `...`, `<...>`) are not paths.
pub fn named_paths(markdown: &str) -> Vec<(String, usize)> {
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
            if let Some(path) = as_path(span) {
                found.push((path, index + 1));
            }
        }
    }
    found
}

/// `span` as a repository path, if it is one.
fn as_path(span: &str) -> Option<String> {
    let path = span.split('#').next()?.trim_end_matches(':');
    let plain = path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/_.-".contains(&b));
    let pathlike = path.contains('/') || EXTENSIONS.iter().any(|ext| path.ends_with(ext));
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
                    Run `cargo test -p x` and `lockstep_engine::lockstep::gate`, build to \
                    `target/release/x`.\n```\n`not/in/a/fence.rs`\n```\n`Cargo.toml` and `client/`\n";
        assert_eq!(
            named_paths(text),
            [
                ("engine/src/gate.rs".to_string(), 1),
                ("docs/guide/lan.md".to_string(), 1),
                ("Cargo.toml".to_string(), 6),
                ("client".to_string(), 6),
            ]
        );
    }
}
