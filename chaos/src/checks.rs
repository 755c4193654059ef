//! The run's last judgement: whether every fault got its answer, whether
//! everyone who stayed ended on one hash, whether the only desync was the
//! injected one, whether the replay holds and verifies the whole game and
//! whether any player that kept trying was lost; and the summary line.

use crate::history::Entry;
use crate::peers::{self, Peer};
use crate::said::DesyncLine;
use crate::schedule::{Fault, Kind};

/// What `lockstep-client replay FILE --verify --headless` concluded: the
/// ticks verified and the final hash, or what it said was wrong.
pub type Verified = Result<(u32, String), String>;

/// Everything the run saw by its end.
#[derive(Debug, Default)]
pub struct Ending {
    /// The run's seed.
    pub seed: u64,
    /// Minutes of game.
    pub minutes: u32,
    /// Ticks every bot plays.
    pub ticks: u32,
    /// The other machines that played beside the bots.
    pub peers: Vec<Peer>,
    /// Every fault done.
    pub entries: Vec<Entry>,
    /// Faults never done, with why.
    pub not_done: Vec<(usize, Fault, String)>,
    /// Why the run stopped before the game's end, if it did.
    pub stopped: Option<String>,
    /// Each bot's last process, each peer and the staying spectator, with
    /// their final line if they printed one.
    pub finals: Vec<(String, Option<(u32, String)>)>,
    /// Every desync line of every server.
    pub desyncs: Vec<DesyncLine>,
    /// The bot a desync was injected into, and its first nudged tick.
    pub injected: Option<(String, u32)>,
    /// The last server's verdict line.
    pub verdict: Option<String>,
    /// Ticks in the replay.
    pub recorded: u32,
    /// The replay's roster: slot numbers and names.
    pub roster: Vec<(u8, String)>,
    /// The replay verified whole, and verified to the bots' last tick.
    pub verified: Option<(Verified, Verified)>,
    /// Bots that never came back while they kept trying, one entry per
    /// bot with what shows it.
    pub never_back: Vec<String>,
}

/// The judgement: every failed check, and the summary line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    /// Each check that failed, in words; empty when every one held.
    pub failures: Vec<String>,
    /// `chaos seed=S minutes=M faults=N kinds=... desyncs=D verdict=V
    /// lost=L`, and `peers=browser,aarch64` (those that played) after it.
    pub summary: String,
}

/// The survivors' agreement: `agreed` when every one printed the same
/// final line at the game's last tick, `unfinished` when one printed
/// none, `split` otherwise.
fn verdict(ending: &Ending) -> &'static str {
    let finals: Vec<&(u32, String)> = ending
        .finals
        .iter()
        .filter_map(|(_, f)| f.as_ref())
        .collect();
    if ending.finals.is_empty() || finals.len() < ending.finals.len() {
        "unfinished"
    } else if finals
        .iter()
        .all(|f| f.0 == ending.ticks && f.1 == finals[0].1)
    {
        "agreed"
    } else {
        "split"
    }
}

