//! Which recorded hash reports a re-simulated replay must reproduce.
//!
//! The server records every hash report it takes, the wrong ones of a
//! player whose world diverged included, and records the desync it named
//! ([`GameEvent::Desync`]). A replay verifies when its bundles give the
//! game the players agreed on; a player the server already named is
//! expected to differ, and does not make the file fail. The rules, each
//! with a test below:
//!
//! 1. A report of a player not named diverged must be reproduced: it is
//!    the evidence that the bundles are the game that was played.
//! 2. At the tick of a recorded desync, at least one report must be
//!    reproduced (the majority's, when there was one). Changed bundles
//!    give a world nobody reported, so they still fail there even when
//!    every reporter of the tick was named (one against one names both).
//! 3. A named player whose report of the desync's tick is not reproduced
//!    is diverged from that tick on: its reports that differ are counted
//!    and said ([`Diverged`]), not failures. A named player whose report
//!    is reproduced is not diverged: where the server had no majority to
//!    tell, the re-simulation does.
//! 4. A diverged player's reports that are reproduced (it came back from a
//!    verified snapshot, say) are as good as anyone's.

use std::collections::BTreeMap;

use lockstep_protocol::{GameEvent, PlayerId, Replay, Tick};

/// A recorded hash that the re-simulation did not reproduce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// World tick of the report.
    pub tick: Tick,
    /// Who reported it.
    pub player: PlayerId,
    /// The recorded hash.
    pub recorded: u64,
    /// The re-simulated hash.
    pub actual: u64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the replay diverges at tick {}: player {} recorded hash {:016x}, re-simulation gives {:016x}",
            self.tick, self.player, self.recorded, self.actual
        )
    }
}

/// A player the server named in a recorded desync, whose reports the
/// re-simulation does not reproduce from that tick on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diverged {
    /// Who.
    pub player: PlayerId,
    /// Its name in the roster.
    pub name: String,
    /// The desync's tick: the first compared tick its hash differed at.
    pub tick: Tick,
    /// The first tick its world differed at, when the server pinpointed it.
    pub first: Option<Tick>,
    /// Its reports the re-simulation did not reproduce.
    pub unreproduced: u32,
}

impl std::fmt::Display for Diverged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "diverged player={} name={} tick={} first=",
            self.player, self.name, self.tick
        )?;
        match self.first {
            Some(first) => write!(f, "{first}")?,
            None => f.write_str("unknown")?,
        }
        write!(f, " unreproduced={}", self.unreproduced)
    }
}

/// A desync as the replay recorded it.
#[derive(Debug, Clone, Default)]
struct Named {
    players: Vec<PlayerId>,
    first: Option<Tick>,
}

/// The recorded reports and desyncs of a replay, checked tick by tick
/// against the re-simulation. Checking a tick again (a playback seeking
/// back) gives the same answer and counts nothing twice.
#[derive(Debug, Clone)]
pub struct ExpectedHashes {
    /// Every tick with something to check: its reports (none for a desync
    /// whose tick has no report in the file).
    reports: BTreeMap<Tick, Vec<(PlayerId, u64)>>,
    /// The recorded desyncs, by tick.
    desyncs: BTreeMap<Tick, Named>,
    /// The roster's names, for [`Diverged::name`].
    names: BTreeMap<PlayerId, String>,
    /// Players found diverged so far.
    diverged: BTreeMap<PlayerId, Diverged>,
    /// Reports checked, each once.
    checked: u32,
    /// Ticks up to here are counted in `checked`.
    checked_through: Option<Tick>,
}

impl ExpectedHashes {
    /// The reports and desyncs recorded in `replay`.
    pub fn new(replay: &Replay) -> ExpectedHashes {
        let mut reports: BTreeMap<Tick, Vec<(PlayerId, u64)>> = BTreeMap::new();
        for &(tick, player, hash) in &replay.hashes {
            reports.entry(tick).or_default().push((player, hash));
        }
        let mut desyncs: BTreeMap<Tick, Named> = BTreeMap::new();
        for (tick, event) in &replay.events {
            if let GameEvent::Desync { diverged, first } = event {
                let named = desyncs.entry(*tick).or_default();
                named.players.extend(diverged.iter().copied());
                named.first = named.first.or(*first);
                reports.entry(*tick).or_default();
            }
        }
        ExpectedHashes {
            reports,
            desyncs,
            names: replay
                .header
                .roster
                .iter()
                .map(|r| (r.id, r.name.clone()))
                .collect(),
            diverged: BTreeMap::new(),
            checked: 0,
            checked_through: None,
        }
    }

