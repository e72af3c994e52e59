//! Compiled blocks against the interpreter: the same ROM, the same buttons, whole save states
//! equal after every frame, on games, test ROMs that exercise every instruction, and random code.

use crate::cpu::Cpu;
use crate::gameboy::{GameBoy, PowerOn};

fn roms_dir() -> std::path::PathBuf {
    // `EMURUST_ROMS` when the crate runs from a copy (build_ext.py's `run_unit_tests`).
    std::env::var_os("EMURUST_ROMS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/roms")
        })
}

/// Runs `rom` for `frames` frames with compiled blocks and without, pressing buttons that change
/// every 8 frames, and compares whole save states after every frame. Returns the blocks run and
/// what the ROM printed through the serial port.
fn assert_same_frames(rom: &[u8], frames: u32, case: &str) -> (u64, String) {
    let mut compiled = GameBoy::with_power_on(rom.to_vec(), PowerOn::PyBoy).unwrap();
    let mut interpreted = GameBoy::with_power_on(rom.to_vec(), PowerOn::PyBoy).unwrap();
    assert!(compiled.compiled_blocks());
    interpreted.set_compiled_blocks(false);
    for frame in 0..frames {
        if frame.is_multiple_of(8) {
            let buttons = (frame.wrapping_mul(0x9E37_79B9) >> 24) as u8;
            compiled.set_buttons(buttons);
            interpreted.set_buttons(buttons);
        }
        compiled.run_frame();
        interpreted.run_frame();
        // Not in the state, but it decides where PyBoy ends the frame after the LCD is
        // switched on (`GameBoy::pyboy_ends_frame_one_step_later`).
        assert_eq!(
            compiled.bus.pyboy_lcd_access_at(),
            interpreted.bus.pyboy_lcd_access_at(),
            "{case}, frame {frame}: PyBoy's moment of the last LCD register access"
        );
        let (a, b) = (compiled.save_state(), interpreted.save_state());
        if a != b {
            let at = a.iter().zip(&b).position(|(x, y)| x != y);
            panic!(
                "{case}, frame {frame}: save states differ from byte {at:?} of {}; registers {:?} \
                 compiled, {:?} interpreted",
                a.len(),
                compiled.cpu,
                interpreted.cpu
            );
        }
    }
    assert_eq!(interpreted.compiled_blocks_run(), 0);
    let printed = String::from_utf8_lossy(compiled.serial_output()).into_owned();
    (compiled.compiled_blocks_run(), printed)
}

