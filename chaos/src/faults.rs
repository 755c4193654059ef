//! Each fault done to the real processes, and the answer expected of the
//! system, waited for with a bound (90 s for each thing said, far beyond what
//! a loaded machine takes):
//!
//! | fault | done | answer expected |
//! |---|---|---|
//! | `kill` | the bot SIGKILLed and started again at once, same name | `rejoined name=BOT`, then its own inputs (not stand-ins) in the replay for [`BACK_RUN`] ticks in a row |
//! | `stop` | SIGSTOP, the fault's length, SIGCONT | a `substituted name=BOT` or a `speed ... slowest=BOT` line, no `dropped name=BOT` (the drop timeout is longer than any stop), no speed change postponing the game by more than the stop and [`FORGIVEN_SLACK_MS`], then its own inputs again for [`BACK_RUN`] ticks in a row after the SIGCONT |
//! | `link` | the bot's proxy loses packets in bursts and delays the rest for the fault's length | the window lost and delayed packets, no `dropped name=BOT`, then the bot's own inputs again for [`BACK_RUN`] ticks in a row |
//! | `spectator` | a second spectator starts, watches for the fault's length, gets SIGTERM or SIGKILL | its `caught up with the game` notice, and the server's `spectator joined` and `spectator left` log lines for it |
//! | `server` | SIGKILL, the downtime, the same binary with `--resume REPLAY` on the same port and identity | the same fingerprint, `resuming tick=K` with K the ticks in the replay, `reconnected name=BOT` for all six bots and every peer, `resumed tick=K`, and the spectator's own reconnection notice |
//! | `desync` | the bot restarted with `--inject-desync-at` the game's tick plus the fault's lead; once the desync is named, restarted clean | `rejoined`, then `desync ... diverged=BOT first=TICK` (the injected tick); after the clean restart `rejoined`, a catch-up from a verified snapshot, and its own inputs for [`BACK_RUN`] ticks in a row |
//!
//! Whatever else the system said about the fault (drops, stand-ins,
//! speed changes, the client's notices) is kept with it in the history.

use std::time::Duration;

use crate::history::Entry;
use crate::io::process::{Proc, Signal};
use crate::run::{Run, DROP_TIMEOUT_MS, PATIENCE};
use crate::said::{self, Said};
use crate::schedule::{Bot, Fault, Leave, LinkPlan, Secs, TICK_RATE};

/// Ticks in a row of a bot's own inputs that show it is back in the game:
/// half a second, so a bot that is still stood in for most of the time
/// does not pass for back by one input that made it.
pub const BACK_RUN: u32 = 30;

/// What a speed change after a freeze may forgive beyond the freeze
/// itself, in milliseconds: the announcement's lead and a loaded
/// machine's slow ticks around it.
pub const FORGIVEN_SLACK_MS: u32 = 5_000;

/// The server's events that tell how a restart went: who came back,
/// when the game went on, and who was stood in for or dropped meanwhile.
const RESTART_EVENTS: [&str; 7] = [
    "reconnected",
    "resumed",
    "refused",
    "dropped",
    "substituted",
    "speed",
    "desync",
];