    /// Reports checked so far (a tick checked again counts once).
    pub fn checked(&self) -> u32 {
        self.checked
    }

    /// The players found diverged so far, by the tick that named them.
    pub fn diverged(&self) -> Vec<Diverged> {
        let mut diverged: Vec<Diverged> = self.diverged.values().cloned().collect();
        diverged.sort_by_key(|d| (d.tick, d.player));
        diverged
    }

    /// Checks the world after `tick` against what was recorded of it;
    /// `hash` gives the world's hash, asked only for a tick with
    /// something to check. Returns the report that fails the replay, if
    /// one does.
    pub fn check(&mut self, tick: Tick, hash: impl FnOnce() -> u64) -> Option<Mismatch> {
        let reports = self.reports.get(&tick)?;
        let actual = hash();
        let first_time = self.checked_through.is_none_or(|through| tick > through);
        let named = self.desyncs.get(&tick);
        let mut mismatch = None;
        for &(player, recorded) in reports {
            if recorded == actual {
                continue;
            }
            let diverged_before = self.diverged.get(&player).is_some_and(|d| d.tick < tick);
            let named_now = named.is_some_and(|n| n.players.contains(&player));
            if diverged_before || named_now {
                let first = named.and_then(|n| n.first);
                let diverged = diverge(&mut self.diverged, &self.names, player, tick, first);
                if first_time {
                    diverged.unreproduced += 1;
                }
            } else if mismatch.is_none() {
                mismatch = Some(Mismatch {
                    tick,
                    player,
                    recorded,
                    actual,
                });
            }
        }
        if let Some(named) = named {
            if !reports.iter().any(|&(_, recorded)| recorded == actual) {
                // Rule 2: no reporter had this world at the desync: the
                // bundles are not the game that was played.
                mismatch = mismatch.or_else(|| {
                    reports.first().map(|&(player, recorded)| Mismatch {
                        tick,
                        player,
                        recorded,
                        actual,
                    })
                });
            }
            // A named player without a report of the tick is taken at the
            // server's word.
            for &player in &named.players {
                if !reports.iter().any(|&(p, _)| p == player) {
                    diverge(&mut self.diverged, &self.names, player, tick, named.first);
                }
            }
        }
        if first_time {
            self.checked += reports.len() as u32;
            self.checked_through = Some(tick);
        }
        mismatch
    }
}

