//! What the run shows beyond the checks: where each bot was stood in for,
//! and every change of the game's speed. Stand-ins during a fault done to
//! the bot are its answer; after a server restart they are the players
//! catching up; anywhere else they are worth a look (a bot whose clock
//! stays behind, a machine too loaded to keep up). Reported, not judged:
//! a loaded machine stands in for its bots and slows the game now and
//! then.

use lockstep_protocol::{Bundle, PlayerId};

use crate::history::Entry;
use crate::said::Said;
use crate::schedule::{Kind, TICK_RATE};

/// Game time after a server restart counted as its aftermath.
const AFTER_RESTART_TICKS: u32 = 30 * TICK_RATE;

/// One line per bot: its stand-ins in all, during its own faults, in the
/// aftermath of server restarts, and elsewhere.
pub fn stand_ins(
    bundles: &[Bundle],
    roster: &[(PlayerId, String)],
    entries: &[Entry],
) -> Vec<String> {
    let restarts: Vec<(u32, u32)> = entries
        .iter()
        .filter(|e| e.fault.kind() == Kind::Server)
        .map(|e| (e.tick, e.end_tick + AFTER_RESTART_TICKS))
        .collect();
    let mut lines = Vec::new();
    for (player, name) in roster {
        let own: Vec<(u32, u32)> = entries
            .iter()
            .filter(|e| e.fault.bot().is_some_and(|b| b.to_string() == *name))
            .map(|e| (e.tick, e.end_tick))
            .collect();
        let within =
            |spans: &[(u32, u32)], tick: u32| spans.iter().any(|&(a, b)| (a..=b).contains(&tick));
        let (mut all, mut during, mut after, mut elsewhere) = (0, 0, 0, Vec::new());
        for (tick, bundle) in bundles.iter().enumerate() {
            if !bundle.substituted.contains(player) {
                continue;
            }
            let tick = u32::try_from(tick).unwrap_or(u32::MAX);
            all += 1;
            if within(&own, tick) {
                during += 1;
            } else if within(&restarts, tick) {
                after += 1;
            } else {
                elsewhere.push(tick);
            }
        }
        let mut line = format!(
            "stand-ins {name}: {all} in all; {during} during its own faults, {after} within 30 s \
             of a server restart, {} elsewhere",
            elsewhere.len()
        );
        if let (Some(first), Some(last)) = (elsewhere.first(), elsewhere.last()) {
            line.push_str(&format!(" (ticks {first}-{last})"));
        }
        lines.push(line);
    }
    lines
}

/// Every speed change any server of the run announced, in order.
pub fn speed_changes(timeline: &[Said]) -> Vec<String> {
    timeline
        .iter()
        .filter(|s| s.is_event("speed"))
        .map(|s| format!("speed change: {}", s.line))
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::schedule::{Bot, Fault};

    fn bundle(substituted: &[u8]) -> Bundle {
        Bundle {
            substituted: substituted.iter().map(|&p| PlayerId(p)).collect(),
            ..Bundle::default()
        }
    }

    fn entry(fault: Fault, tick: u32, end_tick: u32) -> Entry {
        Entry {
            number: 1,
            fault,
            at: Duration::ZERO,
            tick,
            end_tick,
            said: Vec::new(),
            took: Duration::ZERO,
            answer: Ok(String::new()),
        }
    }

    #[test]
    fn every_speed_change_of_any_server_is_listed() {
        let said = |who: &str, line: &str| Said {
            at: Duration::ZERO,
            who: who.into(),
            stream: crate::said::Stream::Out,
            line: line.into(),
        };
        let timeline = [
            said(
                "server",
                "speed percent=25 from_tick=4263 reason=slow slowest=bot3",
            ),
            said("bot3", "speed percent=1"),
            said("server", "resumed tick=5000"),
        ];
        assert_eq!(
            speed_changes(&timeline),
            ["speed change: speed percent=25 from_tick=4263 reason=slow slowest=bot3"]
        );
    }

    #[test]
    fn stand_ins_are_told_apart_by_the_faults_around_them() {
        let mut bundles: Vec<Bundle> = (0..5000).map(|_| bundle(&[])).collect();
        for tick in [100, 101, 2100, 4000] {
            bundles[tick] = bundle(&[0]);
        }
        bundles[4001] = bundle(&[1]);
        let roster = [
            (PlayerId(0), "bot1".to_string()),
            (PlayerId(1), "bot2".to_string()),
        ];
        let entries = [
            entry(
                Fault::Stop {
                    bot: Bot(1),
                    ms: 1000,
                },
                90,
                200,
            ),
            entry(Fault::Server { down_ms: 0 }, 1000, 1100),
        ];
        assert_eq!(
            stand_ins(&bundles, &roster, &entries),
            [
                "stand-ins bot1: 4 in all; 2 during its own faults, 1 within 30 s of a server \
                 restart, 1 elsewhere (ticks 4000-4000)",
                "stand-ins bot2: 1 in all; 0 during its own faults, 0 within 30 s of a server \
                 restart, 1 elsewhere (ticks 4001-4001)",
            ]
        );
    }
}
