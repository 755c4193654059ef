//! Where the score strip, the banner and the HUD block go, so that none of
//! them covers another at any window size.
//!
//! # How it works
//!
//! The renderer says how big each overlay is and where it would like to be
//! ([`Wanted`]); [`place`] answers where each one goes, or leaves it out,
//! in order of how much it matters:
//!
//! 1. The banner (a desync, a lost connection, catching up) stays in the
//!    middle of the arena unless that covers the score strip; then it moves
//!    down below the strip, as far as the window allows. If that is still
//!    not clear of the strip, the strip is left out: the banner says
//!    something to read now, the scores can wait.
//! 2. The score strip stays where it wanted to be.
//! 3. The HUD block tries the top-left corner, then just below the strip,
//!    then just below the banner, and takes the first place where it is
//!    inside the window and clear of both. When no place has room for all
//!    its lines, it leaves lines out, the least needed first, until one
//!    does; a window too short for even one line shows no HUD.
//!
//! Overlays keep [`Wanted::gap`] pixels apart. Nothing here draws or looks
//! at text: rectangles in, rectangles out, so tests can sweep every window
//! size.

use sdl2::rect::Rect;

/// What the renderer would like to show this frame, in pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wanted {
    /// The whole window.
    pub(crate) window: Rect,
    /// Space kept between two overlays, and between the HUD and the
    /// window's edges: text that touches something else is hard to read.
    pub(crate) gap: i32,
    /// The score strip where it would like to be, if there are scores.
    pub(crate) scores: Option<Rect>,
    /// The banner where it would like to be, if there is a message.
    pub(crate) banner: Option<Rect>,
    /// The HUD block's lines.
    pub(crate) hud: HudBlock,
}

/// The HUD: a backing with lines of text stacked on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HudBlock {
    /// Every line, top to bottom.
    pub(crate) lines: Vec<HudLine>,
    /// Pixels from the top of one line to the top of the next.
    pub(crate) line_height: u32,
    /// Pixels between the text and the edge of its backing.
    pub(crate) pad: u32,
}

/// One line of the HUD.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HudLine {
    /// The width of its text, in pixels.
    pub(crate) width: u32,
    /// How much it is needed: when not every line fits, the lines with the
    /// highest rank are left out first.
    pub(crate) rank: u8,
}

/// Where the overlays go; `None` for one that is not shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placed {
    /// The score strip.
    pub(crate) scores: Option<Rect>,
    /// The banner.
    pub(crate) banner: Option<Rect>,
    /// The HUD block and which of its lines it shows.
    pub(crate) hud: Option<PlacedHud>,
}

/// The HUD block as placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlacedHud {
    /// Its backing; the shown lines are stacked inside, in their order.
    pub(crate) rect: Rect,
    /// For each line of [`HudBlock::lines`], whether it is shown.
    pub(crate) shown: Vec<bool>,
}

impl Placed {
    /// Every overlay shown.
    #[cfg(test)]
    pub(crate) fn rects(&self) -> Vec<Rect> {
        let hud = self.hud.as_ref().map(|hud| hud.rect);
        [self.scores, self.banner, hud]
            .into_iter()
            .flatten()
            .collect()
    }
}

/// Places the overlays; see the [module docs](self) for the rules.
pub(crate) fn place(wanted: &Wanted) -> Placed {
    let (window, gap) = (wanted.window, wanted.gap);
    let mut scores = wanted.scores;
    let banner = wanted.banner.map(|banner| match scores {
        Some(strip) if apart(strip, banner, gap) => banner,
        Some(strip) => {
            let below = (strip.bottom() + gap).min(window.bottom() - banner.height() as i32);
            Rect::new(
                banner.x(),
                below.max(window.y()),
                banner.width(),
                banner.height(),
            )
        }
        None => banner,
    });
    if let (Some(strip), Some(banner)) = (scores, banner) {
        if !apart(strip, banner, gap) {
            scores = None;
        }
    }
    let taken: Vec<Rect> = [scores, banner].into_iter().flatten().collect();
    Placed {
        scores,
        banner,
        hud: place_hud(&wanted.hud, window, gap, &taken),
    }
}

/// The HUD block with as many lines as fit somewhere clear of `taken`.
fn place_hud(hud: &HudBlock, window: Rect, gap: i32, taken: &[Rect]) -> Option<PlacedHud> {
    let mut needed: Vec<usize> = (0..hud.lines.len()).collect();
    needed.sort_by_key(|&line| hud.lines[line].rank);
    let mut tops: Vec<i32> = taken.iter().map(|rect| rect.bottom() + gap).collect();
    tops.push(window.y() + gap);
    tops.sort_unstable();
    for count in (1..=needed.len()).rev() {
        let mut shown = vec![false; hud.lines.len()];
        for &line in &needed[..count] {
            shown[line] = true;
        }
        let (width, height) = block_size(hud, &shown);
        let fits = |&top: &i32| {
            let rect = Rect::new(window.x() + gap, top, width, height);
            let inside = rect.bottom() <= window.bottom();
            (inside && taken.iter().all(|&other| apart(other, rect, gap))).then_some(rect)
        };
        if let Some(rect) = tops.iter().find_map(fits) {
            return Some(PlacedHud { rect, shown });
        }
    }
    None
}