/// `player`'s entry in `diverged`, made for the desync of `tick` if it
/// has none.
fn diverge<'a>(
    diverged: &'a mut BTreeMap<PlayerId, Diverged>,
    names: &BTreeMap<PlayerId, String>,
    player: PlayerId,
    tick: Tick,
    first: Option<Tick>,
) -> &'a mut Diverged {
    diverged.entry(player).or_insert_with(|| Diverged {
        player,
        name: names.get(&player).cloned().unwrap_or_default(),
        tick,
        first,
        unreproduced: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::reported;

    const ANN: PlayerId = PlayerId(0);
    const BOB: PlayerId = PlayerId(1);
    const CY: PlayerId = PlayerId(2);

    /// The world's hash after tick `t` in these tests.
    fn world(t: u32) -> u64 {
        u64::from(t) * 1000
    }

    /// A replay of ann, bob and cy with `hashes` reported and a desync
    /// recorded at each of `desyncs` (its tick, the named, the first).
    fn replay(hashes: &[(u32, PlayerId, u64)], desyncs: &[(u32, &[PlayerId])]) -> Replay {
        Replay {
            events: desyncs
                .iter()
                .map(|&(t, named)| {
                    let event = GameEvent::Desync {
                        diverged: named.to_vec(),
                        first: Some(Tick(t - 3)),
                    };
                    (Tick(t), event)
                })
                .collect(),
            ..reported(hashes)
        }
    }

    /// Every report of `players` for tick `t`, the world's hash but for
    /// `wrong`'s.
    fn reports(t: u32, players: &[PlayerId], wrong: &[PlayerId]) -> Vec<(u32, PlayerId, u64)> {
        players
            .iter()
            .map(|&p| {
                let hash = if wrong.contains(&p) { 7 } else { world(t) };
                (t, p, hash)
            })
            .collect()
    }

    /// Checks ticks 1 to `through` of the world; the first failure.
    fn run(expected: &mut ExpectedHashes, through: u32) -> Option<Mismatch> {
        (1..=through).fold(None, |first, t| {
            let found = expected.check(Tick(t), || world(t));
            first.or(found)
        })
    }

    #[test]
    fn a_report_of_a_player_never_named_must_be_reproduced() {
        let mut hashes = reports(15, &[ANN, BOB, CY], &[]);
        hashes.extend(reports(30, &[ANN, BOB, CY], &[CY]));
        let mut expected = ExpectedHashes::new(&replay(&hashes, &[]));
        let mismatch = run(&mut expected, 45).expect("cy's hash of tick 30 fails");
        assert_eq!((mismatch.tick, mismatch.player), (Tick(30), CY));
        assert_eq!((mismatch.recorded, mismatch.actual), (7, world(30)));
        assert_eq!(expected.checked(), 6);
    }

    #[test]
    fn a_named_players_reports_that_differ_are_counted_not_failures() {
        let all = [ANN, BOB, CY];
        let mut hashes = reports(15, &all, &[]);
        hashes.extend(reports(30, &all, &[BOB]));
        hashes.extend(reports(45, &all, &[BOB]));
        // bob came back from a verified snapshot: the world's hash again.
        hashes.extend(reports(60, &all, &[]));
        let mut expected = ExpectedHashes::new(&replay(&hashes, &[(30, &[BOB])]));
        assert_eq!(run(&mut expected, 60), None);
        assert_eq!(expected.checked(), 12);
        let bob = Diverged {
            player: BOB,
            name: "bob".into(),
            tick: Tick(30),
            first: Some(Tick(27)),
            unreproduced: 2,
        };
        let diverged = expected.diverged();
        assert_eq!(diverged, [bob]);
        assert_eq!(
            diverged[0].to_string(),
            "diverged player=1 name=bob tick=30 first=27 unreproduced=2"
        );
    }

    #[test]
    fn a_report_that_differs_before_the_desync_naming_its_player_fails() {
        let all = [ANN, BOB, CY];
        let mut hashes = reports(15, &all, &[BOB]);
        hashes.extend(reports(30, &all, &[BOB]));
        let mut expected = ExpectedHashes::new(&replay(&hashes, &[(30, &[BOB])]));
        let mismatch = run(&mut expected, 30).expect("bob's tick 15 fails");
        assert_eq!((mismatch.tick, mismatch.player), (Tick(15), BOB));
    }

    #[test]
    fn a_desync_nobody_reproduces_fails_even_when_every_reporter_was_named() {
        // One against one: the server named both; the bundles give a
        // third world.
        let hashes = [(30, ANN, 5), (30, BOB, 6)];
        let mut expected = ExpectedHashes::new(&replay(&hashes, &[(30, &[ANN, BOB])]));
        let mismatch = run(&mut expected, 30).expect("nobody had this world");
        assert_eq!((mismatch.tick, mismatch.player), (Tick(30), ANN));
        assert_eq!(mismatch.actual, world(30));
    }

    #[test]
    fn without_a_majority_the_re_simulation_tells_who_diverged() {
        let mut hashes = reports(30, &[ANN, BOB], &[BOB]);
        hashes.extend(reports(45, &[ANN, BOB], &[BOB]));
        let desync = [(30, &[ANN, BOB][..])];
        let mut expected = ExpectedHashes::new(&replay(&hashes, &desync));
        assert_eq!(run(&mut expected, 45), None);
        let diverged: Vec<PlayerId> = expected.diverged().iter().map(|d| d.player).collect();
        assert_eq!(diverged, [BOB]);
        // ann's world was the bundles': a later report of hers that
        // differs fails.
        hashes.push((60, ANN, 7));
        let mut expected = ExpectedHashes::new(&replay(&hashes, &desync));
        let mismatch = run(&mut expected, 60).expect("ann's tick 60 fails");
        assert_eq!((mismatch.tick, mismatch.player), (Tick(60), ANN));
    }

    #[test]
    fn checking_a_tick_again_gives_the_same_answer_and_counts_nothing_twice() {
        let all = [ANN, BOB, CY];
        let mut hashes = reports(15, &all, &[]);
        hashes.extend(reports(30, &all, &[BOB]));
        hashes.extend(reports(45, &all, &[BOB]));
        let mut expected = ExpectedHashes::new(&replay(&hashes, &[(30, &[BOB])]));
        run(&mut expected, 45);
        let (checked, diverged) = (expected.checked(), expected.diverged());
        // A playback seeking back to tick 10 steps ticks 11 to 45 again.
        for t in 11..=45 {
            assert_eq!(expected.check(Tick(t), || world(t)), None);
        }
        assert_eq!(expected.checked(), checked);
        assert_eq!(expected.diverged(), diverged);
    }
}