#[test]
fn games_and_test_roms_run_as_interpreted() {
    let dir = roms_dir();
    let mut paths: Vec<String> = vec![
        "games/2048-wyattferguson/2048.gb".into(),
        "games/2048-mmuszkow/2048.gb".into(),
        "games/tobutobugirl/tobutobugirl.gb".into(),
        "dmg-acid2/dmg-acid2.gb".into(),
        "blargg/instr_timing/instr_timing.gb".into(),
        "blargg/mem_timing/mem_timing.gb".into(),
        "blargg/halt_bug.gb".into(),
        "mooneye/acceptance/intr_timing.gb".into(),
        "mooneye/acceptance/timer/tima_reload.gb".into(),
    ];
    // Every instruction of the SM83, each checked by the ROM against its expected results.
    for entry in std::fs::read_dir(dir.join("blargg/cpu_instrs/individual")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        paths.push(format!("blargg/cpu_instrs/individual/{name}"));
    }
    for path in paths {
        let rom = std::fs::read(dir.join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        // These print their verdict through the serial port.
        let blargg = path.contains("cpu_instrs") || path.contains("instr_timing");
        let (blocks, printed) = assert_same_frames(&rom, if blargg { 1500 } else { 300 }, &path);
        assert!(blocks > 400, "{path}: only {blocks} compiled blocks ran");
        if blargg {
            // The whole test ran, with compiled blocks, to its verdict.
            assert!(printed.contains("Passed"), "{path}: {printed:?}");
        }
    }
}

/// Polling loops of each form `Cpu::skip_register_poll` passes over (STAT and LY, tested by
/// `AND`, `CP` and `BIT`, left by `JR NZ` and `JR Z`) between other instructions and VRAM
/// writes, so that blocks reach them mid-way: the loops run from inside the blocks, and every
/// frame ends as it does interpreted.
#[test]
fn polling_loops_inside_blocks_run_as_interpreted() {
    #[rustfmt::skip]
    let code = [
        0x21, 0x00, 0x98,       // LD HL,0x9800
        0x04,                   // loop: INC B
        0x78,                   // LD A,B
        0xF0, 0x41,             // LDH A,(STAT)   wait for HBlank or VBlank
        0xE6, 0x02,             // AND 2
        0x20, 0xFA,             // JR NZ,-6
        0x22,                   // LD (HL+),A     VRAM
        0xCB, 0xA4,             // RES 4,H        keep HL in VRAM (0x8000-0x8FFF)
        0x0C,                   // INC C
        0xF0, 0x44,             // LDH A,(LY)     wait while on line 144
        0xFE, 0x90,             // CP 0x90
        0x28, 0xFA,             // JR Z,-6
        0x79,                   // LD A,C
        0xF0, 0x41,             // LDH A,(STAT)   wait for mode 0 or 1
        0xCB, 0x4F,             // BIT 1,A
        0x20, 0xFA,             // JR NZ,-6
        0x80,                   // ADD A,B
        0x77,                   // LD (HL),A
        0x18, 0xE3,             // JR loop
    ];
    let rom = with_code_at_0x150(vec![0u8; 0x8000], &code);
    assert_same_frames(&rom, 120, "polling loops");
    let mut gb = GameBoy::with_power_on(rom, PowerOn::PyBoy).unwrap();
    for _ in 0..120 {
        gb.run_frame();
    }
    let polls = gb.bus.polls_in_blocks;
    assert!(
        polls > 120 * 100,
        "only {polls} polling loops ran inside blocks"
    );
}

/// Calls followed into their routines, which return in each way code does: `RET` to the return
/// address, `JP (HL)` to it after popping it (with an argument byte dropped from the stack, as
/// 2048's VRAM writer returns), a nested call, and three that go elsewhere (a byte past the return
/// address, an address pushed in its place, a jump through a table): a block goes on at the
/// return address only when the routine returns there, and every frame ends as interpreted.
#[test]
fn returns_to_a_followed_call_run_as_interpreted() {
    #[rustfmt::skip]
    let code = [
        0x31, 0xF0, 0xDF,       // 0x150 LD SP,0xDFF0
        0xCD, 0x6C, 0x01,       // 0x153 loop: CALL inc_b
        0xCD, 0x6E, 0x01,       // 0x156 CALL skip_byte
        0x3C,                   // 0x159 INC A          (skipped: skip_byte returns past it)
        0xF5,                   // 0x15A PUSH AF
        0x33,                   // 0x15B INC SP         A is the argument byte on the stack
        0xCD, 0x71, 0x01,       // 0x15C CALL pop_arg
        0xCD, 0x78, 0x01,       // 0x15F CALL outer
        0xCD, 0x7D, 0x01,       // 0x162 CALL redirect
        0x04,                   // 0x165 INC B          (skipped: redirect returns to 0x166)
        0xCD, 0x83, 0x01,       // 0x166 CALL table
        0x0C,                   // 0x169 INC C
        0x18, 0xE7,             // 0x16A JR loop
        0x04, 0xC9,             // 0x16C inc_b: INC B; RET
        0xE1, 0x23, 0xE9,       // 0x16E skip_byte: POP HL; INC HL; JP (HL)
        0xF8, 0x02,             // 0x171 pop_arg: LD HL,SP+2
        0x7E,                   // 0x173 LD A,(HL)      the argument
        0x57,                   // 0x174 LD D,A
        0xE1, 0x33, 0xE9,       // 0x175 POP HL; INC SP; JP (HL)
        0xCD, 0x6C, 0x01,       // 0x178 outer: CALL inc_b
        0x14, 0xC9,             // 0x17B INC D; RET
        0xE1,                   // 0x17D redirect: POP HL
        0x21, 0x66, 0x01,       // 0x17E LD HL,0x0166
        0xE5, 0xC9,             // 0x181 PUSH HL; RET
        0x21, 0x87, 0x01,       // 0x183 table: LD HL,tail
        0xE9,                   // 0x186 JP (HL)
        0x0C, 0xC9,             // 0x187 tail: INC C; RET
    ];
    let rom = with_code_at_0x150(vec![0u8; 0x8000], &code);
    let (blocks, _) = assert_same_frames(&rom, 60, "returns");
    // Rounds of the loop, counted interpreted.
    let mut gb = GameBoy::with_power_on(rom, PowerOn::PyBoy).unwrap();
    gb.set_compiled_blocks(false);
    let mut rounds = 0u64;
    for _ in 0..60 {
        gb.run_frame_with(|cpu, _| rounds += (cpu.pc == 0x153) as u64);
    }
    // A round returns 7 times, 3 of them elsewhere than to the call: blocks that left at every
    // return would run 8 times a round; going on at the returns to the call, 4.
    assert!(
        blocks < 6 * rounds,
        "{blocks} blocks ran in {rounds} rounds: returns to a call do not go on in the block"
    );
}

/// Stack accesses made in place at known offsets from a block's starting SP
/// (`Translator::stack_access`), at the edges of what that allows: a routine called with SP at
/// each end of `translate::STACK_WINDOW` and just outside it, in high RAM and elsewhere in work
/// RAM, which pushes, pops and reads and writes through `LD HL,SP+e` at 0x100 bytes from its
/// starting SP (in place) and at 0x101 and 0x102 (through the bus: OAM, cartridge space), moves
/// SP with `ADD SP,e`, `LD SP,HL`, `INC SP` and `DEC SP`, and calls and returns conditionally.
/// Two copies of it, one compiled while SP was in the window and one while it was not, each
/// then called with every SP; every frame ends as it does interpreted.
#[test]
fn stack_accesses_at_the_window_edges_run_as_interpreted() {
    #[rustfmt::skip]
    let routine = [
        0xC5,             // PUSH BC          S-2 (S: SP on entry, the return address there)
        0xF8, 0x02,       // LD HL,SP+2       HL = S
        0x2A,             // LD A,(HL+)
        0x82, 0x57,       // ADD A,D; LD D,A  D sums what the routine reads
        0x3A,             // LD A,(HL-)
        0x82, 0x57,       // ADD A,D; LD D,A
        0xCC, 0x00, 0x42, // CALL Z,0x4200    (RET there; seldom taken, SP as before if not)
        0xE8, 0x7F,       // ADD SP,0x7F
        0xE8, 0x7F,       // ADD SP,0x7F      S+0xFC
        0x33, 0x33,       // INC SP x2        S+0xFE
        0xF1,             // POP AF           S+0xFE and S+0xFF
        0x82, 0x57,       // ADD A,D; LD D,A
        0xF8, 0xFF,       // LD HL,SP-1       S+0xFF
        0x22,             // LD (HL+),A
        0x77,             // LD (HL),A        S+0x100: in place
        0x23,             // INC HL
        0x86,             // ADD A,(HL)       S+0x101: through the bus
        0x77,             // LD (HL),A
        0xC1,             // POP BC           S+0x100 and S+0x101
        0x78, 0x82, 0x57, // LD A,B; ADD A,D; LD D,A
        0xE8, 0x80,       // ADD SP,-0x80
        0xE8, 0x80,       // ADD SP,-0x80
        0xE8, 0x80,       // ADD SP,-0x80
        0xE8, 0x84,       // ADD SP,-0x7C     S-0xFA
        0x3B, 0x3B,       // DEC SP x2        S-0xFC
        0xC5, 0xC5, 0xC5, // PUSH BC x3       down to S-0x100 in place, then S-0x101 and S-0x102
        0xF1, 0xF1,       // POP AF x2
        0x82, 0x57,       // ADD A,D; LD D,A
        0xE8, 0x7F,       // ADD SP,0x7F
        0xE8, 0x7D,       // ADD SP,0x7D      S-2
        0xF8, 0x00,       // LD HL,SP+0
        0xF9,             // LD SP,HL
        0x3B, 0x3B,       // DEC SP x2
        0xE5, 0xE1,       // PUSH HL; POP HL  S-5 and S-6
        0x33, 0x33,       // INC SP x2        S-2
        0xC1,             // POP BC           S
        0xC0,             // RET NZ
        0xC9,             // RET
    ];
    // The SP tables, pages 2 and 3, each the routine at 0x4000's 8 SPs then 0x4100's: in the
    // first 32 rounds (while both are compiled) 0x4000 is called with SP in the window and
    // 0x4100 with SP outside it, then each with every SP.
    #[rustfmt::skip]
    let code = [
        0xF3,             // 0x150 DI
        0x0E, 0x00,       // LD C,0           the round
        0x16, 0x00,       // LD D,0
        0x79,             // 0x155 loop: LD A,C
        0xFE, 0x20,       // CP 32
        0x3E, 0x02,       // LD A,2           page 2 in the first 32 rounds,
        0x38, 0x01,       // JR C,+1
        0x3C,             // INC A            page 3 after them
        0x5F,             // LD E,A
        0x79,             // LD A,C
        0xE6, 0x07,       // AND 7
        0x87, 0x6F,       // ADD A,A; LD L,A
        0x63,             // LD H,E
        0x2A, 0x66, 0x6F, // LD A,(HL+); LD H,(HL); LD L,A
        0xF9,             // LD SP,HL
        0xCD, 0x00, 0x40, // CALL 0x4000      (a block of its own: another half)
        0x79,             // LD A,C
        0xE6, 0x07,       // AND 7
        0x87,             // ADD A,A
        0xC6, 0x10,       // ADD A,16         0x4100's half of the page
        0x6F, 0x63,       // LD L,A; LD H,E
        0x2A, 0x66, 0x6F, // LD A,(HL+); LD H,(HL); LD L,A
        0xF9,             // LD SP,HL
        0xCD, 0x00, 0x41, // CALL 0x4100
        0x0C,             // INC C
        0x18, 0xD8,       // JR loop
    ];
    // SP in the routine (a table holds it before the CALL, 2 more).
    let every: [u16; 8] = [
        0xDFF0, 0xC100, 0xFCFF, 0xC0FF, 0xFD00, 0xFFFC, 0xC180, 0xFC80,
    ];
    let inside = [
        0xDFF0, 0xC100, 0xFCFF, 0xC180, 0xFC80, 0xD000, 0xC100, 0xFCFF,
    ];
    let outside = [
        0xC0FF, 0xFD00, 0xFFFC, 0xC0FF, 0xFD00, 0xFFFC, 0xC0FF, 0xFD00,
    ];
    let mut rom = vec![0u8; 0x8000];
    let rotated: Vec<u16> = every.iter().cycle().skip(4).take(8).copied().collect();
    let pages = [
        (0x200, inside, outside),
        (0x300, every, rotated.try_into().unwrap()),
    ];
    for (page, first, second) in pages {
        for (i, sp) in first.iter().chain(&second).enumerate() {
            rom[page + 2 * i..][..2].copy_from_slice(&(sp + 2).to_le_bytes());
        }
    }
    rom[0x4000..0x4000 + routine.len()].copy_from_slice(&routine);
    rom[0x4100..0x4100 + routine.len()].copy_from_slice(&routine);
    rom[0x4200] = 0xC9;
    let rom = with_code_at_0x150(rom, &code);
    let (blocks, _) = assert_same_frames(&rom, 60, "stack accesses");
    assert!(blocks > 60 * 100, "only {blocks} compiled blocks ran");
    let mut gb = GameBoy::with_power_on(rom, PowerOn::PyBoy).unwrap();
    for _ in 0..60 {
        gb.run_frame();
    }
    let jit = gb.jit().unwrap();
    let stack_in_wram = |offset| jit.block_at(offset, 0).map(|block| block.stack_in_wram);
    assert_eq!(
        stack_in_wram(0x4000),
        Some(true),
        "0x4000 compiled for the window"
    );
    assert_eq!(
        stack_in_wram(0x4100),
        Some(false),
        "0x4100 compiled for any stack"
    );
}

/// A xorshift64 generator (the tests' ROMs are the same on every run).
fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// `rom` with `code` at 0x150, a jump there from the entry point and a valid header checksum.
fn with_code_at_0x150(mut rom: Vec<u8>, code: &[u8]) -> Vec<u8> {
    rom[0x150..0x150 + code.len()].copy_from_slice(code);
    rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]);
    rom[0x14D] = crate::cartridge::header_checksum(&rom);
    rom
}

