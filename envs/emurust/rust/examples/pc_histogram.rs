//! Where a game spends its instructions: PC histogram over frames of play (profiling aid).
//! Usage: cargo run --release --example pc_histogram -- ROM [FRAMES]
use emurust_core::gameboy::GameBoy;
use std::collections::HashMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rom = std::fs::read(&args[0]).expect("read ROM");
    let frames: u32 = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(2400);
    let mut gb = GameBoy::new(rom).expect("load ROM");
    gb.set_render(false);
    // Count every round of a wait loop (the hook never sees the rounds that are passed over).
    gb.bus.skip_wait_loops = false;
    gb.run_frames(120);
    gb.set_buttons(1 << 3);
    gb.run_frames(4);
    gb.set_buttons(0);
    gb.run_frames(60);
    let mut hist: HashMap<u16, u64> = HashMap::new();
    let (mut steps, mut halted) = (0u64, 0u64);
    let start = gb.bus.cycles;
    for frame in 0..frames {
        match frame % 24 {
            0 => gb.set_buttons(1 << (4 + (frame / 24) % 4)),
            4 => gb.set_buttons(0),
            _ => {}
        }
        gb.run_frame_with(|cpu, _| {
            steps += 1;
            if cpu.halted {
                halted += 1;
            } else {
                *hist.entry(cpu.pc).or_default() += 1;
            }
        });
    }
    let cycles = gb.bus.cycles - start;
    let mut top: Vec<_> = hist.into_iter().collect();
    top.sort_by_key(|&(_, n)| std::cmp::Reverse(n));
    println!(
        "steps {steps} halted-steps {halted} T-cycles/frame {}",
        cycles / frames as u64
    );
    for (pc, n) in top.iter().take(
        std::env::var("TOP")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(25),
    ) {
        println!("{pc:#06x} {n} ({:.1}/frame)", *n as f64 / frames as f64);
    }
}