/// The size of the HUD's backing with the `shown` lines.
fn block_size(hud: &HudBlock, shown: &[bool]) -> (u32, u32) {
    let lines = hud.lines.iter().zip(shown).filter(|(_, &shown)| shown);
    let (count, widest) = lines.fold((0, 0), |(count, widest), (line, _)| {
        (count + 1, line.width.max(widest))
    });
    (widest + 2 * hud.pad, count * hud.line_height + 2 * hud.pad)
}

/// Whether `a` and `b` are at least `gap` pixels apart (touching if the
/// gap is 0 or less).
fn apart(a: Rect, b: Rect, gap: i32) -> bool {
    let gap = gap.max(0);
    let grow = 2 * gap.unsigned_abs();
    let grown = Rect::new(
        a.x() - gap,
        a.y() - gap,
        a.width() + grow,
        a.height() + grow,
    );
    !grown.has_intersection(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Six lines like the game's, 160 px wide, 10 px apart; the last is
    /// needed most, the fifth least.
    fn hud() -> HudBlock {
        let ranks = [4, 1, 3, 2, 5, 0];
        HudBlock {
            lines: ranks
                .into_iter()
                .map(|rank| HudLine { width: 160, rank })
                .collect(),
            line_height: 10,
            pad: 4,
        }
    }

    fn wanted(window: (u32, u32), scores: Option<Rect>, banner: Option<Rect>) -> Wanted {
        Wanted {
            window: Rect::new(0, 0, window.0, window.1),
            gap: 4,
            scores,
            banner,
            hud: hud(),
        }
    }

    fn assert_apart(placed: &Placed, gap: i32) {
        let rects = placed.rects();
        for (i, &a) in rects.iter().enumerate() {
            for &b in &rects[i + 1..] {
                assert!(apart(a, b, gap), "{a:?} and {b:?} are closer than {gap} px");
            }
        }
    }

    #[test]
    fn the_hud_keeps_the_corner_when_the_strip_leaves_room_beside_it() {
        let strip = Rect::new(400, 0, 480, 24);
        let placed = place(&wanted((1280, 720), Some(strip), None));
        let hud = placed.hud.as_ref().expect("a HUD");
        assert_eq!(hud.rect, Rect::new(4, 4, 168, 68));
        assert!(hud.shown.iter().all(|&shown| shown));
        assert_eq!(placed.scores, Some(strip));
    }

    #[test]
    fn the_hud_moves_below_a_strip_that_reaches_into_the_corner() {
        let strip = Rect::new(80, 0, 480, 24);
        let placed = place(&wanted((640, 360), Some(strip), None));
        let hud = placed.hud.as_ref().expect("a HUD");
        assert_eq!(hud.rect, Rect::new(4, 28, 168, 68));
        assert!(hud.shown.iter().all(|&shown| shown));
        assert_apart(&placed, 4);
    }

    #[test]
    fn the_hud_leaves_out_the_least_needed_lines_when_the_window_is_too_short() {
        let strip = Rect::new(0, 0, 200, 24);
        let placed = place(&wanted((200, 80), Some(strip), None));
        let hud = placed.hud.as_ref().expect("a HUD");
        // 80 - 28 leaves room for four lines: the hash and FPS go.
        assert_eq!(hud.shown, [false, true, true, true, false, true]);
        assert_eq!(hud.rect, Rect::new(4, 28, 168, 48));
        assert_apart(&placed, 4);
    }

    #[test]
    fn a_window_too_short_for_one_line_has_no_hud() {
        let strip = Rect::new(0, 0, 100, 24);
        let placed = place(&wanted((100, 40), Some(strip), None));
        assert_eq!(placed.hud, None);
        assert_eq!(placed.scores, Some(strip));
    }

    #[test]
    fn the_hud_goes_below_the_banner_when_only_there_has_room() {
        let strip = Rect::new(0, 0, 400, 24);
        let banner = Rect::new(0, 40, 400, 60);
        let placed = place(&wanted((400, 200), Some(strip), Some(banner)));
        let hud = placed.hud.as_ref().expect("a HUD");
        assert_eq!(hud.rect.y(), 104);
        assert!(hud.shown.iter().all(|&shown| shown));
        assert_apart(&placed, 4);
    }

    #[test]
    fn a_banner_over_the_strip_moves_below_it() {
        let strip = Rect::new(0, 0, 400, 24);
        let banner = Rect::new(0, 10, 400, 40);
        let placed = place(&wanted((400, 120), Some(strip), Some(banner)));
        assert_eq!(placed.banner, Some(Rect::new(0, 28, 400, 40)));
        assert_eq!(placed.scores, Some(strip));
        assert_apart(&placed, 4);
    }

    #[test]
    fn the_strip_gives_way_to_a_banner_with_no_room_below_it() {
        let strip = Rect::new(0, 0, 400, 24);
        let banner = Rect::new(0, 4, 400, 56);
        let placed = place(&wanted((400, 64), Some(strip), Some(banner)));
        assert_eq!(placed.banner, Some(Rect::new(0, 8, 400, 56)));
        assert_eq!(placed.scores, None);
        assert_apart(&placed, 4);
    }
}