/// Code that calls a routine making a call of its own (so that it pushes an address of the half
/// of the ROM space it runs in), seen from the other half than usual: bank 0 in the upper half
/// (MBC5 can map it there), and bank 0x20 in the lower half (MBC1's mode 1 on a 1 MiB ROM). A
/// block is compiled for one half, so neither may run the other's blocks.
#[test]
fn blocks_keep_to_the_half_of_the_rom_space_they_run_in() {
    // The routine, at 0x200 of the bank it is called in: CALL 0x0300; INC A; RET, and RET at 0x300.
    let routine = |rom: &mut [u8], bank: usize| {
        rom[bank * 0x4000 + 0x200..][..5].copy_from_slice(&[0xCD, 0x00, 0x03, 0x3C, 0xC9]);
        rom[bank * 0x4000 + 0x300] = 0xC9;
    };
    // MBC5, 64 KiB: bank 0 in the upper half too; the routine called 64 times through the lower
    // half (compiled there), then again and again through the upper.
    let mut mbc5 = vec![0u8; 0x10000];
    mbc5[0x147] = 0x19;
    mbc5[0x148] = 0x01;
    routine(&mut mbc5, 0);
    let mbc5 = with_code_at_0x150(
        mbc5,
        &[
            0x31, 0x00, 0xD0, // LD SP,0xD000
            0xAF, 0xEA, 0x00, 0x20, // XOR A; LD (0x2000),A: bank 0 in the upper half
            0x06, 0x40, // LD B,64
            0xCD, 0x00, 0x02, // CALL 0x0200
            0x05, 0x20, 0xFA, // DEC B; JR NZ,-6
            0xCD, 0x00, 0x42, // CALL 0x4200
            0x18, 0xFB, // JR -5
        ],
    );
    assert_same_frames(&mbc5, 5, "MBC5, bank 0 in the upper half");
    // MBC1, 1 MiB: mode 1 and the upper bank bits at 1 put bank 0x20 in the lower half. It holds
    // the same code as bank 0 (the CPU goes on fetching there), and the routine.
    let mut mbc1 = vec![0u8; 0x100000];
    mbc1[0x147] = 0x01;
    mbc1[0x148] = 0x05;
    let code = [
        0x31, 0x00, 0xD0, // LD SP,0xD000
        0x3E, 0x01, 0xEA, 0x00, 0x60, // LD A,1; LD (0x6000),A: mode 1
        0xEA, 0x00, 0x40, // LD (0x4000),A: upper bank bits 1
        0xCD, 0x00, 0x02, // CALL 0x0200 (bank 0x20)
        0x18, 0xFB, // JR -5
    ];
    let mut mbc1 = with_code_at_0x150(mbc1, &code);
    let bank0 = mbc1[..0x4000].to_vec();
    mbc1[0x20 * 0x4000..0x21 * 0x4000].copy_from_slice(&bank0);
    routine(&mut mbc1, 0x20);
    assert_same_frames(&mbc1, 5, "MBC1 mode 1, bank 0x20 in the lower half");
}

