//! Frames per second of one emulator on one thread.
//! Usage: cargo run --release --example speed -- ROM [FRAMES] [--no-render] [--pyboy] [--eager] [--play]
//! `--play` presses START once and then a direction every 24 frames (2048's moves), so a game is
//! measured while it plays rather than on its title screen.
use emurust_core::gameboy::{GameBoy, PowerOn};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().any(|a| a == name);
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let path = positional
        .first()
        .expect("usage: speed ROM [FRAMES] [--no-render] [--pyboy] [--eager] [--play]");
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
    gb.run_frames(120);
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
