use super::*;

/// The problems of `text` as the document `doc.md` at the root, with
/// `other.md` holding the headings `others`.
fn problems_of(text: &str, others: &[&str]) -> Vec<String> {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let root = std::env::temp_dir().join(format!("layout-markdown-{}-{call}", std::process::id()));
    std::fs::create_dir_all(root.join("docs")).expect("a scratch folder");
    std::fs::write(root.join("doc.md"), text).expect("a scratch file");
    std::fs::write(root.join("other.md"), "").expect("a scratch file");
    std::fs::write(root.join("docs/page.md"), "").expect("a scratch file");
    let mut anchors_of = |path: &Path| {
        (path == Path::new("other.md")).then(|| others.iter().map(|a| a.to_string()).collect())
    };
    let found = problems(Path::new("doc.md"), &read(text), &root, &mut anchors_of);
    std::fs::remove_dir_all(&root).expect("the scratch folder removed");
    found
}

#[test]
fn a_fence_left_open_is_named_at_its_line() {
    let text = "# Title\n\nSome text.\n\n```\nall of this\n\n## Crates\n\n| a | b |\n";
    let found = problems_of(text, &[]);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("doc.md:5: the code fence ``` opened here is never closed")),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("doc.md:8: the heading `## Crates` is inside a code block")),
        "{found:?}"
    );
}

#[test]
fn closed_fences_of_every_kind_pass() {
    let text = "# Title\n\n```sh\n# a comment\nmake test\n```\n\n~~~~\ncode\n~~~~~\n\n\
                - a list\n\n  ```rust\n  let x = 1;\n  ```\n\n> quoted\n> ```\n> q\n> ```\n\n\
                ```\n```\n";
    assert_eq!(problems_of(text, &[]), Vec::<String>::new());
}

#[test]
fn a_fence_ended_by_its_list_item_is_open() {
    let text = "- item\n\n  ```\n  code\n\nAfter the list.\n";
    let found = problems_of(text, &[]);
    assert!(
        found
            .iter()
            .any(|p| p.starts_with("doc.md:3: the code fence")),
        "{found:?}"
    );
}

#[test]
fn a_shorter_fence_does_not_close_a_longer_one() {
    let found = problems_of("````\ncode\n```\n", &[]);
    assert_eq!(found.len(), 1, "{found:?}");
}

#[test]
fn a_hash_is_a_heading_unless_the_language_comments_with_it() {
    let text = "```sh\n# a comment\n```\n\n```\n# Lost title\n```\n\n```toml\n## Lost too\n```\n\n\
                ```sh\n#!/bin/sh\n#\n```\n\n    # indented title\n";
    let found = problems_of(text, &[]);
    let lines: Vec<&str> = found
        .iter()
        .map(|p| p.split(": the heading").next().unwrap_or(""))
        .collect();
    assert_eq!(lines, ["doc.md:6", "doc.md:10", "doc.md:18"], "{found:?}");
}

#[test]
fn links_and_anchors_resolve_or_are_named() {
    let text = "# The title\n\n## Part one: `code`, and more!\n\n\
                [ok](#the-title) [ok](#part-one-code-and-more) [ok](other.md#found) \
                [ok](docs/page.md) [ok](./docs/) [ok](https://example.org/x#y) [ok](mailto:a@b) \
                [ok](other.md)\n\n\
                [bad](#missing) [bad](other.md#gone) [bad](docs/none.md) [bad](../outside.md)\n\n\
                ![bad](docs/img.png)\n";
    let found = problems_of(text, &["found"]);
    assert_eq!(
        found,
        [
            "doc.md:7: `#missing`: doc.md has no heading with the id `missing`",
            "doc.md:7: `other.md#gone`: other.md has no heading with the id `gone`",
            "doc.md:7: `docs/none.md` names docs/none.md, which does not exist",
            "doc.md:7: `../outside.md` leads out of the repository",
            "doc.md:9: `docs/img.png` names docs/img.png, which does not exist",
        ]
    );
}

#[test]
fn heading_ids_follow_githubs_rule_and_number_duplicates() {
    let document =
        read("# Relay latency (p99), 8 clients\n\n## Setup\n\n## Setup\n\n## 1-2. Go `--resume`\n");
    assert_eq!(
        document.anchors,
        [
            "relay-latency-p99-8-clients",
            "setup",
            "setup-1",
            "1-2-go---resume"
        ]
    );
}
