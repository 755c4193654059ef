//! The physics game against the engine's contract: same inputs, same bits;
//! a copy or a snapshot continues exactly as the original; the desync diff
//! names bodies' fields; bad snapshots are refused.

use lockstep_engine::determinism::diff::diff_worlds;
use lockstep_engine::{offline, offline_variable, Bots, Game, HasBots, Setup};
use lockstep_protocol::{Buttons, Input, PlayerId, PlayerInput, Tick};
use lockstep_topple::{Physics, PhysicsSettings};

fn setup(players: u8, seed: u64, bodies: u16) -> Setup<PhysicsSettings> {
    Setup {
        seed,
        tick_rate: 60,
        settings: PhysicsSettings { bodies },
        players: (0..players).map(PlayerId).collect(),
    }
}

/// `game` and its bots played on for `ticks`.
fn play_on(game: &mut Physics, bots: &mut Bots<Physics>, ticks: u32) {
    for _ in 0..ticks {
        let inputs = bots.inputs(game);
        game.step(&inputs);
    }
}

#[test]
fn the_default_game_has_over_150_dynamic_bodies_of_two_shapes_standing_in_stacks() {
    let mut game = Physics::start(&setup(4, 1, PhysicsSettings::default().bodies));
    let dynamic = game.bodies().skip(1).count();
    assert!(dynamic >= 150, "{dynamic} dynamic bodies");
    let shapes: std::collections::BTreeSet<_> = (1..game.body_count())
        .map(|slot| {
            format!("{:?}", game.shape(slot))
                .chars()
                .take(3)
                .collect::<String>()
        })
        .collect();
    assert!(
        shapes.contains("Cra") && shapes.contains("Bal"),
        "{shapes:?}"
    );
    for _ in 0..600 {
        game.step(&[]);
    }
    // With nobody pushing, the towers stand: most bodies rest above the
    // first layer, and contacts hold them.
    let high = game.bodies().filter(|b| b.translation.y > 2.0).count();
    assert!(
        high > dynamic / 2,
        "only {high} of {dynamic} bodies still stacked"
    );
    assert!(
        game.touching_pairs() > 150,
        "{} contacts",
        game.touching_pairs()
    );
}

#[test]
fn the_same_setup_and_inputs_give_the_same_hash_and_another_seed_another() {
    let a = offline::<Physics>(&setup(4, 7, 160), 300);
    let b = offline::<Physics>(&setup(4, 7, 160), 300);
    let c = offline::<Physics>(&setup(4, 8, 160), 300);
    assert_eq!(a.tick(), Tick(300));
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a, b);
    assert_ne!(a.hash(), c.hash());
}

#[test]
fn a_variable_step_of_the_fixed_dt_is_the_fixed_step() {
    let setup = setup(4, 3, 60);
    let variable = offline_variable::<Physics>(&setup, 120, 1.0 / 60.0)
        .expect("the physics game steps by any dt");
    let fixed = offline::<Physics>(&setup, 120);
    assert_eq!(variable.hash(), fixed.hash());
    assert_eq!(variable, fixed);
}

#[test]
fn two_half_steps_push_a_ram_about_as_far_as_one_whole_step_and_the_tick_comes_back() {
    let push = [PlayerInput {
        player: PlayerId(0),
        input: Input {
            buttons: Buttons::RIGHT,
            axes: None,
        },
    }];
    let start = Physics::start(&setup(1, 1, 0));
    let ram_x = |game: &Physics| game.bodies().nth(1).expect("the ram").translation.x;
    let (mut whole, mut halves) = (start.clone(), start.clone());
    for _ in 0..30 {
        whole.step_variable(&push, 1.0 / 60.0).expect("variable");
        halves.step_variable(&push, 1.0 / 120.0).expect("variable");
        halves.step_variable(&push, 1.0 / 120.0).expect("variable");
    }
    let (moved_whole, moved_halves) = (
        ram_x(&whole) - ram_x(&start),
        ram_x(&halves) - ram_x(&start),
    );
    assert!(moved_whole > 0.1, "the ram moved {moved_whole} m");
    assert!(
        (moved_halves - moved_whole).abs() < moved_whole * 0.1,
        "halves {moved_halves} m, whole {moved_whole} m"
    );
    // The fixed tick is back after each variable step: what follows is
    // stepped as before.
    let mut after = halves.clone();
    after.step(&push);
    halves.step_variable(&push, 1.0 / 60.0).expect("variable");
    assert_eq!(after, halves);
}

