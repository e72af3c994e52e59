//! Frames per second of one emulator on one thread.
//! Usage: cargo run --release --example speed -- ROM [FRAMES] [--no-render]
use emurust_core::gameboy::GameBoy;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let render = !args.iter().any(|a| a == "--no-render");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let path = positional
        .first()
        .expect("usage: speed ROM [FRAMES] [--no-render]");
    let frames: u32 = positional
        .get(1)
        .map(|s| s.parse().expect("FRAMES"))
        .unwrap_or(3000);
    let rom = std::fs::read(path).expect("read ROM");
    let mut gb = GameBoy::new(rom).expect("load ROM");
    gb.set_render(render);
    gb.run_frames(120);
    let start = Instant::now();
    gb.run_frames(frames);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:.0} frames/s ({} frames in {:.3}s, render {})",
        frames as f64 / secs,
        frames,
        secs,
        render
    );
}
