//! The lab's keys: which key sends which [`Command`], and the legend shown
//! on screen, made from the same table so the two cannot disagree.
//!
//! Steering keeps the game's own keys (W A S D or the arrows, Space or
//! Shift to boost), so no knob sits on them.

use sdl2::keyboard::Keycode;

use super::knobs::{Change, Command};
use lockstep_engine::timing::loops::Strategy;

/// Keys 1 to 7 select the rungs of [`Strategy::ALL`] in order (top row
/// or keypad).
const STRATEGY_KEYS: [[Keycode; 2]; 7] = [
    [Keycode::Num1, Keycode::Kp1],
    [Keycode::Num2, Keycode::Kp2],
    [Keycode::Num3, Keycode::Kp3],
    [Keycode::Num4, Keycode::Kp4],
    [Keycode::Num5, Keycode::Kp5],
    [Keycode::Num6, Keycode::Kp6],
    [Keycode::Num7, Keycode::Kp7],
];

/// One knob key.
struct Binding {
    /// The keys that send it (`=` is `+` without Shift on most layouts).
    keys: &'static [Keycode],
    /// How the legend names the key.
    label: &'static str,
    /// What it changes; consecutive bindings that change the same thing
    /// share a legend entry ("F/G target FPS").
    what: &'static str,
    /// The command sent.
    command: Command,
}

impl Binding {
    const fn new(
        keys: &'static [Keycode],
        label: &'static str,
        what: &'static str,
        command: Command,
    ) -> Binding {
        Binding {
            keys,
            label,
            what,
            command,
        }
    }
}

/// Every knob key, in legend order.
#[rustfmt::skip]
const BINDINGS: [Binding; 13] = [
    Binding::new(&[Keycode::Minus, Keycode::KpMinus], "-", "bots", Command::Bots(Change::Down)),
    Binding::new(&[Keycode::Equals, Keycode::Plus, Keycode::KpPlus], "+", "bots", Command::Bots(Change::Up)),
    Binding::new(&[Keycode::LeftBracket], "[", "tick cost", Command::TickCost(Change::Down)),
    Binding::new(&[Keycode::RightBracket], "]", "tick cost", Command::TickCost(Change::Up)),
    Binding::new(&[Keycode::F], "F", "target FPS", Command::TargetFps(Change::Down)),
    Binding::new(&[Keycode::G], "G", "target FPS", Command::TargetFps(Change::Up)),
    Binding::new(&[Keycode::T], "T", "tick rate", Command::TickRate(Change::Down)),
    Binding::new(&[Keycode::Y], "Y", "tick rate", Command::TickRate(Change::Up)),
    Binding::new(&[Keycode::J], "J", "slow \"7\" spike", Command::Spike),
    Binding::new(&[Keycode::M], "M", "max step", Command::MaxStep),
    Binding::new(&[Keycode::I], "I", "interpolation", Command::Interpolation),
    Binding::new(&[Keycode::L], "L", "MAX_LOOPS", Command::MaxLoops),
    Binding::new(&[Keycode::N], "N", "networked", Command::Networked),
];

/// The command a key sends, if any.
pub fn command(key: Keycode) -> Option<Command> {
    if let Some(rung) = STRATEGY_KEYS.iter().position(|keys| keys.contains(&key)) {
        return Some(Command::Strategy(Strategy::ALL[rung]));
    }
    BINDINGS
        .iter()
        .find(|binding| binding.keys.contains(&key))
        .map(|binding| binding.command)
}

/// The legend's entries, `"F/G target FPS"` and so on, steering and
/// quitting last.
pub fn legend() -> Vec<String> {
    let mut entries = vec!["1-7 strategy".to_owned()];
    let mut bindings = BINDINGS.iter().peekable();
    while let Some(binding) = bindings.next() {
        let mut label = binding.label.to_owned();
        while let Some(next) = bindings.next_if(|next| next.what == binding.what) {
            label = format!("{label}/{}", next.label);
        }
        entries.push(format!("{label} {}", binding.what));
    }
    entries.extend(["WASD steer".to_owned(), "Esc quit".to_owned()]);
    entries
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_keys_climb_the_ladder() {
        assert_eq!(
            command(Keycode::Num1),
            Some(Command::Strategy(Strategy::Variable))
        );
        assert_eq!(
            command(Keycode::Kp7),
            Some(Command::Strategy(Strategy::Mixed))
        );
        assert_eq!(command(Keycode::Num8), None);
    }

    #[test]
    fn no_key_does_two_things_and_steering_keys_do_nothing_here() {
        let mut seen: Vec<Keycode> = STRATEGY_KEYS.iter().flatten().copied().collect();
        for binding in &BINDINGS {
            for key in binding.keys {
                assert!(!seen.contains(key), "{key:?} is bound twice");
                seen.push(*key);
            }
        }
        for steer in [
            Keycode::W,
            Keycode::A,
            Keycode::S,
            Keycode::D,
            Keycode::Space,
        ] {
            assert_eq!(command(steer), None, "{steer:?}");
        }
    }

    #[test]
    fn the_legend_pairs_keys_that_turn_the_same_knob() {
        let legend = legend();
        assert_eq!(legend[0], "1-7 strategy");
        assert!(legend.contains(&"-/+ bots".to_owned()), "{legend:?}");
        assert!(legend.contains(&"F/G target FPS".to_owned()), "{legend:?}");
        assert!(legend.contains(&"N networked".to_owned()), "{legend:?}");
        assert_eq!(legend.len(), 1 + 9 + 2);
    }
}