#[test]
fn every_player_input_moves_its_ram_in_the_tick_it_is_given() {
    let mut game = Physics::start(&setup(3, 1, 40));
    let mut idle = game.clone();
    let push = Input {
        buttons: Buttons::RIGHT,
        axes: None,
    };
    for player in 0..3 {
        let inputs = [PlayerInput {
            player: PlayerId(player),
            input: push,
        }];
        game.step(&inputs);
        idle.step(&[]);
        let slot = game.rams()[usize::from(player)].body as usize;
        let moved = game.bodies().nth(slot).unwrap().linvel.x;
        let still = idle.bodies().nth(slot).unwrap().linvel.x;
        assert!(moved > still, "player {player}: {moved} vs {still}");
        idle = game.clone();
    }
}

#[test]
fn bots_knock_bodies_off_and_score() {
    let game = offline::<Physics>(&setup(4, 1, 160), 1800);
    let scored: u32 = game.rams().iter().map(|r| r.score).sum();
    assert!(scored >= 5, "{scored} points in 30 s of bots");
}

/// rapier #966: a world restored at a contact-heavy tick must go on as the
/// one never stopped, warm starts and broad phase included.
#[test]
fn a_copy_and_a_snapshot_taken_mid_pile_continue_to_the_straight_runs_hash() {
    let setup = setup(4, 3, 160);
    let mut straight = Physics::start(&setup);
    let mut bots = Bots::<Physics>::new(setup.seed, &setup.players);
    play_on(&mut straight, &mut bots, 400);
    assert!(straight.touching_pairs() > 150);
    let mut copy = straight.clone();
    let bytes = straight.snapshot_bytes();
    let mut restored: Physics = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(restored.hash(), straight.hash());
    let (mut copy_bots, mut restored_bots) = (bots.clone(), bots.clone());
    play_on(&mut straight, &mut bots, 600);
    play_on(&mut copy, &mut copy_bots, 600);
    play_on(&mut restored, &mut restored_bots, 600);
    assert_eq!(copy.hash(), straight.hash());
    assert_eq!(restored.hash(), straight.hash());
    assert_eq!(restored.snapshot_bytes(), straight.snapshot_bytes());
}

#[test]
fn the_json_form_names_every_body_and_reads_back_to_the_same_state() {
    let game = offline::<Physics>(&setup(2, 5, 30), 90);
    let json = serde_json::to_value(&game).unwrap();
    assert_eq!(json["bodies"].as_array().unwrap().len(), game.body_count());
    assert!(json["bodies"][1]["linvel"]["y"].is_number());
    let back: Physics = serde_json::from_value(json).unwrap();
    assert_eq!(back.hash(), game.hash());
    assert_eq!(back, game);
}

#[test]
fn the_diff_names_the_nudged_field_with_both_bit_patterns() {
    let game = offline::<Physics>(&setup(2, 5, 30), 90);
    let mut nudged = game.clone();
    let field = nudged.nudge().unwrap();
    let diffs = diff_worlds(&game, &nudged);
    let named: Vec<String> = diffs.iter().map(|d| d.path.clone()).collect();
    assert!(named.contains(&field.to_string()), "{named:?}");
    let line = diffs.iter().find(|d| d.path == field).unwrap().to_string();
    assert!(
        line.starts_with("bodies[1].linvel.x: ") && line.contains("bits 0x"),
        "{line}"
    );
}