/// A 32 KiB ROM-only cartridge of random code: mostly instructions blocks translate, with some
/// that end blocks (HALT, EI, DI, RETI, STOP, the polls), writes to random I/O registers (the LCD,
/// the timer, DMA, interrupts), jumps and calls anywhere (work RAM included), and data tables.
fn random_code_rom(seed: u64) -> Vec<u8> {
    let code = random_code(seed, 0x150, 0x7F00, 0x7C0);
    with_code_at_0x150(rom_with_vectors(), &code)
}

/// An empty ROM image with RET at the RST vectors and RETI at the interrupt vectors (NOPs
/// elsewhere: a jump that misses the code slides into it).
fn rom_with_vectors() -> Vec<u8> {
    let mut rom = vec![0u8; 0x8000];
    for vector in (0x00..0x40).step_by(8) {
        rom[vector] = 0xC9;
    }
    for vector in (0x40..=0x60).step_by(8) {
        rom[vector] = 0xD9;
    }
    rom
}

/// Random code to run from `base` up to about `end`, its jumps, calls and returns going to one
/// of the first `targets` addresses of the form `base + 16n`.
fn random_code(seed: u64, base: u16, end: u16, targets: u16) -> Vec<u8> {
    let mut next = xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // Every 16th address from `base` starts an instruction (snippets that would straddle one are
    // moved past it with NOPs), so that jumps, calls and returns to such addresses land on code.
    let mut code: Vec<u8> = Vec::new();
    let emit = |code: &mut Vec<u8>, bytes: &[u8]| {
        if code.len() % 16 + bytes.len() > 16 {
            code.resize(code.len().next_multiple_of(16), 0x00);
        }
        code.extend_from_slice(bytes);
    };
    let target_of = |r: u64| base + ((r >> 24) as u16 % targets) * 16;
    // Start: stack in work RAM, timer and interrupts on, then the random code.
    emit(
        &mut code,
        &[
            0x31, 0x00, 0xD0, 0x3E, 0x05, 0xE0, 0x07, 0x3E, 0x1F, 0xE0, 0xFF, 0xFB,
        ],
    );
    while (base as usize) + code.len() < end as usize {
        let r = next();
        let kind = r % 100;
        let (b1, b2) = ((r >> 8) as u8, (r >> 16) as u8);
        match kind {
            // Loads, ALU, INC/DEC, rotates, CB ops on registers and (HL) with HL in work RAM.
            0..=49 => {
                let op = match r % 7 {
                    0 => 0x40 + (b1 % 0x40),
                    1 => 0x80 + (b1 % 0x40),
                    2 => [0x04, 0x05, 0x0C, 0x0D, 0x3C, 0x3D, 0x07, 0x0F, 0x17, 0x1F]
                        [b1 as usize % 10],
                    3 => [0x27, 0x2F, 0x37, 0x3F, 0x03, 0x0B, 0x09, 0x19, 0x29, 0x39]
                        [b1 as usize % 10],
                    4 => [0x22, 0x2A, 0x32, 0x3A, 0x02, 0x12, 0x0A, 0x1A, 0x34, 0x35]
                        [b1 as usize % 10],
                    _ => 0x00,
                };
                if r % 7 == 5 {
                    // PUSH, an ALU op, POP (balanced, so that the stack stays in work RAM).
                    let (push, pop) = (
                        [0xC5, 0xD5, 0xE5, 0xF5][b1 as usize % 4],
                        [0xC1, 0xD1, 0xE1, 0xF1][b2 as usize % 4],
                    );
                    emit(&mut code, &[push, 0x80 + (b2 % 0x40), pop]);
                    continue;
                }
                if r % 7 == 6 && b1.is_multiple_of(4) {
                    // The stack back in work RAM (calls never return here), LD SP,HL included.
                    emit(&mut code, &[0x21, b2, 0xD0, 0xF9]);
                    continue;
                }
                if op == 0x76 {
                    emit(&mut code, &[0x00]);
                } else {
                    emit(&mut code, &[op]);
                }
                if r.is_multiple_of(5) {
                    // Point HL, BC or DE at work RAM again.
                    let pair = [0x21, 0x01, 0x11][b2 as usize % 3];
                    emit(&mut code, &[pair, b2, 0xC0 | (b1 & 0x1F)]);
                }
            }
            50..=59 => emit(&mut code, &[0xCB, b1]),
            60..=67 => {
                let op =
                    [0xC6, 0xCE, 0xD6, 0xDE, 0xE6, 0xEE, 0xF6, 0xFE, 0xE8, 0xF8][b2 as usize % 10];
                emit(&mut code, &[op, b1]);
            }
            // I/O: reads and writes of the registers that make things happen.
            68..=75 => {
                let register = [
                    0x40, 0x41, 0x42, 0x44, 0x45, 0x47, 0x05, 0x06, 0x07, 0x04, 0x0F, 0xFF, 0x46,
                    0x00, 0x80,
                ][b2 as usize % 15];
                let op = if r.is_multiple_of(3) { 0xF0 } else { 0xE0 };
                // DMA from VRAM: from work RAM it would own the bus the code is fetched from.
                // The timer and its interrupt stay on, so that HALT always ends.
                let value = match register {
                    0x46 => 0x80 | (b1 & 0x1F),
                    0x07 | 0xFF => b1 | 0x04,
                    _ => b1,
                };
                emit(&mut code, &[0x3E, value, op, register]);
            }
            76..=79 => emit(
                &mut code,
                &[0xEA, b1, 0xC0 | (b2 & 0x1F), 0xFA, b2, b1 & 0x7F],
            ),
            // Control flow: mostly short hops forward and back, some far.
            80..=89 => {
                // Over a few NOPs, so that both ways land on an instruction.
                let op = [0x18, 0x20, 0x28, 0x30, 0x38][b2 as usize % 5];
                let over = b1 % 6;
                let mut bytes = vec![op, over];
                bytes.resize(2 + over as usize, 0x00);
                emit(&mut code, &bytes);
            }
            90..=93 => {
                let op = [0xC3, 0xCD, 0xC2, 0xCA, 0xD4, 0xDC][b2 as usize % 6];
                let target = target_of(r);
                emit(&mut code, &[op, target as u8, (target >> 8) as u8]);
            }
            94..=95 => {
                // A return to a code address pushed just before (dropped if not taken).
                let target = target_of(r);
                let ret = [0xC9, 0xC0, 0xC8, 0xD0, 0xD8, 0xC7, 0xFF, 0xE9][b2 as usize % 8];
                emit(
                    &mut code,
                    &[
                        0x21,
                        target as u8,
                        (target >> 8) as u8,
                        0xE5,
                        ret,
                        0x33,
                        0x33,
                    ],
                );
            }
            // What blocks leave to the interpreter.
            96 => emit(&mut code, &[[0x76, 0xFB, 0xF3, 0x10][b2 as usize % 4]]),
            97 => emit(&mut code, &[0xF0, 0x41, 0xE6, 0x03, 0x20, 0xFA]),
            98 => emit(&mut code, &[0x06, b1 & 0x1F, 0x05, 0x20, 0xFD]),
            _ => {
                let target = target_of(r);
                emit(&mut code, &[0x21, target as u8, (target >> 8) as u8, 0xE9]);
            }
        }
    }
    code
}

