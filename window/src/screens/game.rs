//! The networked game window: a series of games, each after its lobby
//! ([`crate::screens::lobby`]). Every frame of a game is flipcode's loop:
//! run the ticks that are due and whose bundle is here, then the
//! IndependentTickRun (events, the HUD's figures and the net graph's),
//! then draw `previous`→`current` at alpha.

use std::time::Duration;

use lockstep_protocol::Percent;
use sdl2::keyboard::Keycode;

use crate::draw::net_graph::{FrameSample, NetGraph, Observed};
use crate::draw::picture::Roster;
use crate::draw::render::Hud;
use crate::screens::lobby::{self, LastScores, LobbyView};
use crate::screens::screen::{capture, Screen, WindowError};
use lockstep_client::io::clock;
use lockstep_client::io::link::{NetClient, Started};
use lockstep_client::play::{FrameTicks, NetPlay, PlayOptions};
use lockstep_client::play::{GameOutcome, PlayError};
use lockstep_client::window_options::WindowOptions;
use lockstep_engine::games::{ForGame, Games, Playable};

/// Plays networked games in a window: the lobby screen until a game
/// starts, the game until `ticks` (or Esc), and, while games of
/// `play_options.games` remain, the lobby again with the last game's
/// scores. How each game ended, in order.
pub fn run(
    games: &impl Games,
    mut net: NetClient,
    mut options: WindowOptions,
    play_options: PlayOptions,
) -> Result<Vec<GameOutcome>, WindowError> {
    let mut screen = Screen::open(&options)?;
    let mut view = LobbyView {
        ready: options.joins_ready(&play_options),
        browser: Some(format!("http://{}/", net.server())),
        ..LobbyView::default()
    };
    let mut outcomes = Vec::new();
    for game in 1..=play_options.games.max(1) {
        let Some(started) = lobby::wait(
            games,
            &mut screen,
            &net,
            &mut view,
            &mut options,
            game,
            &play_options,
        )?
        else {
            net.leave();
            if outcomes.is_empty() {
                return Err(PlayError::Lost("left before the game started".into()).into());
            }
            return Ok(outcomes);
        };
        let name = started.start.spec.name.clone();
        let one = Networked {
            screen: &mut screen,
            options: &mut options,
            net,
            started,
            play_options: play_options.for_game(game),
            last: play_options.is_last(game),
        };
        let (outcome, next) = games.run(&name, one).map_err(PlayError::from)??;
        outcomes.push(outcome);
        let Some((next, last)) = next else {
            return Ok(outcomes);
        };
        view.last = Some(last);
        view.ready = false;
        view.lobby = None;
        net = next;
    }
    Ok(outcomes)
}

/// One game of a series in the window, whatever the game.
struct Networked<'a> {
    screen: &'a mut Screen,
    options: &'a mut WindowOptions,
    net: NetClient,
    started: Started,
    play_options: PlayOptions,
    /// The last of the series: leave after it.
    last: bool,
}

impl ForGame for Networked<'_> {
    /// How the game ended; while the series goes on, the connection for
    /// the next game and this one's scores for the lobby.
    type Output = Result<(GameOutcome, Option<(NetClient, LastScores)>), WindowError>;

    fn run<G: Playable>(self) -> Self::Output {
        let play = NetPlay::<G>::start(self.net, self.started, self.play_options)?;
        let (play, frame, finished) = play_in_window(self.screen, play, self.options)?;
        if !finished || self.last {
            return Ok((play.finish(frame), None));
        }
        let roster = play.game().roster.clone();
        let (next, outcome, world) = play.finish_game(frame);
        let last = LastScores {
            tick: world.tick().0,
            scores: world
                .scores()
                .into_iter()
                .map(|(player, score)| {
                    let name = roster
                        .iter()
                        .find(|(id, _)| *id == player)
                        .map_or_else(|| format!("P{player}"), |(_, n)| n.clone());
                    (player, name, score)
                })
                .collect(),
        };
        Ok((outcome, Some((next, last))))
    }
}