#[test]
fn a_player_who_leaves_is_disabled_and_comes_back_at_its_spawn() {
    let mut game = offline::<Physics>(&setup(2, 5, 30), 60);
    let slot = game.rams()[1].body as usize;
    game.remove_player(PlayerId(1));
    assert!(!game.has_player(PlayerId(1)));
    game.step(&[]);
    assert!(!game.bodies().nth(slot).unwrap().enabled);
    game.add_player(PlayerId(1));
    assert!(game.has_player(PlayerId(1)));
    let body = game.bodies().nth(slot).unwrap();
    assert!(body.enabled);
    assert_eq!(
        [body.translation.x, body.translation.y],
        game.rams()[1].spawn
    );
    game.add_player(PlayerId(9));
    assert!(!game.has_player(PlayerId(9)));
}

#[test]
fn settings_are_parsed_checked_and_described() {
    let pairs = |v: &str| vec![("bodies".to_string(), v.to_string())];
    assert_eq!(
        Physics::parse_settings(&pairs("300")),
        Ok(PhysicsSettings { bodies: 300 })
    );
    assert!(Physics::parse_settings(&pairs("5000")).is_err());
    assert!(Physics::parse_settings(&pairs("x")).is_err());
    assert!(Physics::parse_settings(&[("balls".into(), "3".into())])
        .unwrap_err()
        .contains("no setting \"balls\""));
    assert_eq!(
        Physics::describe_settings(&PhysicsSettings::default()),
        "160 bodies"
    );
}

#[test]
fn garbage_and_cut_snapshots_are_refused_without_a_panic() {
    let game = offline::<Physics>(&setup(2, 5, 30), 30);
    let bytes = game.snapshot_bytes();
    for cut in [0, 1, bytes.len() / 2, bytes.len() - 1] {
        assert!(
            postcard::from_bytes::<Physics>(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
    }
    let mut flipped = bytes.clone();
    for i in (0..flipped.len()).step_by(97) {
        flipped[i] ^= 0xa5;
        // Either refused or a state; never a panic.
        let _ = postcard::from_bytes::<Physics>(&flipped);
    }
    assert!(serde_json::from_str::<Physics>("{\"tick\":1}").is_err());
}

/// The sync test from a tick deep in the pile: every tick for two seconds,
/// the snapshot of 8 ticks back is restored and stepped on, and must reach
/// the straight run's hash and state.
#[test]
fn the_sync_test_passes_through_a_contact_heavy_stretch() {
    let setup = setup(4, 11, 160);
    let mut game = Physics::start(&setup);
    let mut bots = Bots::<Physics>::new(setup.seed, &setup.players);
    play_on(&mut game, &mut bots, 300);
    assert!(
        game.touching_pairs() > 150,
        "{} contacts",
        game.touching_pairs()
    );
    let mut straight = game.clone();
    let mut straight_bots = bots.clone();
    let checked =
        lockstep_engine::determinism::synctest::check(game, |game| bots.inputs(game), 120, 8)
            .unwrap();
    play_on(&mut straight, &mut straight_bots, 120);
    assert_eq!(checked.hash(), straight.hash());
}

/// The fault of a desync test nudges every step from its tick on: the
/// state must differ from the honest one at every tick, never come back.
#[test]
fn a_nudge_in_every_step_keeps_the_game_apart_from_the_honest_one() {
    for seed in 1..=8 {
        let setup = setup(2, seed, 160);
        let mut honest = Physics::start(&setup);
        let mut bots = Bots::<Physics>::new(seed, &setup.players);
        play_on(&mut honest, &mut bots, 90);
        let mut faulty = honest.clone();
        for tick in 0..60 {
            let inputs = bots.inputs(&honest);
            honest.step(&inputs);
            faulty.step_phases(&inputs, &mut |phase, game| {
                if phase == "physics" {
                    game.nudge();
                }
            });
            assert_ne!(
                honest.hash(),
                faulty.hash(),
                "seed {seed}: equal again {tick} ticks on"
            );
        }
    }
}