#[test]
fn random_code_runs_as_interpreted() {
    let mut busy = 0;
    for seed in 0..32 {
        let (blocks, _) = assert_same_frames(
            &random_code_rom(seed),
            60,
            &format!("random code, seed {seed}"),
        );
        busy += (blocks > 500) as u32;
    }
    // Random code can lock the CPU up (an operand read as an opcode, a jump into data); most
    // of these runs must still have run their blocks.
    assert!(
        busy >= 24,
        "only {busy} of 32 random ROMs ran more than 500 blocks"
    );
}

/// A ROM that copies `code` into work RAM at 0xC000 and jumps there (the copy loop runs from ROM).
fn with_code_in_work_ram(code: &[u8]) -> Vec<u8> {
    assert!(code.len() <= 0x1000);
    let (low, high) = (code.len() as u8, (code.len() >> 8) as u8);
    #[rustfmt::skip]
    let copy = [
        0x31, 0x00, 0xD0,       // LD SP,0xD000
        0x21, 0x00, 0x10,       // LD HL,0x1000
        0x11, 0x00, 0xC0,       // LD DE,0xC000
        0x01, low, high,        // LD BC,len
        0x2A,                   // loop: LD A,(HL+)
        0x12,                   // LD (DE),A
        0x13,                   // INC DE
        0x0B,                   // DEC BC
        0x78,                   // LD A,B
        0xB1,                   // OR C
        0x20, 0xF8,             // JR NZ,loop
        0xC3, 0x00, 0xC0,       // JP 0xC000
    ];
    let mut rom = rom_with_vectors();
    rom[0x1000..0x1000 + code.len()].copy_from_slice(code);
    with_code_at_0x150(rom, &copy)
}

/// Blocks of code in work RAM that the emulator ran (`rom` alone for `frames` frames).
fn ram_blocks_run(rom: &[u8], frames: u32) -> u64 {
    let mut gb = GameBoy::with_power_on(rom.to_vec(), PowerOn::PyBoy).unwrap();
    for _ in 0..frames {
        gb.run_frame();
    }
    gb.jit().map_or(0, |jit| jit.ram_blocks_run)
}

/// Random code run from work RAM, whose data writes (through HL, BC, DE and to constant
/// addresses, all in work RAM) often land in the code itself: blocks compiled from work RAM run
/// only while it still holds the bytes they were compiled from, and leave after a write into
/// their own bytes; every frame ends as it does interpreted.
#[test]
fn random_code_in_work_ram_runs_as_interpreted() {
    let mut busy = 0;
    for seed in 0..24 {
        let rom = with_code_in_work_ram(&random_code(seed, 0xC000, 0xC800, 0x78));
        let case = format!("random code in work RAM, seed {seed}");
        assert_same_frames(&rom, 60, &case);
        busy += (ram_blocks_run(&rom, 60) > 200) as u32;
    }
    // Rewritten at random, the code soon locks the CPU up in many of these runs.
    assert!(
        busy >= 8,
        "only {busy} of 24 runs ran more than 200 blocks from work RAM"
    );
}

/// Code in work RAM that rewrites an instruction later in its own block, an instruction of
/// another block, and one of its own block that already ran, with values that change every 64
/// rounds (so that blocks are compiled, run, and found stale); then a state saved earlier is
/// loaded under the compiled blocks.
#[test]
fn code_that_rewrites_itself_in_work_ram_runs_as_interpreted() {
    let mut code = vec![0u8; 0x40];
    #[rustfmt::skip]
    let first = [
        0xFA, 0x01, 0xD0,       // C000: LD A,(0xD001)   a round counter
        0x3C,                   //       INC A
        0xEA, 0x01, 0xD0,       //       LD (0xD001),A
        0xCB, 0x3F, 0xCB, 0x3F, 0xCB, 0x3F, 0xCB, 0x3F, 0xCB, 0x3F, 0xCB, 0x3F, // SRL A x6
        0xEA, 0x19, 0xC0,       // C013: LD (0xC019),A   the operand of ADD A,n below
        0x00, 0x00,             // C016: NOP, NOP
        0xC6, 0x00,             // C018: ADD A,n
        0x47,                   // C01A: LD B,A
        0xEA, 0x31, 0xC0,       // C01B: LD (0xC031),A   the operand of LD C,n in the next block
        0xC3, 0x30, 0xC0,       // C01E: JP 0xC030
    ];
    #[rustfmt::skip]
    let second = [
        0x0E, 0x00,             // C030: LD C,n
        0x79,                   //       LD A,C
        0x80,                   //       ADD A,B
        0xEA, 0x31, 0xC0,       // C034: LD (0xC031),A   this block's first instruction, run already
        0x21, 0x02, 0xD0,       //       LD HL,0xD002     a sum of every round's A, so that one
        0x86,                   //       ADD A,(HL)       wrong round shows in every later state
        0x77,                   //       LD (HL),A
        0xC3, 0x00, 0xC0,       //       JP 0xC000
    ];
    code[..first.len()].copy_from_slice(&first);
    code[0x30..0x30 + second.len()].copy_from_slice(&second);
    let rom = with_code_in_work_ram(&code);
    assert_same_frames(&rom, 60, "code that rewrites itself");
    let ran = ram_blocks_run(&rom, 60);
    assert!(ran > 1000, "only {ran} blocks ran from work RAM");

    let mut compiled = GameBoy::with_power_on(rom.clone(), PowerOn::PyBoy).unwrap();
    let mut interpreted = GameBoy::with_power_on(rom, PowerOn::PyBoy).unwrap();
    interpreted.set_compiled_blocks(false);
    compiled.run_frame();
    let early = compiled.save_state();
    for _ in 0..20 {
        compiled.run_frame();
    }
    compiled.load_state(&early).unwrap();
    interpreted.load_state(&early).unwrap();
    for frame in 0..20 {
        compiled.run_frame();
        interpreted.run_frame();
        assert!(
            compiled.save_state() == interpreted.save_state(),
            "frame {frame} after loading an earlier state: the states differ"
        );
    }
}

