//! Each player's last recorded hash report, set beside the re-simulated
//! world at its tick: what a player's own `final` line compares with.
//!
//! A replay goes on for a few ticks after the players stop (the bundles
//! relayed while they were leaving), so its `final` line is not at the
//! tick any player ended on. A player reports its hash every hash
//! interval; with `--ticks` a multiple of it (the default 900 and 15),
//! its last report is at the tick of its `final` line, with its hash.

use std::collections::BTreeMap;

use lockstep_protocol::{PlayerId, Replay, Tick};

/// A player's last recorded report, and the re-simulated world's hash at
/// its tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastReport {
    /// Who.
    pub player: PlayerId,
    /// Its name in the roster.
    pub name: String,
    /// The tick of its last report.
    pub tick: Tick,
    /// The re-simulated world's hash at `tick`.
    pub actual: u64,
    /// The hash it reported.
    pub reported: u64,
}

impl std::fmt::Display for LastReport {
    /// `last player=P name=N tick=T hash=H`, the re-simulated hash, with
    /// ` reported=R` after it when the player's differs (a player the
    /// server named diverged).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "last player={} name={} tick={} hash={:016x}",
            self.player, self.name, self.tick, self.actual
        )?;
        if self.reported != self.actual {
            write!(f, " reported={:016x}", self.reported)?;
        }
        Ok(())
    }
}

/// The last reports of a replay up to a tick, waiting for the world's
/// hash at their ticks.
#[derive(Debug, Clone)]
pub struct LastReports {
    /// By player: the tick and hash of its last report.
    reports: BTreeMap<PlayerId, (Tick, u64)>,
    /// The roster's names.
    names: BTreeMap<PlayerId, String>,
    /// The world's hash at the ticks seen so far.
    worlds: BTreeMap<Tick, u64>,
}

impl LastReports {
    /// Every player's last report in `replay` at or before tick `through`
    /// (the later one in the file where a tick was reported twice).
    pub fn new(replay: &Replay, through: u32) -> LastReports {
        let mut reports = BTreeMap::new();
        for &(tick, player, hash) in &replay.hashes {
            let latest = reports.get(&player).is_none_or(|&(t, _)| tick >= t);
            if tick.0 <= through && latest {
                reports.insert(player, (tick, hash));
            }
        }
        LastReports {
            reports,
            names: replay
                .header
                .roster
                .iter()
                .map(|r| (r.id, r.name.clone()))
                .collect(),
            worlds: BTreeMap::new(),
        }
    }

    /// The ticks whose world hash is wanted, ascending.
    pub fn ticks(&self) -> Vec<Tick> {
        let mut ticks: Vec<Tick> = self.reports.values().map(|&(t, _)| t).collect();
        ticks.sort_unstable();
        ticks.dedup();
        ticks
    }

    /// Takes the world's hash at `tick`.
    pub fn world(&mut self, tick: Tick, hash: u64) {
        self.worlds.insert(tick, hash);
    }

    /// The reports whose tick's world was taken, by player.
    pub fn finish(self) -> Vec<LastReport> {
        self.reports
            .iter()
            .filter_map(|(&player, &(tick, reported))| {
                Some(LastReport {
                    player,
                    name: self.names.get(&player).cloned().unwrap_or_default(),
                    tick,
                    actual: *self.worlds.get(&tick)?,
                    reported,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::reported;

    fn replay(hashes: &[(u32, u8, u64)]) -> Replay {
        let hashes: Vec<(u32, PlayerId, u64)> = hashes
            .iter()
            .map(|&(t, p, h)| (t, PlayerId(p), h))
            .collect();
        reported(&hashes)
    }

    #[test]
    fn each_player_is_said_at_its_last_report_up_to_the_tick_asked_with_the_world_there() {
        // ann to 30, bob to 15 (it left), cy never reported; cy's 45 is
        // past the tick asked.
        let recorded = replay(&[
            (15, 0, 150),
            (15, 1, 150),
            (30, 0, 300),
            (45, 2, 450),
            (30, 0, 301),
        ]);
        let mut last = LastReports::new(&recorded, 40);
        assert_eq!(last.ticks(), [Tick(15), Tick(30)]);
        last.world(Tick(15), 150);
        last.world(Tick(30), 300);
        let lines: Vec<String> = last.finish().iter().map(ToString::to_string).collect();
        assert_eq!(
            lines,
            [
                // The later report of tick 30 in the file is ann's last.
                "last player=0 name=ann tick=30 hash=000000000000012c reported=000000000000012d",
                "last player=1 name=bob tick=15 hash=0000000000000096",
            ]
        );
    }

    #[test]
    fn a_report_whose_world_was_not_reached_is_not_said() {
        let recorded = replay(&[(15, 0, 150), (30, 1, 300)]);
        let mut last = LastReports::new(&recorded, 900);
        last.world(Tick(15), 150);
        let said = last.finish();
        assert_eq!(said.len(), 1);
        assert_eq!(said[0].player, PlayerId(0));
    }
}
