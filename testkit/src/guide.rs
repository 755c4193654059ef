//! The commands of a guide under `docs/`, as its reader pastes them, so
//! that a test runs what the guide says rather than a copy of it.

use crate::browser::repo;

/// The commands of the guide at `path` (from the repository's root): the
/// lines of its `sh` blocks, their comments cut, as words; only those of
/// the section whose `## ` heading ends with `section`, when one is
/// named.
pub fn sh_commands(path: &str, section: Option<&str>) -> Vec<Vec<String>> {
    let file = repo().join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    commands_in(&text, section)
}

/// [`sh_commands`] of the text of a guide.
fn commands_in(text: &str, section: Option<&str>) -> Vec<Vec<String>> {
    let mut in_section = section.is_none();
    let mut in_sh = false;
    let mut commands = Vec::new();
    for line in text.lines() {
        if let (Some(heading), Some(section)) = (line.strip_prefix("## "), section) {
            in_section = heading.ends_with(section);
        } else if line.starts_with("```") {
            in_sh = line == "```sh";
        } else if in_section && in_sh {
            let words: Vec<String> = line
                .split(" #")
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_string)
                .collect();
            if !words.is_empty() {
                commands.push(words);
            }
        }
    }
    commands
}

#[cfg(test)]
mod tests {
    use super::commands_in;

    const GUIDE: &str = "# A guide\n\n```sh\nmake demo   # first\n```\n\n\
        ## 1. Build\n\n```toml\nname = \"x\"\n```\n\n```sh\ncargo build\n\nx run --a 1  # play\n```\n\n\
        ## 2. Host\n\n```sh\nserver --game x\n```\n";

    #[test]
    fn every_sh_line_is_a_command_with_its_comment_cut() {
        assert_eq!(
            commands_in(GUIDE, None),
            [
                vec!["make", "demo"],
                vec!["cargo", "build"],
                vec!["x", "run", "--a", "1"],
                vec!["server", "--game", "x"],
            ]
        );
    }

    #[test]
    fn a_section_keeps_only_its_own_commands() {
        assert_eq!(
            commands_in(GUIDE, Some(". Host")),
            [vec!["server", "--game", "x"]]
        );
        assert!(commands_in(GUIDE, Some(". Missing")).is_empty());
    }
}