/// The combined cpu_instrs ROM copies each test into work RAM and runs it there (94% of its
/// instructions): with blocks compiled from work RAM it passes, every frame as interpreted.
#[test]
fn cpu_instrs_runs_from_work_ram_as_interpreted() {
    let rom = std::fs::read(roms_dir().join("blargg/cpu_instrs/cpu_instrs.gb")).unwrap();
    let (_, printed) = assert_same_frames(&rom, 3300, "cpu_instrs");
    assert!(printed.contains("Passed all tests"), "{printed:?}");
    let ran = ram_blocks_run(&rom, 600);
    assert!(
        ran > 600 * 200,
        "only {ran} blocks ran from work RAM in 600 frames"
    );
}

/// A ROM whose code loops over a few random data instructions (ALU, DAA, rotates, CB ops,
/// INC/DEC, 16-bit arithmetic, loads through HL), thousands of times a frame: the registers and
/// flags each round leaves are the next round's inputs, so a wrong result or flag anywhere
/// changes the state the frame ends with.
fn tight_loop_rom(seed: u64) -> Vec<u8> {
    let mut next = xorshift(seed.wrapping_mul(0xD1B5_4A32_D192_ED03));
    let rom = vec![0u8; 0x8000];
    let mut code = vec![
        0x31,
        0x00,
        0xD0,
        0x01,
        next() as u8,
        next() as u8,
        0x11,
        next() as u8,
        next() as u8,
    ];
    let loop_start = code.len();
    code.extend_from_slice(&[0x21, next() as u8, 0xC1]); // HL in work RAM each round
    for _ in 0..2 + next() % 5 {
        let r = next();
        let (b1, b2) = (r as u8, (r >> 8) as u8);
        match (r >> 16) % 8 {
            0 => code.push(0x80 + b1 % 0x40), // ALU A,r / A,(HL)
            1 => code.extend_from_slice(&[
                [0xC6, 0xCE, 0xD6, 0xDE, 0xE6, 0xEE, 0xF6, 0xFE][b1 as usize % 8],
                b2,
            ]),
            2 => code.push([0x27, 0x2F, 0x37, 0x3F, 0x07, 0x0F, 0x17, 0x1F][b1 as usize % 8]),
            3 => code.extend_from_slice(&[0xCB, b1]),
            4 => code.push(
                [
                    0x04, 0x05, 0x0C, 0x0D, 0x14, 0x15, 0x1C, 0x1D, 0x24, 0x25, 0x3C, 0x3D, 0x34,
                    0x35,
                ][b1 as usize % 14],
            ),
            5 => code.push(
                [
                    0x03, 0x0B, 0x13, 0x1B, 0x09, 0x19, 0x29, 0x39, 0x2A, 0x3A, 0x22, 0x32,
                ][b1 as usize % 12],
            ),
            6 => code.extend_from_slice(&[[0xE8, 0xF8][b1 as usize % 2], b2]),
            _ => {
                let op = 0x40 + b1 % 0x40;
                code.push(if op == 0x76 { 0x00 } else { op });
            }
        }
        // H and L written above (a load, INC/DEC, ADD HL) may point HL anywhere: back to RAM.
        code.extend_from_slice(&[0x26, 0xC1]);
    }
    // Keep SP in work RAM (ADD SP,e and LD HL,SP+e), then round again.
    code.extend_from_slice(&[0x31, 0x00, 0xD0]);
    let back = loop_start as i64 - (code.len() as i64 + 2);
    code.extend_from_slice(&[0x18, back as u8]);
    with_code_at_0x150(rom, &code)
}

#[test]
fn tight_loops_of_data_instructions_run_as_interpreted() {
    for seed in 0..300 {
        let (blocks, _) = assert_same_frames(
            &tight_loop_rom(seed),
            3,
            &format!("tight loop, seed {seed}"),
        );
        // A block follows the loop's jump back, so runs many rounds (up to `MAX_INSTRUCTIONS`
        // instructions): some hundreds of blocks run in 3 frames, none if no block ran.
        assert!(
            blocks > 50,
            "seed {seed}: only {blocks} compiled blocks ran"
        );
    }
}

#[test]
fn blocks_are_shared_by_emulators_of_a_rom() {
    let rom = std::fs::read(roms_dir().join("games/2048-wyattferguson/2048.gb")).unwrap();
    let mut first = GameBoy::with_power_on(rom.clone(), PowerOn::PyBoy).unwrap();
    let mut second = GameBoy::with_power_on(rom.clone(), PowerOn::PyBoy).unwrap();
    let mut other = GameBoy::with_power_on(random_code_rom(1), PowerOn::PyBoy).unwrap();
    for gb in [&mut first, &mut second, &mut other] {
        gb.run_frame();
    }
    let (first_jit, second_jit, other_jit) = (
        first.jit().unwrap(),
        second.jit().unwrap(),
        other.jit().unwrap(),
    );
    assert!(first_jit.shares_blocks_with(second_jit));
    assert!(!first_jit.shares_blocks_with(other_jit));
    // A state loaded keeps the handle (and the blocks run so far).
    let (state, ran) = (second.save_state(), first.compiled_blocks_run());
    first.load_state(&state).unwrap();
    assert!(first
        .jit()
        .unwrap()
        .shares_blocks_with(second.jit().unwrap()));
    assert_eq!(first.compiled_blocks_run(), ran);
    // The hardware timing (which never runs blocks) holds none, nor does the interpreter switch.
    let mut hardware = GameBoy::new(rom.clone()).unwrap();
    hardware.run_frames(2);
    assert!(hardware.compiled_blocks() && hardware.jit().is_none());
    hardware.set_pyboy_compat(true);
    assert!(hardware.jit().is_some());
    hardware.set_pyboy_compat(false);
    assert!(hardware.jit().is_none());
    let mut interpreted = GameBoy::with_power_on(rom, PowerOn::PyBoy).unwrap();
    interpreted.set_compiled_blocks(false);
    interpreted.run_frames(2);
    assert!(interpreted.jit().is_none());
    interpreted.set_compiled_blocks(true);
    assert!(interpreted.jit().is_some());
    first.set_compiled_blocks(false);
    assert!(first.jit().is_none() && !first.compiled_blocks());
}

