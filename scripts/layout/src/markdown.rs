//! Every Markdown file of the repository, read as a CommonMark renderer
//! reads it (GitHub's, with tables): a fence left open turns the rest of
//! the file into one code block, a heading inside a code block is shown as
//! code, and a relative link or anchor that does not resolve leads a reader
//! nowhere. None of these is visible in the source, which is why they are
//! checked here.
//!
//! - **Unclosed fences**: a fenced code block must end with its own
//!   closing fence, not at the end of the file (or of the list item or
//!   quote around it).
//! - **Swallowed headings**: no code block may hold a line that is a
//!   heading once out of it: `# Title` in a block that is not a shell's or
//!   a language's (whose `#` starts a comment), `## Title` in any block.
//! - **Links**: a link or image without a scheme names a file or folder of
//!   the repository, relative to the document; an anchor (`#part`) names a
//!   heading of the Markdown file it points into, by GitHub's rule for
//!   heading ids.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Folders never read: build output, the repository's own data, npm's.
const SKIPPED: [&str; 3] = ["target", "node_modules", ".git"];

/// Code block languages whose `#` starts a comment, so that `# word` in
/// them is code and not a lost heading.
const HASH_COMMENTS: [&str; 10] = [
    "sh", "bash", "shell", "console", "toml", "python", "py", "make", "yaml", "rust",
];

/// Every Markdown file under `root`, sorted, outside build output and
/// hidden folders.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !SKIPPED.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if name.ends_with(".md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// A document as the checks see it: its code blocks, its links and the ids
/// of its headings.
#[derive(Debug, Default)]
pub struct Document {
    /// Each code block: the line it starts on, its language (empty when
    /// none or indented), whether it is fenced, and its source lines.
    pub blocks: Vec<Block>,
    /// Each link and image destination, with its line.
    pub links: Vec<(String, usize)>,
    /// The ids GitHub gives the headings, in order, duplicates numbered.
    pub anchors: Vec<String>,
}

/// One code block of a document.
#[derive(Debug)]
pub struct Block {
    /// The line of its opening fence, or of its first line if indented.
    pub line: usize,
    /// The first word of its info string, lowercased.
    pub language: String,
    /// Its opening fence (```` ``` ```` or `~~~`, at its length), if fenced.
    pub fence: Option<String>,
    /// The block's source, fences included.
    pub source: String,
}

/// Reads `text` as CommonMark with GitHub's tables.
pub fn read(text: &str) -> Document {
    let mut document = Document::default();
    let mut heading: Option<String> = None;
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let parser = Parser::new_ext(text, Options::ENABLE_TABLES).into_offset_iter();
    for (event, range) in parser {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let source = &text[range.clone()];
                let (language, fence) = match kind {
                    CodeBlockKind::Fenced(info) => {
                        let opening = source.lines().next().unwrap_or("");
                        (
                            info.split_whitespace().next().unwrap_or("").to_lowercase(),
                            Some(fence_of(opening)),
                        )
                    }
                    CodeBlockKind::Indented => (String::new(), None),
                };
                document.blocks.push(Block {
                    line: line_of(range.start),
                    language,
                    fence,
                    source: source.to_string(),
                });
            }
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                document
                    .links
                    .push((dest_url.to_string(), line_of(range.start)));
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(part) | Event::Code(part) => {
                if let Some(title) = heading.as_mut() {
                    title.push_str(&part);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some(title) = heading.take() {
                    let slug = slug(&title);
                    let count = seen.entry(slug.clone()).or_insert(0);
                    document.anchors.push(if *count == 0 {
                        slug
                    } else {
                        format!("{slug}-{count}")
                    });
                    *count += 1;
                }
            }
            _ => {}
        }
    }
    document
}