/// Judges `ending`.
pub fn judge(ending: &Ending) -> Judgement {
    let mut failures = Vec::new();
    if let Some(why) = &ending.stopped {
        failures.push(format!("the run stopped early: {why}"));
    }
    for entry in &ending.entries {
        if let Err(missing) = &entry.answer {
            failures.push(format!(
                "fault {} ({}) got no answer: {missing}",
                entry.number, entry.fault
            ));
        }
    }
    for (number, fault, why) in &ending.not_done {
        failures.push(format!("fault {number} ({fault}) was never done: {why}"));
    }
    let count = |kind: Kind| {
        ending
            .entries
            .iter()
            .filter(|e| e.fault.kind() == kind)
            .count()
    };
    for kind in Kind::ALL {
        if count(kind) == 0 {
            failures.push(format!("no {} fault was done", kind.name()));
        }
    }
    let verdict = verdict(ending);
    if verdict != "agreed" {
        let ends: Vec<String> = ending
            .finals
            .iter()
            .map(|(who, end)| match end {
                Some((tick, hash)) => format!("{who} final tick={tick} hash={hash}"),
                None => format!("{who} no final line"),
            })
            .collect();
        failures.push(format!(
            "the bots, peers and spectator do not all end on one final line at tick {}: {}",
            ending.ticks,
            ends.join("; ")
        ));
    }
    failures.extend(desync_failures(ending));
    failures.extend(verdict_failure(ending));
    if ending.recorded < ending.ticks {
        failures.push(format!(
            "the replay holds {} ticks, not the game's {}",
            ending.recorded, ending.ticks
        ));
    }
    failures.extend(replay_failures(ending));
    for lost in &ending.never_back {
        failures.push(format!("a player never came back: {lost}"));
    }
    let kinds: Vec<String> = Kind::ALL
        .iter()
        .map(|&k| format!("{}:{}", k.name(), count(k)))
        .collect();
    let lost = ending.ticks.saturating_sub(ending.recorded) as usize + ending.never_back.len();
    let mut summary = format!(
        "chaos seed={} minutes={} faults={} kinds={} desyncs={} verdict={verdict} lost={lost}",
        ending.seed,
        ending.minutes,
        ending.entries.len(),
        kinds.join(","),
        ending.desyncs.len(),
    );
    if let Some(field) = peers::summary_field(&ending.peers) {
        summary.push(' ');
        summary.push_str(&field);
    }
    Judgement { failures, summary }
}

/// Exactly the injected desync: one line, naming only its bot, first at
/// its tick.
fn desync_failures(ending: &Ending) -> Vec<String> {
    let mut failures = Vec::new();
    let named = |line: &DesyncLine| {
        format!(
            "desync tick={} diverged={} first={}",
            line.tick,
            line.diverged.join(","),
            line.first.map_or("unknown".into(), |f| f.to_string())
        )
    };
    match &ending.injected {
        Some((bot, tick)) => {
            let expected =
                |line: &DesyncLine| line.diverged == [bot.clone()] && line.first == Some(*tick);
            if !ending.desyncs.iter().any(expected) {
                failures.push(format!(
                    "the injected desync ({bot} from tick {tick}) was not named as such"
                ));
            }
            for line in ending.desyncs.iter().filter(|l| !expected(l)) {
                failures.push(format!(
                    "a desync besides the injected one: {}",
                    named(line)
                ));
            }
            if ending.desyncs.iter().filter(|l| expected(l)).count() > 1 {
                failures.push("the injected desync was named more than once".into());
            }
        }
        None => {
            for line in &ending.desyncs {
                failures.push(format!("a desync nobody injected: {}", named(line)));
            }
        }
    }
    failures
}

/// The last server's verdict is the whole game's: it names the injected
/// bot and nobody else (it diverged once, even if it agrees again now),
/// or, without an injected desync, agrees.
fn verdict_failure(ending: &Ending) -> Option<String> {
    let Some(line) = &ending.verdict else {
        return Some("the server printed no verdict".into());
    };
    let diverged: Vec<&str> = crate::said::field(line, "diverged")
        .unwrap_or_default()
        .split(',')
        .filter_map(|p| p.split('@').next())
        .filter(|name| !name.is_empty())
        .collect();
    match &ending.injected {
        Some((bot, tick)) if diverged != [bot.as_str()] => Some(format!(
            "the server's verdict `{line}` does not name {bot} alone, whose desync from tick \
             {tick} the game had"
        )),
        None if !diverged.is_empty() => Some(format!(
            "the server's verdict `{line}` names a desync nobody injected"
        )),
        _ => None,
    }
}

/// The replay verifies whole, and to the bots' last tick on their hash.
fn replay_failures(ending: &Ending) -> Vec<String> {
    let Some((whole, at_end)) = &ending.verified else {
        return vec!["the replay was not verified".into()];
    };
    let mut failures = Vec::new();
    match whole {
        Ok((ticks, _)) if *ticks != ending.recorded => failures.push(format!(
            "replay --verify verified {ticks} ticks of the {} recorded",
            ending.recorded
        )),
        Ok(_) => {}
        Err(said) => failures.push(format!(
            "replay --verify fails: {said}{}",
            whose(ending, said)
        )),
    }
    let hash = ending.finals.iter().find_map(|(_, f)| f.as_ref());
    match (at_end, hash) {
        (Ok(end), Some(hash)) if end != hash => failures.push(format!(
            "replay --verify --ticks {} ends on {}, the bots on {}",
            ending.ticks, end.1, hash.1
        )),
        (Err(said), _) => failures.push(format!(
            "replay --verify --ticks {} fails: {said}{}",
            ending.ticks,
            whose(ending, said)
        )),
        _ => {}
    }
    failures
}

