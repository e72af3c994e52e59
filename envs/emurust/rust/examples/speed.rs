//! Frames per second of one emulator on one thread.
//! Usage: cargo run --release --example speed -- ROM [FRAMES] [--no-render] [--pyboy] [--eager] [--no-wait-skip] [--no-jit] [--reload] [--play] [--bench-play]
//! `--play` presses START once and then a direction every 24 frames (2048's moves), so a game is
//! measured while it plays rather than on its title screen. `--bench-play` runs the frames of
//! bench.py's "2048 play" workload instead: from the state just after START, its 20 moves (480
//! frames) again and again, each time from that state.
use emurust_core::gameboy::{GameBoy, PowerOn};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let path = positional
        .first()
        .expect("usage: speed ROM [FRAMES] [--no-render] [--pyboy] [--eager] [--no-wait-skip] [--no-jit] [--reload] [--play] [--bench-play]");
    let frames: u32 = positional
        .get(1)
        .map(|s| s.parse().expect("FRAMES"))
        .unwrap_or(3000);
    let rom = std::fs::read(path).expect("read ROM");
    let power_on = if flag("--pyboy") {
        PowerOn::PyBoy
    } else {
        PowerOn::Dmg
    };
    let mut gb = GameBoy::with_power_on(rom, power_on).expect("load ROM");
    gb.set_render(!flag("--no-render"));
    gb.bus.eager_ppu = flag("--eager");
    gb.bus.skip_wait_loops = !flag("--no-wait-skip");
    gb.set_compiled_blocks(!flag("--no-jit"));
    if flag("--bench-play") {
        return bench_play(gb, frames, power_on);
    }
    gb.run_frames(120);
    if flag("--reload") {
        // bench.py's "reload" workloads: from the state after the warm-up, 240 frames a call.
        let warm = gb.save_state();
        let calls = frames.div_ceil(240).max(1);
        let start = Instant::now();
        for _ in 0..calls {
            gb.load_state(&warm).expect("own state");
            gb.run_frames(240);
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{:.0} frames/s ({} frames, reload)",
            (calls * 240) as f64 / secs,
            calls * 240
        );
        return;
    }
    let play = flag("--play");
    if play {
        gb.set_buttons(1 << 3);
        gb.run_frames(4);
        gb.set_buttons(0);
        gb.run_frames(60);
    }
    let start = Instant::now();
    if play {
        for frame in 0..frames {
            match frame % 24 {
                0 => gb.set_buttons(1 << (4 + (frame / 24) % 4)),
                4 => gb.set_buttons(0),
                _ => {}
            }
            gb.run_frame();
        }
    } else {
        gb.run_frames(frames);
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:.0} frames/s ({} frames in {:.3}s, render {}, {:?})",
        frames as f64 / secs,
        frames,
        secs,
        !flag("--no-render"),
        power_on
    );
}

/// bench.py's `PLAY_MOVES` (numpy's `default_rng(2048).integers(0, 4, 20)`), as button bits:
/// up, down, left, right are 0..3 there.
const BENCH_PLAY_MOVES: [u8; 20] = [3, 3, 1, 3, 0, 3, 2, 3, 2, 3, 1, 0, 0, 0, 2, 3, 2, 2, 0, 0];
const DIRECTION_BITS: [u8; 4] = [1 << 6, 1 << 7, 1 << 5, 1 << 4];

fn bench_play(mut gb: GameBoy, frames: u32, power_on: PowerOn) {
    // bench.py's `_ours_start_state`: boot frames + 1, START for 4 frames, 30 frames to settle.
    gb.run_phases(&[(0, 61), (1 << 3, 4), (0, 30)], false);
    let start_state = gb.save_state();
    let phases: Vec<(u8, u32)> = BENCH_PLAY_MOVES
        .iter()
        .flat_map(|&m| [(DIRECTION_BITS[m as usize], 4), (0, 20)])
        .collect();
    let frames_per_call: u32 = phases.iter().map(|&(_, n)| n).sum();
    let calls = frames.div_ceil(frames_per_call).max(1);
    let start = Instant::now();
    let trace = std::env::var_os("SPEED_TRACE").is_some();
    let mut call_times = Vec::new();
    for call in 0..calls {
        let t0 = Instant::now();
        gb.load_state(&start_state).expect("own state");
        gb.run_phases(&phases, false);
        let elapsed = t0.elapsed().as_secs_f64() * 1e3;
        call_times.push(elapsed);
        if trace && call < 12 {
            eprintln!("call {call}: {elapsed:.1} ms");
        }
    }
    // After the first calls (which compile): the steady state, less sensitive to a loaded host.
    let mut steady = call_times.split_off(call_times.len().min(20));
    if !steady.is_empty() {
        steady.sort_by(f64::total_cmp);
        println!(
            "steady calls ({} frames each): min {:.2} ms, median {:.2} ms",
            frames_per_call,
            steady[0],
            steady[steady.len() / 2]
        );
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:.0} frames/s ({} frames in {:.3}s, bench play, render {}, {:?})",
        (calls * frames_per_call) as f64 / secs,
        calls * frames_per_call,
        secs,
        gb.bus.ppu.render(),
        power_on
    );
    let frames_run = (calls * frames_per_call) as f64;
    println!(
        "per frame: {:.0} general steps, {:.0} wait-loop T-cycles passed over",
        gb.bus.general_steps as f64 / frames_run,
        gb.bus.wait_cycles_skipped as f64 / frames_run
    );
    println!(
        "compiled blocks: {:.0} run a frame",
        gb.compiled_blocks_run() as f64 / frames_run
    );
}
