//! The end of a run: the bots and the spectator end the game, the server
//! says its verdict and goes, the replay is verified, and everything the
//! run saw is gathered into its [`crate::checks::Ending`] and judged.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::checks::{self, Judgement, Verified};
use crate::io::process::{Proc, Signal};
use crate::observe;
use crate::run::{Run, PATIENCE, STOPPED};
use crate::said::{self, Stream};

impl Run<'_> {
    /// After the last fault: the bots, the peers and the spectator end the
    /// game, the server its verdict, and the replay is verified.
    pub(crate) fn finish(&mut self) -> Result<(), String> {
        let limit = self.bound(self.schedule.ticks());
        let ended = self.wait(limit, |run| {
            let mut procs = run.players.iter().filter_map(|p| p.proc.as_ref());
            let bots = procs.all(|p| p.exited_now());
            let peers = run.peer_procs.iter().all(|(_, p)| p.exited_now());
            let watcher = run.watcher.as_ref().is_none_or(Proc::exited_now);
            (bots && peers && watcher).then_some(())
        });
        if ended.is_none() && self.stopped() {
            return Err(STOPPED.into());
        }
        if ended.is_none() {
            let running: Vec<&str> = self
                .players
                .iter()
                .filter_map(|p| p.proc.as_ref())
                .chain(self.peer_procs.iter().map(|(_, p)| p))
                .chain(self.watcher.as_ref())
                .filter(|p| !p.exited_now())
                .map(|p| p.name.as_str())
                .collect();
            return Err(format!(
                "the players had not ended the game at tick {}: {} still running",
                self.tick(),
                running.join(", ")
            ));
        }
        self.say(&format!(
            "the bots ended the game; the replay holds {} ticks",
            self.tick()
        ));
        self.wait_line(0, PATIENCE, |s| s.is_event("game over"));
        self.sample_server();
        if let Some(server) = &mut self.server {
            let _ = server.signal(Signal::Term);
        }
        let gone = self.wait(PATIENCE, |run| {
            run.server
                .as_ref()
                .is_none_or(Proc::exited_now)
                .then_some(())
        });
        if gone.is_none() {
            if let Some(server) = &mut self.server {
                server.kill();
            }
        }
        self.pump();
        Ok(())
    }

    /// Collects what the run saw into its ending and judges it.
    pub(crate) fn conclude(&mut self) -> Judgement {
        self.pump();
        let timeline = &self.timeline;
        let mut finals = Vec::new();
        // What shows each lost player gone, one entry per player.
        let mut lost: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for player in &self.players {
            let name = player.bot.to_string();
            let end = final_of(&timeline[player.since.min(timeline.len())..], &name);
            if end.is_none() {
                let status = player.proc.as_ref().and_then(Proc::status);
                lost.entry(name.clone()).or_default().push(format!(
                    "its last process (of {}) printed no final line{}",
                    player.generation,
                    status.map_or(String::new(), |s| format!(" and ended with {s}"))
                ));
            }
            finals.push((name, end));
        }
        for (peer, proc) in &self.peer_procs {
            let name = peer.name();
            let end = final_of(timeline, name);
            if end.is_none() {
                let status = proc.status();
                lost.entry(name.to_string()).or_default().push(format!(
                    "it printed no final line{}",
                    status.map_or(String::new(), |s| format!(" and ended with {s}"))
                ));
            }
            finals.push((name.to_string(), end));
        }
        for (name, why) in drops_never_back(timeline, self.schedule.ticks()) {
            lost.entry(name).or_default().push(why);
        }
        self.ending.never_back = lost
            .into_iter()
            .map(|(name, why)| format!("{name}: {}", why.join("; ")))
            .collect();
        finals.push(("watcher".to_string(), final_of(timeline, "watcher")));
        self.ending.finals = finals;
        self.ending.desyncs = timeline
            .iter()
            .filter(|s| s.is_event("desync"))
            .filter_map(|s| said::desync(&s.line))
            .collect();
        self.ending.verdict = timeline
            .iter()
            .rev()
            .find(|s| s.is_event("verdict"))
            .map(|s| s.line.clone());
        if let Some(replay) = &self.replay {
            self.ending.recorded = replay.ticks();
            self.ending.roster = replay
                .header
                .iter()
                .flat_map(|h| h.roster.iter().map(|r| (r.id.0, r.name.clone())))
                .collect();
            let path = replay.path().to_path_buf();
            let whole = self.verify(&path, None);
            let at_end = self.verify(&path, Some(self.schedule.ticks()));
            self.ending.verified = Some((whole, at_end));
        }
        let observed = self.replay.as_ref().map(|replay| {
            let roster: Vec<_> = replay
                .header
                .iter()
                .flat_map(|h| h.roster.iter().map(|r| (r.id, r.name.clone())))
                .collect();
            observe::stand_ins(&replay.bundles, &roster, &self.ending.entries)
        });
        let speeds = observe::speed_changes(&self.timeline);
        let figures = self.figures.lines(&self.ending.entries);
        for line in observed
            .unwrap_or_default()
            .into_iter()
            .chain(speeds)
            .chain(figures)
        {
            self.say(&line);
        }
        let judgement = checks::judge(&self.ending);
        for failure in &judgement.failures {
            self.say(&format!("check FAILED: {failure}"));
        }
        judgement
    }

    /// `lockstep-client replay FILE --verify --headless [--ticks N]`.
    fn verify(&mut self, file: &Path, ticks: Option<u32>) -> Verified {
        let mut command = Command::new(&self.client_bin);
        command
            .arg("replay")
            .arg(file)
            .args(["--verify", "--headless"]);
        if let Some(ticks) = ticks {
            command.args(["--ticks", &ticks.to_string()]);
        }
        let output = command
            .output()
            .map_err(|e| format!("cannot run the verifier: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let shown = ticks.map_or(String::new(), |t| format!(" --ticks {t}"));
        for line in stdout.lines().chain(stderr.lines()) {
            self.say(&format!("replay --verify{shown}: {line}"));
        }
        let end = stdout.lines().find_map(said::final_line);
        match (output.status.success(), end) {
            (true, Some((tick, hash))) => Ok((tick, hash.to_string())),
            _ => Err(stderr.lines().last().unwrap_or("no final line").to_string()),
        }
    }
}

/// The players the server dropped who never rejoined nor reconnected
/// after it, each with the drop's line, in `timeline` of a game of
/// `ticks` ticks. Leaving at the end of the game is no loss, and neither
/// is a drop after a player's own final line at the game's last tick: a
/// browser whose page is closed once it has printed its final line drops
/// its WebSocket, which the server, still counting down the bots' last
/// ticks, reports as a disconnection.
fn drops_never_back(timeline: &[said::Said], ticks: u32) -> Vec<(String, String)> {
    let mut lost = Vec::new();
    for (i, drop) in timeline
        .iter()
        .enumerate()
        .filter(|(_, s)| s.is_event("dropped"))
    {
        let Some(name) = said::field(&drop.line, "name") else {
            continue;
        };
        if matches!(said::field(&drop.line, "reason"), Some("left" | "finished")) {
            continue;
        }
        let finished = final_of(timeline, name).is_some_and(|(tick, _)| tick >= ticks);
        let after_the_end = said::field(&drop.line, "tick")
            .and_then(|tick| tick.parse::<u32>().ok())
            .is_some_and(|tick| tick >= ticks);
        if finished && after_the_end {
            continue;
        }
        let back = timeline[i + 1..]
            .iter()
            .any(|s| s.is_event_about("rejoined", name) || s.is_event_about("reconnected", name));
        if !back {
            lost.push((
                name.to_string(),
                format!("`{}` and no rejoin after it", drop.line),
            ));
        }
    }
    lost
}

/// The first `final tick=T hash=H` line `who` printed in `timeline`.
fn final_of(timeline: &[said::Said], who: &str) -> Option<(u32, String)> {
    timeline
        .iter()
        .filter(|s| s.who == who && s.stream == Stream::Out)
        .find_map(|s| said::final_line(&s.line))
        .map(|(tick, hash)| (tick, hash.to_string()))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::said::{Said, SERVER};

    fn said(who: &str, line: &str) -> Said {
        Said {
            at: Duration::ZERO,
            who: who.into(),
            stream: Stream::Out,
            line: line.into(),
        }
    }

    #[test]
    fn a_drop_is_a_loss_unless_the_player_came_back_left_or_had_finished_the_game() {
        let timeline = [
            said(
                SERVER,
                "dropped player=1 name=bot1 tick=300 reason=reconnected",
            ),
            said(SERVER, "rejoined player=1 name=bot1 tick=380"),
            said(
                SERVER,
                "dropped player=2 name=bot2 tick=500 reason=disconnected",
            ),
            said(SERVER, "dropped player=3 name=bot3 tick=7200 reason=left"),
            said("web", "final tick=7200 hash=2f30652f52f935f1"),
            said(
                SERVER,
                "dropped player=6 name=web tick=7216 reason=disconnected",
            ),
            said(
                SERVER,
                "dropped player=4 name=bot4 tick=7210 reason=disconnected",
            ),
        ];
        let lost = drops_never_back(&timeline, 7200);
        let names: Vec<&str> = lost.iter().map(|(name, _)| name.as_str()).collect();
        // bot4 printed no final line: its drop after the last tick is a loss.
        assert_eq!(names, ["bot2", "bot4"]);
        assert!(lost[0].1.contains("tick=500"), "{lost:?}");
        // The same drop of the browser before the game's end is a loss.
        let early = [
            said("web", "final tick=7200 hash=2f30652f52f935f1"),
            said(
                SERVER,
                "dropped player=6 name=web tick=7100 reason=disconnected",
            ),
        ];
        assert_eq!(drops_never_back(&early, 7200).len(), 1);
    }
}