/// Whose report the verifier's `the replay diverges at tick X: player P
/// recorded hash ...` names, when it is the injected bot's: the replay
/// holds the hashes it reported while diverged, and the verifier checks
/// them like anyone's.
fn whose(ending: &Ending, said: &str) -> String {
    let Some((_, rest)) = said.split_once("the replay diverges at tick ") else {
        return String::new();
    };
    let mut words = rest.split_whitespace();
    let tick = words.next().map(|t| t.trim_end_matches(':'));
    let slot = words.nth(1).and_then(|p| p.parse::<u8>().ok());
    let name = ending
        .roster
        .iter()
        .find(|(s, _)| Some(*s) == slot)
        .map(|(_, n)| n.as_str());
    match (&ending.injected, name, tick) {
        (Some((bot, _)), Some(name), Some(tick)) if name == bot => format!(
            " (player {} is {bot}: its own hash of tick {tick}, reported while it diverged \
             with the injected desync, which the replay records)",
            slot.unwrap_or_default()
        ),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::schedule::{Bot, Leave};

    const HASH: &str = "0123456789abcdef";

    fn entry(number: usize, fault: Fault) -> Entry {
        Entry {
            number,
            fault,
            at: Duration::ZERO,
            tick: 0,
            end_tick: 0,
            said: Vec::new(),
            took: Duration::ZERO,
            answer: Ok("answered".into()),
        }
    }

    /// A run where everything held.
    fn good() -> Ending {
        let faults = [
            Fault::Kill { bot: Bot(1) },
            Fault::Stop {
                bot: Bot(2),
                ms: 1000,
            },
            Fault::Spectator {
                ms: 4000,
                leave: Leave::Term,
            },
            Fault::Server { down_ms: 0 },
            Fault::Server { down_ms: 0 },
            Fault::Desync {
                bot: Bot(3),
                lead: 360,
            },
        ];
        let mut entries: Vec<Entry> = faults
            .into_iter()
            .enumerate()
            .map(|(i, f)| entry(i + 1, f))
            .collect();
        let link = crate::schedule::Schedule::plan(1, 2)
            .unwrap()
            .faults
            .into_iter()
            .find(|p| p.fault.kind() == Kind::Link)
            .unwrap();
        entries.push(entry(7, link.fault));
        Ending {
            seed: 7,
            minutes: 2,
            ticks: 7200,
            entries,
            finals: ["bot1", "bot2", "watcher"]
                .iter()
                .map(|w| (w.to_string(), Some((7200, HASH.to_string()))))
                .collect(),
            desyncs: vec![DesyncLine {
                tick: 3015,
                diverged: vec!["bot3".into()],
                first: Some(3002),
            }],
            injected: Some(("bot3".into(), 3002)),
            verdict: Some(
                "verdict diverged ticks=7300 checks=90 diverged=bot3@x86_64 majority=x".into(),
            ),
            recorded: 7300,
            verified: Some((Ok((7300, "ff".into())), Ok((7200, HASH.into())))),
            ..Ending::default()
        }
    }

    #[test]
    fn a_run_where_everything_held_passes_with_its_summary() {
        let judgement = judge(&good());
        assert_eq!(judgement.failures, Vec::<String>::new());
        assert_eq!(
            judgement.summary,
            "chaos seed=7 minutes=2 faults=7 kinds=kill:1,stop:1,link:1,spectator:1,server:2,\
             desync:1 desyncs=1 verdict=agreed lost=0"
        );
    }

    #[test]
    fn peers_are_named_in_the_summary_and_judged_like_the_bots() {
        let mut ending = good();
        ending.peers = vec![Peer::Browser, Peer::Aarch64];
        ending
            .finals
            .push(("web".into(), Some((7200, HASH.to_string()))));
        ending.finals.push(("arm".into(), None));
        let judgement = judge(&ending);
        assert!(
            judgement
                .summary
                .ends_with(" verdict=unfinished lost=0 peers=browser,aarch64"),
            "{judgement:?}"
        );
        assert!(
            judgement
                .failures
                .iter()
                .any(|f| f.contains("arm no final line")),
            "{judgement:?}"
        );
    }

    #[test]
    fn a_survivor_on_another_hash_splits_the_verdict() {
        let mut ending = good();
        ending.finals[1].1 = Some((7200, "ffffffffffffffff".into()));
        let judgement = judge(&ending);
        assert!(
            judgement.summary.contains(" verdict=split "),
            "{judgement:?}"
        );
        ending.finals[1].1 = None;
        let judgement = judge(&ending);
        assert!(judgement.summary.contains(" verdict=unfinished "));
        assert_eq!(judgement.failures.len(), 1, "{judgement:?}");
    }

    #[test]
    fn a_second_desync_or_one_at_another_tick_fails() {
        let mut ending = good();
        ending.desyncs.push(DesyncLine {
            tick: 5000,
            diverged: vec!["bot1".into()],
            first: None,
        });
        let failures = judge(&ending).failures;
        assert_eq!(
            failures,
            ["a desync besides the injected one: desync tick=5000 diverged=bot1 first=unknown"]
        );
        let mut ending = good();
        ending.desyncs[0].first = Some(3001);
        assert_eq!(judge(&ending).failures.len(), 2);
    }

    #[test]
    fn missing_ticks_and_players_that_never_came_back_are_lost() {
        let mut ending = good();
        ending.recorded = 7100;
        ending.verified = Some((Ok((7100, "ff".into())), Ok((7200, HASH.into()))));
        ending
            .never_back
            .push("bot4 (dropped at tick 5000, no rejoin)".into());
        let judgement = judge(&ending);
        assert!(judgement.summary.ends_with(" lost=101"), "{judgement:?}");
        assert_eq!(judgement.failures.len(), 2, "{judgement:?}");
    }

    #[test]
    fn a_replay_that_does_not_verify_fails_with_what_the_verifier_said() {
        let mut ending = good();
        ending.verified = Some((
            Err("the replay diverges at tick 3015: player 2 ...".into()),
            Err("the replay diverges at tick 3015: player 2 ...".into()),
        ));
        let failures = judge(&ending).failures;
        assert_eq!(failures.len(), 2);
        assert!(failures[0].starts_with("replay --verify fails: the replay diverges"));
        ending.roster = vec![(1, "bot1".into()), (2, "bot3".into())];
        let failures = judge(&ending).failures;
        assert!(
            failures[0].ends_with(
                "(player 2 is bot3: its own hash of tick 3015, reported while it diverged with \
                 the injected desync, which the replay records)"
            ),
            "{failures:?}"
        );
    }

    #[test]
    fn a_fault_without_its_answer_or_never_done_fails() {
        let mut ending = good();
        ending.entries[0].answer = Err("no rejoined line".into());
        let (_, fault, _) = (0, ending.entries[1].fault, ());
        ending
            .not_done
            .push((8, fault, "the game was past tick 6300".into()));
        let failures = judge(&ending).failures;
        assert_eq!(
            failures,
            [
                "fault 1 (kill bot1) got no answer: no rejoined line",
                "fault 8 (stop bot2 for 1.0 s) was never done: the game was past tick 6300",
            ]
        );
    }

    #[test]
    fn a_verdict_naming_another_bot_or_forgetting_the_desync_fails() {
        let mut ending = good();
        ending.verdict =
            Some("verdict diverged ticks=1 checks=1 diverged=bot3@a,bot5@a majority=".into());
        assert_eq!(judge(&ending).failures.len(), 1);
        ending.verdict = Some("verdict agreed ticks=7300 checks=90 platforms=a,a,a".into());
        assert_eq!(
            judge(&ending).failures,
            [
                "the server's verdict `verdict agreed ticks=7300 checks=90 platforms=a,a,a` does \
                 not name bot3 alone, whose desync from tick 3002 the game had"
            ]
        );
    }
}