/// Plays one game in the window until `ticks`, Esc or the window's
/// close; hands the game back with the frame time and whether `ticks`
/// was reached.
fn play_in_window<G: Playable>(
    screen: &mut Screen,
    mut play: NetPlay<G>,
    options: &mut WindowOptions,
) -> Result<(NetPlay<G>, Option<Duration>, bool), WindowError> {
    let mut hud = Hud::default();
    let mut graph = NetGraph::new(options.net_graph);
    let epoch = clock::now();
    let mut last_frame = epoch;
    loop {
        let frame_start = clock::now();
        play.drain()?;
        let frame = play.run_ticks(frame_start, screen.sample());
        // IndependentTickRun: events and HUD figures.
        let pumped = screen.pump();
        let keep_playing = !pumped.quit;
        if pumped.keys.contains(&Keycode::F3) {
            graph.toggle();
        }
        play.hold(screen.sample());
        screen.ticks.add(frame.steps);
        let game = play.game();
        hud.fps = screen.frames.rate;
        hud.ups = screen.ticks.rate;
        hud.tick = game.current.tick().0;
        hud.stalls = game.stats().stalled_ticks;
        hud.hash = game.current.hash();
        hud.rtt_ms = Some(play.link().rtt.as_secs_f32() * 1000.0);
        hud.input_delay = game.input_delay() as u8;
        hud.input_lag_ms = Some(game.input_lag(frame_time(hud.fps)).as_secs_f32() * 1000.0);
        hud.speed = Some(game.speed()).filter(|&speed| speed < Percent::FULL);
        let role = match game.me {
            Some(_) if game.delay_is_adaptive() => "connected, adaptive delay",
            Some(_) => "connected",
            None => "spectating",
        };
        hud.status = play
            .waiting_for()
            .or_else(|| play.replaced_note(frame_start))
            .unwrap_or_else(|| role.to_string());
        hud.banner = play
            .connection_banner()
            .or_else(|| play.desync().map(str::to_string));
        let roster = Roster {
            players: game.roster.clone(),
            me: game.me,
        };
        screen.draw(
            &game.previous,
            &game.current,
            frame.end.alpha,
            &roster,
            &hud,
        )?;
        let now = frame_start.duration_since(epoch).as_secs_f64();
        let frame_ms = frame_start.duration_since(last_frame).as_secs_f32() * 1000.0;
        last_frame = frame_start;
        let (sample, observed) = graph_frame(&play, &frame, frame_ms);
        graph.record(now, sample, observed);
        if graph.shown {
            graph
                .draw(&mut screen.canvas, now)
                .map_err(WindowError::Sdl)?;
        }
        if !options.draw_cost.is_zero() {
            std::thread::sleep(options.draw_cost);
        }
        capture(screen, options, hud.tick)?;
        if options.screenshot_reconnecting && play.is_reconnecting() {
            if let Some(path) = options.screenshot.take() {
                crate::draw::screenshot::save_png(&screen.canvas, &path)?;
            }
        }
        screen.present();
        if !keep_playing || frame.finished {
            return Ok((play, frame_time(hud.fps), frame.finished));
        }
        if !play.game().is_playing() {
            return Err(PlayError::Dropped.into());
        }
        screen.pace(frame_start);
    }
}

/// What the net graph records of the frame of `play` that took
/// `frame_ms`, read off the game and its link.
fn graph_frame<G: Playable>(
    play: &NetPlay<G>,
    frame: &FrameTicks,
    frame_ms: f32,
) -> (FrameSample, Observed) {
    let (game, link) = (play.game(), play.link());
    let sample = FrameSample {
        frame_ms,
        steps: frame.steps,
        rtt_ms: link.rtt.as_secs_f32() * 1000.0,
        jitter_ms: link.jitter.as_secs_f32() * 1000.0,
        delay: game.input_delay(),
        playout: game.playout(),
        held: game.bundles_held(),
        stalled: frame.stalled,
        rx_bytes: link.rx_bytes,
        tx_bytes: link.tx_bytes,
    };
    // The HUD's warning, which waits a moment before it names a late
    // peer: every lag indicator naming one would mark most frames of a
    // jittery link.
    let waiting_for_peer = play.waiting_for().is_some();
    let observed = Observed {
        delay: game.input_delay() + u32::from(game.playout()),
        waiting_for_peer,
        players: game
            .roster
            .iter()
            .filter(|(player, _)| game.current.has_player(*player))
            .count(),
        desync: play.desync().is_some(),
        replaced: game.stats().replaced_inputs,
        speed: game.speed().0,
        stalled: frame.stalled,
    };
    (sample, observed)
}

/// The time of one frame at `fps` frames a second; `None` before the
/// rate is known.
fn frame_time(fps: f32) -> Option<Duration> {
    (fps > 0.0).then(|| Duration::from_secs_f32(1.0 / fps))
}