impl Run<'_> {
    /// Does fault `number` and waits for its answer.
    pub(crate) fn fault(&mut self, number: usize, fault: Fault) -> Entry {
        let mut entry = self.entry(number, fault);
        let mark = self.timeline.len();
        let began = self.clock.now();
        let answer = match fault {
            Fault::Kill { bot } => self.kill(bot, mark),
            Fault::Stop { bot, ms } => self.stop(bot, ms, mark),
            Fault::Link { bot, ms, plan } => self.link(bot, ms, plan, mark),
            Fault::Spectator { ms, leave } => self.spectator(ms, leave, mark),
            Fault::Server { down_ms } => self.restart_server(down_ms, mark),
            Fault::Desync { bot, lead } => self.desync(bot, lead, mark),
        };
        entry.took = self.clock.now().saturating_sub(began);
        entry.end_tick = self.tick();
        entry.said = self.said_about(fault, mark);
        entry.answer = answer;
        entry
    }

    /// What the system said from `mark` on that concerns `fault`.
    fn said_about(&self, fault: Fault, mark: usize) -> Vec<Said> {
        let guest = format!("guest{}", self.guests);
        self.timeline[mark..]
            .iter()
            .filter(|s| match fault.bot() {
                Some(bot) => {
                    let name = bot.to_string();
                    s.mentions(&name)
                        || s.is_notice_of(&name)
                        || s.is_event("desync")
                        || said::connection_ended(s, &name)
                }
                None if fault.kind() == crate::schedule::Kind::Spectator => {
                    said::spectator_log(s, &guest).is_some() || s.is_notice_of(&guest)
                }
                None => {
                    s.line.starts_with("resuming tick=")
                        || RESTART_EVENTS.iter().any(|e| s.is_event(e))
                        || (s.is_notice_of("watcher") && said::reconnected_notice(&s.line))
                }
            })
            .cloned()
            .collect()
    }

    /// Waits until `bot`'s own inputs fill [`BACK_RUN`] ticks in a row
    /// from tick `from` on; the first of them.
    fn back_in_game(&mut self, bot: Bot, from: u32) -> Result<u32, String> {
        let name = bot.to_string();
        let back = self.wait(PATIENCE, |run| {
            let replay = run.replay.as_ref()?;
            if let Some(first) = replay.own_run_from(replay.slot(&name)?, from, BACK_RUN) {
                return Some(Ok(first));
            }
            // A bot whose process is gone is not coming back.
            let status = run
                .players
                .iter()
                .find(|p| p.bot == bot)
                .and_then(|p| p.proc.as_ref()?.status())?;
            Some(Err(format!(
                "{name}'s process ended ({status}) before its own inputs filled {BACK_RUN} \
                 ticks in a row after tick {from}"
            )))
        });
        back.unwrap_or_else(|| {
            Err(format!(
                "{name}'s own inputs never filled {BACK_RUN} ticks in a row after tick {from} \
                 (the game is at tick {})",
                self.tick()
            ))
        })
    }

    /// Waits for the server's `event` line about `name` from `mark` on;
    /// its tick.
    fn event_about(&mut self, event: &str, name: &str, mark: usize) -> Result<u32, String> {
        self.wait_line(mark, PATIENCE, |s| s.is_event_about(event, name))
            .map(|s| said::number(&s.line, "tick").unwrap_or_default())
            .ok_or_else(|| format!("the server never said `{event} ... name={name}`"))
    }

    /// A frozen bot or a bad link is a late player, stood in for, not a
    /// lost one: the server's drop timeout ([`DROP_TIMEOUT_MS`]) is longer
    /// than any such fault. A drop of `bot` since `mark` is the failure,
    /// named with what `during` was.
    fn not_dropped(&self, bot: Bot, mark: usize, during: &str) -> Result<(), String> {
        let name = bot.to_string();
        match self.timeline[mark..]
            .iter()
            .find(|s| s.is_event_about("dropped", &name))
        {
            Some(drop) => Err(format!(
                "the server dropped {name} during {during} (`{}`), though --drop-timeout-ms is \
                 {DROP_TIMEOUT_MS}",
                drop.line
            )),
            None => Ok(()),
        }
    }

    /// A speed change for a machine that was frozen forgives the time
    /// the game fell behind meanwhile, which is at most the freeze: no
    /// `speed ... slowest=NAME` line since `mark` may postpone the game by
    /// more than `limit_ms`.
    fn forgiven_at_most(&self, name: &str, mark: usize, limit_ms: u32) -> Result<(), String> {
        let too_much = self.timeline[mark..].iter().find(|s| {
            s.is_event("speed")
                && s.mentions(name)
                && said::number(&s.line, "postpone_ms").is_some_and(|ms| ms > limit_ms)
        });
        match too_much {
            Some(line) => Err(format!(
                "the game was postponed by more than the {} {name} could have held it back: \
                 `{}`",
                Secs(limit_ms),
                line.line
            )),
            None => Ok(()),
        }
    }

    fn player(&mut self, bot: Bot) -> Result<&mut Proc, String> {
        self.players
            .iter_mut()
            .find(|p| p.bot == bot)
            .and_then(|p| p.proc.as_mut())
            .ok_or_else(|| format!("{bot} has no process"))
    }

    fn kill(&mut self, bot: Bot, mark: usize) -> Result<String, String> {
        self.start_bot(bot, &[]).map_err(|e| e.to_string())?;
        let tick = self.event_about("rejoined", &bot.to_string(), mark)?;
        let back = self.back_in_game(bot, tick)?;
        Ok(format!(
            "rejoined at tick {tick}; its own inputs again from tick {back}"
        ))
    }

    fn stop(&mut self, bot: Bot, ms: u32, mark: usize) -> Result<String, String> {
        let name = bot.to_string();
        self.player(bot)?
            .signal(Signal::Stop)
            .map_err(|e| e.to_string())?;
        self.hold(Duration::from_millis(u64::from(ms)));
        self.player(bot)?
            .signal(Signal::Cont)
            .map_err(|e| e.to_string())?;
        let thawed = self.tick();
        let told = self.wait_line(mark, PATIENCE, |s| {
            s.is_event_about("substituted", &name) || (s.is_event("speed") && s.mentions(&name))
        });
        let back = self.back_in_game(bot, thawed)?;
        self.not_dropped(bot, mark, &format!("its {} stop", Secs(ms)))?;
        self.forgiven_at_most(&name, mark, ms + FORGIVEN_SLACK_MS)?;
        let told = told.ok_or_else(|| format!("no stand-in or speed line for {name}"))?;
        Ok(format!(
            "`{}`; SIGCONT at tick {thawed}; its own inputs again from tick {back}",
            told.line
        ))
    }

    fn link(&mut self, bot: Bot, ms: u32, plan: LinkPlan, mark: usize) -> Result<String, String> {
        let from = self.tick();
        let proxy = self
            .proxies
            .iter()
            .find(|(b, _)| *b == bot)
            .map(|(_, p)| p)
            .ok_or_else(|| format!("{bot} has no proxy"))?;
        proxy.open(plan.config());
        self.hold(Duration::from_millis(u64::from(ms)));
        let stats = self
            .proxies
            .iter()
            .find(|(b, _)| *b == bot)
            .and_then(|(_, p)| p.close())
            .unwrap_or_default();
        let to = self.tick();
        let stood_in = self
            .replay
            .as_ref()
            .and_then(|r| Some(r.stand_ins(r.slot(&bot.to_string())?, from, to)))
            .unwrap_or(0);
        let window = format!(
            "{} packets met the window, {} lost, {} delayed by up to {} ms; {stood_in} stand-ins \
             in ticks {from}-{to}",
            stats.packets,
            stats.lost,
            stats.delayed,
            stats.longest.as_millis()
        );
        if stats.lost == 0 || stats.delayed == 0 {
            return Err(format!("the window did nothing: {window}"));
        }
        let back = self.back_in_game(bot, to)?;
        self.not_dropped(bot, mark, "its bad link's window")?;
        Ok(format!("{window}; its own inputs again from tick {back}"))
    }

    fn spectator(&mut self, ms: u32, leave: Leave, mark: usize) -> Result<String, String> {
        self.guests += 1;
        let name = format!("guest{}", self.guests);
        let began = self.clock.now();
        let command = self.client_command(&name, self.addr, &["--spectate"]);
        let proc = Proc::spawn(&name, &name, command, &self.dir.join("logs"))
            .map_err(|e| e.to_string())?;
        self.guest = Some(proc);
        let caught = self.wait_line(mark, PATIENCE, |s| {
            s.is_notice_of(&name) && said::caught_up(&s.line).is_some()
        });
        let joined = self.wait_line(mark, PATIENCE, |s| {
            said::spectator_log(s, &name) == Some(true)
        });
        let stay = Duration::from_millis(u64::from(ms));
        self.hold(stay.saturating_sub(self.clock.now().saturating_sub(began)));
        let left_at = self.tick();
        let mut guest = self.guest.take();
        if let Some(proc) = &mut guest {
            match leave {
                Leave::Term => proc.signal(Signal::Term).map_err(|e| e.to_string())?,
                Leave::Kill => proc.kill(),
            }
        }
        self.retired.extend(guest);
        let left = self.wait_line(mark, PATIENCE, |s| {
            said::spectator_log(s, &name) == Some(false)
        });
        let caught = caught.ok_or_else(|| format!("{name} never caught up with the game"))?;
        joined.ok_or_else(|| format!("the server never logged {name} joining"))?;
        left.ok_or_else(|| format!("the server never logged {name} leaving"))?;
        let (tick, _) = said::caught_up(&caught.line).unwrap_or_default();
        Ok(format!(
            "{name} caught up at tick {tick}, left at tick {left_at}, and the server saw it come and go"
        ))
    }

    fn restart_server(&mut self, down_ms: u32, mark: usize) -> Result<String, String> {
        self.sample_server();
        if let Some(mut old) = self.server.take() {
            old.kill();
            self.retired.push(old);
        }
        self.pump();
        let killed_at = self.tick();
        let path = self
            .replay
            .as_ref()
            .map(|r| r.path().to_path_buf())
            .ok_or("no replay to resume")?;
        self.hold(Duration::from_millis(u64::from(down_ms)));
        self.start_server(Some(&path))?;
        let resuming = self
            .wait_line(mark, PATIENCE, |s| {
                s.is_event("resuming") && s.line.starts_with("resuming tick=")
            })
            .ok_or("the server never said `resuming`")?;
        let tick = said::number(&resuming.line, "tick");
        if tick != Some(killed_at) {
            return Err(format!(
                "`{}`, but the replay held {killed_at} ticks when the server died",
                resuming.line
            ));
        }
        let mut missing = Vec::new();
        let names: Vec<String> = Bot::all()
            .map(|bot| bot.to_string())
            .chain(self.peers.iter().map(|peer| peer.to_string()))
            .collect();
        for name in names {
            if self.event_about("reconnected", &name, mark).is_err() {
                missing.push(name);
            }
        }
        if !missing.is_empty() {
            return Err(format!("never reconnected: {}", missing.join(", ")));
        }
        self.wait_line(mark, PATIENCE, |s| s.is_event("resumed"))
            .ok_or("the server never said `resumed`")?;
        self.wait_line(mark, PATIENCE, |s| {
            s.is_notice_of("watcher") && said::reconnected_notice(&s.line)
        })
        .ok_or("the spectator never said it reconnected")?;
        let peers: String = self.peers.iter().map(|p| format!(", {p}")).collect();
        Ok(format!(
            "resumed at tick {killed_at}, the ticks the replay held; all six bots{peers} and \
             the spectator reconnected"
        ))
    }

    fn desync(&mut self, bot: Bot, lead: u32, mark: usize) -> Result<String, String> {
        let name = bot.to_string();
        let inject = self.tick() + lead;
        self.ending.injected = Some((name.clone(), inject));
        self.start_bot(bot, &["--inject-desync-at", &inject.to_string()])
            .map_err(|e| e.to_string())?;
        let rejoined = self.event_about("rejoined", &name, mark)?;
        let limit = Duration::from_secs(u64::from(lead / TICK_RATE) * 3) + PATIENCE;
        let line = self
            .wait_line(mark, limit, |s| s.is_event("desync"))
            .ok_or_else(|| {
                format!("no desync line after injecting one into {name} from tick {inject}")
            })?;
        let clean = self.timeline.len();
        self.start_bot(bot, &[]).map_err(|e| e.to_string())?;
        let again = self.event_about("rejoined", &name, clean)?;
        let caught = self
            .wait_line(clean, PATIENCE, |s| {
                s.is_notice_of(&name) && said::caught_up(&s.line).is_some()
            })
            .and_then(|s| said::caught_up(&s.line))
            .ok_or_else(|| format!("{name} never caught up after its clean restart"))?;
        let back = self.back_in_game(bot, again)?;
        let named = said::desync(&line.line)
            .is_some_and(|d| d.diverged == [name.clone()] && d.first == Some(inject));
        if !named {
            return Err(format!("`{}` is not {name} from tick {inject}", line.line));
        }
        let Some(snapshot) = caught.1 else {
            return Err(format!(
                "{name} rejoined clean at tick {again} but not from a verified snapshot"
            ));
        };
        Ok(format!(
            "rejoined at tick {rejoined} with the desync from tick {inject}; `{}`; restarted \
             clean, rejoined at tick {again} from the snapshot of tick {snapshot}, its own \
             inputs from tick {back}",
            line.line
        ))
    }
}
