//! Solo play in the window: any game against its bots, no server. Every
//! frame is flipcode's loop with MAX_LOOPS on: run the ticks that are due
//! (pending time the machine cannot keep up with is discarded), then the
//! events and HUD figures, then draw `previous`→`current` at alpha.

use lockstep_engine::games::Playable;
use lockstep_engine::replay::recorder::solo_header;
use lockstep_engine::solo::SoloGame;
use lockstep_engine::timing::accumulator::{FixedStep, Policy};
use lockstep_engine::{Bots, Setup};
use lockstep_protocol::Percent;

use crate::draw::picture::Roster;
use crate::draw::render::Hud;
use crate::screens::screen::{capture, Screen, WindowError};
use lockstep_client::io::clock;
use lockstep_client::io::recording::FileRecorder;
use lockstep_client::play::GameOutcome;
use lockstep_client::window_options::{SoloOptions, WindowOptions};

/// Plays alone against bots: no server, MAX_LOOPS on, pending time
/// discarded when the machine cannot keep up.
pub fn run<G: Playable>(
    solo: SoloOptions,
    mut options: WindowOptions,
) -> Result<GameOutcome, WindowError> {
    let setup = Setup {
        seed: solo.seed,
        tick_rate: solo.tick_rate,
        settings: G::parse_settings(&solo.settings).map_err(WindowError::Settings)?,
        players: Vec::new(),
    };
    let mut screen = Screen::open(&options)?;
    let me = SoloGame::<G, Bots<G>>::ME;
    let opponents = SoloGame::<G, Bots<G>>::opponent_ids(solo.bots);
    let bots = Bots::<G>::new(solo.seed, &opponents);
    let mut game = SoloGame::new(setup.clone(), solo.bots, &options.title, bots);
    let mut my_bot = options.bot.map(|seed| G::bot(seed, me));
    let mut fixed = FixedStep::new(solo.tick_rate, Policy::flipcode(solo.max_loops));
    let roster = Roster {
        players: game.roster.clone(),
        me: Some(me),
    };
    let mut recorder = match &solo.record {
        Some(path) => {
            let header = solo_header::<G>(&setup, game.roster_entries(), clock::unix_seconds());
            Some(FileRecorder::create(path, &header, me)?)
        }
        None => None,
    };
    let mut hud = Hud {
        status: format!("solo, MAX_LOOPS {}", solo.max_loops),
        ..Hud::default()
    };
    let mut last = clock::now();
    loop {
        let frame_start = clock::now();
        fixed.begin_frame(frame_start.duration_since(last).as_nanos() as u64);
        last = frame_start;
        let mut steps = 0;
        while fixed.due() && options.ticks.is_none_or(|t| game.current.tick().0 < t) {
            let mine = match &mut my_bot {
                Some(bot) => game.current.bot_input(bot, me),
                None => screen.sample(),
            };
            let bundle = game.tick(mine);
            if let Some(recorder) = &mut recorder {
                if let Err(stopped) = recorder.tick(&bundle, &game.current) {
                    eprintln!("lockstep-client: {stopped}");
                }
            }
            fixed.stepped();
            steps += 1;
        }
        let end = fixed.end_frame();
        let keep_playing = !screen.pump().quit;
        screen.ticks.add(steps);
        hud.fps = screen.frames.rate;
        hud.ups = screen.ticks.rate;
        hud.tick = game.current.tick().0;
        hud.hash = game.current.hash();
        screen.draw(&game.previous, &game.current, end.alpha, &roster, &hud)?;
        capture(&screen, &mut options, hud.tick)?;
        screen.present();
        let finished = options.ticks.is_some_and(|t| game.current.tick().0 >= t);
        if !keep_playing || finished {
            if let Some(recorder) = recorder.take() {
                if let Err(problem) = recorder.finish("the player left") {
                    eprintln!("lockstep-client: {problem}");
                }
            }
            return Ok(GameOutcome {
                tick: game.current.tick().0,
                hash: game.current.hash(),
                stalled_ticks: 0,
                replaced: 0,
                slowest_speed: Percent::FULL,
                tx_bytes: 0,
                rx_bytes: 0,
                rtt_us: 0,
                delay: 0,
                playout: 0,
                input_lag_ms: 0,
                inputs_on_schedule: 0,
                caught_up: 0,
            });
        }
        screen.pace(frame_start);
    }
}