/// The id GitHub gives a heading titled `title`: lowercased, every
/// character but letters, digits, spaces, `-` and `_` dropped, and spaces
/// made `-`.
pub fn slug(title: &str) -> String {
    title
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The fence that opens a block: its backticks or tildes, without the
/// indentation, quote marks and info string around them.
fn fence_of(opening: &str) -> String {
    let line = opening.trim_start_matches(|c: char| c.is_whitespace() || c == '>');
    let mark = line.chars().next().unwrap_or('`');
    line.chars().take_while(|&c| c == mark).collect()
}

/// Whether `block`, fenced, ends with a fence that closes it.
fn closed(block: &Block, fence: &str) -> bool {
    let Some(last) = block.source.lines().rev().find(|l| !l.trim().is_empty()) else {
        return false;
    };
    let last = last
        .trim_start_matches(|c: char| c.is_whitespace() || c == '>')
        .trim_end();
    let mark = fence.chars().next().unwrap_or('`');
    block.source.lines().count() > 1 && last.len() >= fence.len() && last.chars().all(|c| c == mark)
}

/// The heading a code line would be outside its block, if it would be
/// one: `#` to `######`, a space, then a word, after any indentation and
/// quote marks.
fn heading_level(line: &str) -> Option<usize> {
    let line = line.trim_start_matches(|c: char| c.is_whitespace() || c == '>');
    let hashes = line.len() - line.trim_start_matches('#').len();
    let rest = &line[hashes..];
    let titled = rest.starts_with(' ') && !rest.trim().is_empty();
    ((1..=6).contains(&hashes) && titled).then_some(hashes)
}

/// The problems of the document `path` (relative to `root`), one line
/// each: fences left open, headings in code blocks, links and anchors that
/// lead nowhere. `anchors_of` gives the heading ids of another Markdown
/// file of the repository, by its path relative to `root`.
pub fn problems(
    path: &Path,
    document: &Document,
    root: &Path,
    anchors_of: &mut dyn FnMut(&Path) -> Option<Vec<String>>,
) -> Vec<String> {
    let shown = path.display();
    let mut found = Vec::new();
    for block in &document.blocks {
        if let Some(fence) = &block.fence {
            if !closed(block, fence) {
                found.push(format!(
                    "{shown}:{}: the code fence {fence} opened here is never closed, so what \
                     follows it shows as code",
                    block.line
                ));
            }
        }
        let comments = HASH_COMMENTS.contains(&block.language.as_str());
        for (index, line) in block.source.lines().enumerate() {
            let swallowed = heading_level(line).is_some_and(|level| level >= 2 || !comments);
            let fence_line = block.fence.is_some() && index == 0;
            if swallowed && !fence_line {
                found.push(format!(
                    "{shown}:{}: the heading `{}` is inside a code block (opened on line {})",
                    block.line + index,
                    line.trim(),
                    block.line
                ));
            }
        }
    }
    for (destination, line) in &document.links {
        if let Some(problem) = broken_link(path, destination, root, document, anchors_of) {
            found.push(format!("{shown}:{line}: {problem}"));
        }
    }
    found
}

/// What is wrong with the link `destination` of the document `path`, if
/// anything: a file that does not exist, or an anchor that is no heading.
fn broken_link(
    path: &Path,
    destination: &str,
    root: &Path,
    document: &Document,
    anchors_of: &mut dyn FnMut(&Path) -> Option<Vec<String>>,
) -> Option<String> {
    let scheme = destination
        .split_once(':')
        .is_some_and(|(scheme, _)| !scheme.contains('/') && !scheme.is_empty());
    if scheme || destination.starts_with("//") {
        return None;
    }
    let (file, anchor) = match destination.split_once('#') {
        Some((file, anchor)) => (file, Some(anchor)),
        None => (destination, None),
    };
    let target = if file.is_empty() {
        path.to_path_buf()
    } else {
        let joined = path.parent().unwrap_or(Path::new("")).join(file);
        match normalise(&joined) {
            Some(target) => target,
            None => return Some(format!("`{destination}` leads out of the repository")),
        }
    };
    if !root.join(&target).exists() {
        return Some(format!(
            "`{destination}` names {}, which does not exist",
            target.display()
        ));
    }
    let anchor = anchor.filter(|a| !a.is_empty())?;
    let anchors = if file.is_empty() {
        Some(document.anchors.clone())
    } else if target.extension().is_some_and(|ext| ext == "md") {
        anchors_of(&target)
    } else {
        None
    }?;
    (!anchors.iter().any(|a| a == anchor)).then(|| {
        format!(
            "`{destination}`: {} has no heading with the id `{anchor}`",
            target.display()
        )
    })
}

/// `path` with its `.` and `..` parts resolved, if it stays inside the
/// repository.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.iter().collect())
}

#[cfg(test)]
mod tests;
