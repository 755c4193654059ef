use super::*;

fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

#[test]
fn every_scenario_repeats_in_process_and_differs_from_the_others() {
    let ticks = 90;
    let mut hashes = Vec::new();
    for name in SCENARIOS {
        let first = run(name, ticks, 30).unwrap();
        let second = run(name, ticks, 30).unwrap();
        assert_eq!(first, second, "{name} is not repeatable");
        if first.ticks.is_some() {
            assert_eq!(first.checkpoints.len(), 3, "{name}");
            assert_eq!(first.checkpoints.last(), Some(&first.hash), "{name}");
        }
        hashes.push(first.hash);
    }
    for (i, a) in hashes.iter().enumerate() {
        for (j, b) in hashes.iter().enumerate().skip(i + 1) {
            assert_ne!(a, b, "{} and {} hash alike", SCENARIOS[i], SCENARIOS[j]);
        }
    }
}

#[test]
fn the_worlds_move() {
    for name in SCENARIOS
        .iter()
        .filter(|n| !n.starts_with("bvh") && **n != "game")
    {
        let outcome = run(name, 60, 1).unwrap();
        assert_ne!(outcome.checkpoints[0], outcome.checkpoints[59], "{name}");
    }
}

#[test]
fn the_control_is_the_offline_game() {
    let game = lockstep_engine::offline::<Physics>(&game_setup(), 40);
    assert_eq!(run("game", 40, 0).unwrap().hash, game.hash());
}

#[test]
fn the_offcentre_limits_are_not_centred_and_the_centred_ones_are() {
    for link in 0..CHAIN_LINKS {
        let [lo, hi] = offcentre_limits(link);
        assert_ne!((lo + hi) * 0.5, 0.0);
        assert!(hi - lo < 2.0);
        let [lo, hi] = centred_limits(link);
        assert_eq!((lo + hi) * 0.5, 0.0);
    }
}

#[test]
fn the_custom_shape_reaches_the_fallback_and_the_cuboid_does_not() {
    use rapier2d::parry::query::ToiProxy;
    let slab = Slab(Cuboid::new(Vector::new(0.3, 0.1)));
    assert!(ToiProxy::from_shape(&slab).is_none());
    assert!(ToiProxy::from_shape(&slab.0).is_some());
    assert!(ToiProxy::from_shape(&HalfSpace::new(Vector::Y)).is_none());
}

#[test]
fn the_bvh_scenarios_know_no_ticks() {
    let outcome = run("bvh-log2", 5, 1).unwrap();
    assert_eq!(outcome.ticks, None);
    assert!(outcome.checkpoints.is_empty());
    assert!(outcome
        .line()
        .starts_with("probe scenario=bvh-log2 leaves=200000 hash="));
}

#[test]
fn the_command_prints_one_line_per_scenario() {
    let lines = command("t", &args("--ticks 20 --every 10 multibody game")).unwrap();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].starts_with("probe scenario=multibody ticks=20 hash="));
    assert_eq!(
        lines[0]
            .split(" hash10=")
            .nth(1)
            .unwrap()
            .split(',')
            .count(),
        2
    );
    assert!(lines[1].starts_with("probe scenario=game ticks=20 hash="));
    let all = command("t", &args("--ticks 2 --every 0")).unwrap();
    assert_eq!(all.len(), SCENARIOS.len());
    assert!(!all[0].contains("hash0="));
    assert!(command("t", &args("nonsense"))
        .unwrap_err()
        .contains("unknown scenario"));
    assert!(command("t", &args("--ticks"))
        .unwrap_err()
        .contains("needs a value"));
    assert!(command("t", &args("--ticks x"))
        .unwrap_err()
        .contains("not a number"));
}

#[test]
fn the_chains_trace_their_bodies_and_joints_and_other_scenarios_refuse_to() {
    let lines = command("t", &args("--ticks 4 --trace 3..4 limits-centred")).unwrap();
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("probe scenario=limits-centred ticks=4 hash="),
        "{last}"
    );
    let untraced = command("t", &args("--ticks 4 limits-centred")).unwrap();
    assert_eq!(untraced.last(), Some(last));
    let entries = lockstep_engine::trace::entries_of("probe", &lines.join("\n")).unwrap();
    // 17 bodies of 4 values and 16 joints of 2, in each of two ticks.
    assert_eq!(entries.len(), 2 * (17 * 4 + 16 * 2));
    assert_eq!((entries[0].tick, entries.last().unwrap().tick), (3, 4));
    assert!(entries
        .iter()
        .any(|e| e.label == "joint.rotation" && e.index == Some(15)));
    assert!(entries
        .iter()
        .all(|e| e.file.ends_with("games/topple/src/probe.rs")));
    let refused = command("t", &args("--trace 3 game")).unwrap_err();
    assert!(
        refused.contains("the scenario game is not traced"),
        "{refused}"
    );
    assert!(command("t", &args("--trace 0")).is_err());
}