#[test]
fn a_panic_while_compiling_leaves_the_code_to_the_interpreter() {
    // A ROM of its own (no other test shares its blocks), whose compiler's next compilation panics.
    let rom = tight_loop_rom(1 << 20);
    let holder = GameBoy::with_power_on(rom.clone(), PowerOn::PyBoy).unwrap();
    holder.jit().unwrap().compiler().panic_next = true;
    // `assert_same_frames`' emulators share that compiler: no panic reaches them, no block runs,
    // and the machine is the interpreter's.
    let (blocks, _) = assert_same_frames(&rom, 3, "a panic while compiling");
    assert_eq!(blocks, 0);
    assert!(holder.jit().unwrap().compiler().unavailable);
}

/// Compiles the block at `offset` of `rom` on its own compiler (not the process's shared one),
/// for any stack (SP in high RAM, outside `translate::STACK_WINDOW`).
fn compile_alone<'c>(
    compiler: &'c mut super::Compiler,
    rom: &[u8],
    offset: usize,
) -> &'c super::Block {
    let address = compiler.compile(rom, offset, 0xFFFE);
    assert_ne!(address, super::NO_BLOCK, "nothing compiled at {offset:#x}");
    // SAFETY: as in `Jit::block_at`: the block is owned by `compiler`, which the returned
    // borrow keeps alive.
    unsafe { &*(address as *const super::Block) }
}

/// Runs `block` on `gb` as `Jit::try_run` does, without its checks (the block is one the test
/// compiled for the code at the CPU's PC); the T-cycles it took. The clock is left where it was.
fn run_block(gb: &mut GameBoy, block: &super::Block) -> u64 {
    let (wram, hram) = gb.bus.jit_memory();
    let start = gb.bus.cycles;
    let mut context = super::BlockContext {
        cpu: &mut gb.cpu,
        bus: &mut gb.bus,
        wram,
        hram,
        cycles: start,
        instr_start: start,
        opcode: 0,
        // These blocks hold no polling loop, the only part that reads it.
        attention_at: u64::MAX,
        code_end: 0,
    };
    // SAFETY: as in `Jit::try_run`.
    unsafe { (block.run)(&mut context) };
    let took = context.cycles - start;
    gb.bus.cycles = start;
    took
}

/// Whether the unprefixed `op` (or the CB-prefixed `cb`) touches nothing but registers: then its
/// SingleStepTests vectors (flat memory, any PC) apply to a compiled block in ROM as they are.
fn register_only(op: u8, cb: Option<u8>) -> bool {
    if let Some(cb) = cb {
        return cb & 7 != 6;
    }
    match op {
        0x40..=0x7F => op & 7 != 6 && (op >> 3) & 7 != 6,
        0x80..=0xBF => op & 7 != 6,
        0x00 | 0x07 | 0x0F | 0x17 | 0x1F | 0x27 | 0x2F | 0x37 | 0x3F | 0xE8 | 0xF8 | 0xF9 => true,
        0xC6 | 0xCE | 0xD6 | 0xDE | 0xE6 | 0xEE | 0xF6 | 0xFE => true,
        _ => match op & 0xC7 {
            0x01 | 0x03 | 0x09 | 0x0B => true, // LD rr,nn / INC rr / ADD HL,rr / DEC rr
            0x04..=0x06 => (op >> 3) & 7 != 6, // INC r / DEC r / LD r,n
            _ => false,
        },
    }
}

/// Every register-only instruction's SingleStepTests vectors (50 each, data/sm83) through a
/// compiled block: the registers and flags after it, and its M-cycles, as the vectors have them.
#[test]
fn register_instructions_match_the_sm83_vectors() {
    use serde_json::Value;
    let dir = std::env::var_os("EMURUST_SM83")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/sm83/v1")
        });
    let mut cases = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        let (op, cb) = match stem.strip_prefix("cb ") {
            Some(cb) => (0xCB, Some(u8::from_str_radix(cb, 16).unwrap())),
            None => (u8::from_str_radix(&stem, 16).unwrap(), None),
        };
        if !register_only(op, cb) {
            continue;
        }
        let data: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let vectors = data.as_array().unwrap();
        // Case i's instruction at 0x1000 + 8i (its bytes from the vector's memory), then HALT,
        // which ends the block after it.
        let mut rom = vec![0u8; 0x8000];
        for (i, case) in vectors.iter().enumerate() {
            let pc = case["initial"]["pc"].as_u64().unwrap() as u16;
            let ram = case["initial"]["ram"].as_array().unwrap();
            for k in 0..3u16 {
                let byte = ram
                    .iter()
                    .find(|p| p[0].as_u64().unwrap() as u16 == pc.wrapping_add(k));
                rom[0x1000 + 8 * i + k as usize] =
                    byte.map_or(0x76, |p| p[1].as_u64().unwrap() as u8);
            }
            rom[0x1000 + 8 * i + 3] = 0x76;
        }
        rom[0x14D] = crate::cartridge::header_checksum(&rom);
        let mut gb = GameBoy::with_power_on(rom.clone(), PowerOn::PyBoy).unwrap();
        let mut compiler = super::Compiler::new();
        for (i, case) in vectors.iter().enumerate() {
            let (initial, expected) = (&case["initial"], &case["final"]);
            let get = |state: &Value, k: &str| state[k].as_u64().unwrap();
            let at = 0x1000 + 8 * i;
            let cpu = &mut gb.cpu;
            (cpu.a, cpu.f, cpu.b, cpu.c) = (
                get(initial, "a") as u8,
                get(initial, "f") as u8,
                get(initial, "b") as u8,
                get(initial, "c") as u8,
            );
            (cpu.d, cpu.e, cpu.h, cpu.l) = (
                get(initial, "d") as u8,
                get(initial, "e") as u8,
                get(initial, "h") as u8,
                get(initial, "l") as u8,
            );
            (cpu.sp, cpu.pc) = (get(initial, "sp") as u16, at as u16);
            let block = compile_alone(&mut compiler, &rom, at);
            let took = run_block(&mut gb, block);
            let cpu = &gb.cpu;
            let got = [cpu.a, cpu.f, cpu.b, cpu.c, cpu.d, cpu.e, cpu.h, cpu.l].map(u64::from);
            let want = ["a", "f", "b", "c", "d", "e", "h", "l"].map(|k| get(expected, k));
            let length = get(expected, "pc").wrapping_sub(get(initial, "pc")) & 0xFFFF;
            assert_eq!(
                (got, cpu.sp as u64, cpu.pc as u64, took),
                (
                    want,
                    get(expected, "sp"),
                    at as u64 + length,
                    4 * case["cycles"].as_array().unwrap().len() as u64
                ),
                "{}: (a f b c d e h l, sp, pc, T-cycles)",
                case["name"]
            );
            cases += 1;
        }
    }
    assert!(cases > 15_000, "{cases} vectors");
}

