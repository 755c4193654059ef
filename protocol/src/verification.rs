//! The verification code: a server's certificate fingerprint in a form a
//! person can compare at a glance.
//!
//! Discovery on a LAN can be spoofed, and nobody reads 64 hex digits
//! aloud across a room. The server prints, and the browser and the lobby
//! show, four short words taken from the fingerprint's first four bytes
//! (one word per byte, from a fixed list of 256). Two players who see the
//! same four words are, with odds of four billion to one against a chance
//! match, talking to the same server; the full fingerprint is still what
//! the client pins.

/// One word per byte value: short, common, and no two alike in their first
/// three letters.
const WORDS: [&str; 256] = [
    "acorn", "adult", "agent", "alarm", "album", "alley", "amber", "angle", "apple", "april",
    "arena", "armor", "arrow", "aspen", "atlas", "attic", "bacon", "badge", "baker", "bamboo",
    "banjo", "barn", "basil", "beach", "bench", "berry", "bike", "bingo", "birch", "blade",
    "blues", "board", "bonus", "boots", "brave", "bread", "brick", "brush", "bucket", "bugle",
    "cabin", "cactus", "camel", "candy", "violin", "cargo", "walrus", "castle", "cedar", "chalk",
    "cheese", "tiger", "tulip", "chimney", "cider", "cinema", "circus", "clock", "wagon", "coast",
    "cobra", "comet", "coral", "cotton", "cowboy", "crane", "crown", "cube", "cupcake", "curtain",
    "daisy", "dance", "dart", "dawn", "deer", "delta", "denim", "desert", "diary", "dingo",
    "disco", "dolphin", "domino", "donkey", "dragon", "dream", "drum", "duck", "dune", "eagle",
    "earth", "easel", "echo", "eclipse", "elbow", "elder", "elephant", "ember", "emerald",
    "engine", "envelope", "epic", "equator", "falcon", "fancy", "farm", "feather", "fence",
    "ferry", "fiddle", "field", "figure", "finch", "fire", "flag", "flute", "foam", "forest",
    "fossil", "fox", "frost", "fudge", "galaxy", "garden", "gecko", "ghost", "giant", "ginger",
    "glacier", "globe", "goat", "golf", "gorilla", "grape", "zebra", "guitar", "gumbo", "habit",
    "hammer", "harbor", "hawk", "hazel", "heart", "helmet", "heron", "hickory", "hippo", "hockey",
    "honey", "horse", "hotel", "hunter", "iceberg", "icon", "igloo", "image", "index", "yogurt",
    "ink", "iron", "island", "ivory", "jacket", "jaguar", "jam", "jazz", "jelly", "jewel",
    "jigsaw", "jockey", "judge", "juice", "jungle", "kayak", "kettle", "kiwi", "knight", "koala",
    "label", "ladder", "lagoon", "lamp", "lantern", "laser", "lava", "lemon", "leopard", "lily",
    "lion", "lizard", "llama", "lobster", "locket", "lotus", "lunar", "magnet", "mango", "maple",
    "marble", "meadow", "melon", "mercury", "meteor", "mint", "mirror", "mitten", "monkey",
    "moose", "motor", "muffin", "nacho", "napkin", "nectar", "needle", "nest", "nickel", "noodle",
    "north", "nugget", "nutmeg", "oasis", "ocean", "office", "olive", "onion", "opal", "orbit",
    "orchid", "otter", "owl", "paddle", "panda", "parrot", "peach", "pebble", "pepper", "piano",
    "pickle", "pilot", "pine", "pixel", "planet", "plum", "polar", "pony", "potato", "pretzel",
    "puzzle", "quartz", "queen", "quill", "salmon", "rabbit", "radar", "raven", "rocket",
];

/// The verification code of a certificate fingerprint (64 hex digits, as
/// the server prints it): four words joined by `-`, such as
/// `otter-maple-rocket-cedar`. A fingerprint that is not hex (which no
/// server prints) still gives a code, from its first bytes of text, so
/// the caller never has to handle an error to show one.
pub fn verification_code(fingerprint: &str) -> String {
    let fingerprint = fingerprint.trim();
    let byte = |i: usize| -> u8 {
        fingerprint
            .get(2 * i..2 * i + 2)
            .and_then(|pair| u8::from_str_radix(pair, 16).ok())
            .unwrap_or_else(|| fingerprint.as_bytes().get(i).copied().unwrap_or(0))
    };
    (0..4)
        .map(|i| WORDS[usize::from(byte(i))])
        .collect::<Vec<_>>()
        .join("-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_list_has_no_two_words_alike_in_their_first_three_letters() {
        let mut prefixes: Vec<&str> = WORDS.iter().map(|w| &w[..3]).collect();
        prefixes.sort_unstable();
        let before = prefixes.len();
        prefixes.dedup();
        assert_eq!(prefixes.len(), before, "two words share a prefix");
    }

    #[test]
    fn the_code_is_the_first_four_bytes_one_word_each() {
        let fp = format!("00ff10a0{}", "7".repeat(56));
        assert_eq!(verification_code(&fp), "acorn-rocket-bacon-island");
        assert_eq!(
            verification_code(&fp.to_uppercase()),
            verification_code(&fp)
        );
    }

    #[test]
    fn fingerprints_differing_in_the_first_bytes_have_different_codes() {
        let a = format!("01{}", "0".repeat(62));
        let b = format!("02{}", "0".repeat(62));
        assert_ne!(verification_code(&a), verification_code(&b));
    }

    #[test]
    fn text_that_is_not_a_fingerprint_still_gives_a_code() {
        assert_eq!(verification_code("").split('-').count(), 4);
        assert_eq!(verification_code("zz").split('-').count(), 4);
    }
}