/// Compiles `instruction` (then HALT) at 0x1000 of a ROM and runs register states through the
/// block and through the interpreter's step (`sm83_harness`, the L1-verified CPU): the registers,
/// flags and M-cycles must agree for every state.
fn assert_block_matches_interpreter(instruction: &[u8], states: impl Iterator<Item = Cpu>) {
    let mut rom = vec![0u8; 0x8000];
    rom[0x1000..0x1000 + instruction.len()].copy_from_slice(instruction);
    rom[0x1000 + instruction.len()] = 0x76;
    rom[0x14D] = crate::cartridge::header_checksum(&rom);
    let mut gb = GameBoy::with_power_on(rom.clone(), PowerOn::PyBoy).unwrap();
    let mut compiler = super::Compiler::new();
    let block = compile_alone(&mut compiler, &rom, 0x1000);
    for state in states {
        let registers = (
            [
                state.a, state.b, state.c, state.d, state.e, state.f, state.h, state.l,
            ],
            state.sp,
            0x1000,
            false,
        );
        let (expected, _, flat) = crate::sm83_harness::run_one(
            registers,
            &[
                (0x1000, instruction[0]),
                (0x1001, *instruction.get(1).unwrap_or(&0)),
                (0x1002, *instruction.get(2).unwrap_or(&0)),
            ],
        );
        gb.cpu = Cpu {
            pc: 0x1000,
            pyboy: true,
            ..state
        };
        let took = run_block(&mut gb, block);
        let cpu = &gb.cpu;
        let got = (
            [cpu.a, cpu.b, cpu.c, cpu.d, cpu.e, cpu.f, cpu.h, cpu.l],
            cpu.sp,
            cpu.pc,
            false,
        );
        assert_eq!(
            (got, took),
            (expected, 4 * flat.cycles.len() as u64),
            "{instruction:02X?} from {state:?}: ([a b c d e f h l], sp, pc, ime), T-cycles"
        );
    }
}

/// 16-bit values at and around every carry boundary, and some others.
fn edge_words() -> Vec<u16> {
    let mut words = vec![0x0000, 0xFFFF, 0x8000, 0x7FFF, 0x1234, 0xABCD];
    for boundary in [0x000Fu16, 0x00FF, 0x0FFF] {
        for delta in [0u16, 1, 2] {
            words.extend([
                boundary.wrapping_sub(delta),
                boundary.wrapping_add(delta),
                !boundary,
            ]);
        }
    }
    words
}

/// Every 8-bit ALU, DAA, rotate, CB and INC/DEC operation on registers for every pair of
/// operand values with every flag state they read; ADD HL,rr, ADD SP,e and LD HL,SP+e at and
/// around their half-carry and carry boundaries.
#[test]
fn register_arithmetic_matches_the_interpreter_exhaustively() {
    const FLAGS: [u8; 10] = [0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80, 0xF0];
    let pairs = |f_values: &'static [u8]| {
        (0..=255u8).flat_map(move |a| {
            (0..=255u8).flat_map(move |b| {
                f_values.iter().map(move |&f| Cpu {
                    a,
                    b,
                    c: b ^ 0x5A,
                    f,
                    sp: 0xD000,
                    ..Default::default()
                })
            })
        })
    };
    for op in (0x80..=0xBF).filter(|op| op & 7 == 0) {
        assert_block_matches_interpreter(&[op], pairs(&[0x00, 0x10]));
    }
    for op in [0xC6u8, 0xCE, 0xD6, 0xDE, 0xE6, 0xEE, 0xF6, 0xFE] {
        for n in [0x00u8, 0x01, 0x0F, 0x10, 0x7F, 0x80, 0xF0, 0xFF] {
            assert_block_matches_interpreter(&[op, n], pairs(&[0x00, 0x10]).filter(|s| s.b == 0));
        }
    }
    // One operand, every flag state: DAA, CPL, SCF, CCF, the A rotates, INC/DEC r, CB ops on B.
    let singles = || {
        (0..=255u8).flat_map(move |v| {
            FLAGS.iter().map(move |&f| Cpu {
                a: v,
                b: v,
                f,
                sp: 0xD000,
                ..Default::default()
            })
        })
    };
    for op in [
        0x27u8, 0x2F, 0x37, 0x3F, 0x07, 0x0F, 0x17, 0x1F, 0x04, 0x05, 0x3C, 0x3D,
    ] {
        assert_block_matches_interpreter(&[op], singles());
    }
    for cb in (0x00..=0xFFu8).filter(|cb| cb & 7 == 0) {
        assert_block_matches_interpreter(&[0xCB, cb], singles());
    }
    let words = edge_words();
    for op in [0x09u8, 0x19, 0x29, 0x39] {
        let states = words.iter().flat_map(|&hl| {
            words.iter().flat_map(move |&rr| {
                [0x00u8, 0x80].map(move |f| {
                    let [h, l] = hl.to_be_bytes();
                    let [hi, lo] = rr.to_be_bytes();
                    Cpu {
                        h,
                        l,
                        b: hi,
                        c: lo,
                        d: hi,
                        e: lo,
                        sp: rr,
                        f,
                        ..Default::default()
                    }
                })
            })
        });
        assert_block_matches_interpreter(&[op], states);
    }
    for op in [0xE8u8, 0xF8] {
        for e in 0..=255u8 {
            let states = words.iter().map(|&sp| Cpu {
                sp,
                f: 0xF0,
                ..Default::default()
            });
            assert_block_matches_interpreter(&[op, e], states);
        }
    }
}
