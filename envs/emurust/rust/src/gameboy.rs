//! The console: CPU + bus, frame stepping, buttons, memory access and save states.

use crate::bus::{Bus, PlainStep};
use crate::cartridge::{Cartridge, CartridgeError};
use crate::cpu::Cpu;
use crate::jit::Jit;
use crate::ppu::{SCREEN_HEIGHT, SCREEN_WIDTH};
use crate::slices::phase_slices;
use crate::state::{StateError, StateReader, StateWriter};

/// T-cycles in one frame with the LCD on (154 lines x 456 dots).
pub const CYCLES_PER_FRAME: u64 = 70_224;

/// The machine state at 0x0100, where the cartridge's code starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerOn {
    /// As Nintendo's DMG boot ROM leaves it (Pan Docs' power-up sequence).
    Dmg,
    /// The other models' boot ROMs leave other register values at 0x0100 (Pan Docs' power-up
    /// tables; mooneye's boot_regs and boot_hwio ROMs, verified on each model, check them). These
    /// four are the DMG with those values, for software that reads them: the rest of the machine,
    /// DIV's phase and the LCD's position included, starts as `Dmg` leaves it.
    ///
    /// The first Japanese DMG: A=01 F=00 B=FF C=13 D=00 E=C1 H=84 L=03. Its DIV and LCD position
    /// at 0x0100 differ from the DMG ABC's and are not offered (mooneye's boot_hwio-dmg0, which
    /// reads them, fails).
    Dmg0,
    /// The Game Boy Pocket: the DMG ABC's state with A=FF, how software tells it apart.
    Mgb,
    /// The Super Game Boy: A=01 F=00 B=00 C=14 D=00 E=00 H=C0 L=60; P1 with neither button row
    /// selected (reads 0xFF, mooneye's boot_hwio-S) and sound channel 1 silent (NR52 0xF0: the
    /// SNES plays the start-up sound, not the Game Boy's APU). Not an SGB: no command packets,
    /// borders or palettes.
    Sgb,
    /// The Super Game Boy 2: the SGB's state with A=FF.
    Sgb2,
    /// As PyBoy 2.8.1's own boot ROM leaves it, measured in PyBoy: registers A=01 F=D0 B=00 C=13
    /// D=00 E=8F H=00 L=87, system counter 0xC6E0 (DIV 0xC6), 4,507,360 T-cycles since power-on,
    /// LCD at line 145 dot 112, HRAM 0xFFFC = 0xB1. Used to compare with PyBoy frame by frame.
    PyBoy,
}

pub struct GameBoy {
    pub cpu: Cpu,
    pub bus: Bus,
    /// Bus cycle at the end of the instruction that switched the LCD off (frame clock while off;
    /// in PyBoy mode the cycle of PyBoy's write).
    lcd_off_since: u64,
    /// Whether compiled blocks run the PyBoy-compatible timing's plain steps (`crate::jit`);
    /// off runs every instruction in the interpreter (a verification switch: the results must
    /// not change).
    compiled_blocks: bool,
    /// `rom_id` of the cartridge's ROM, which every save state carries (computed once: a load
    /// is an RL reset, and hashing a 32 KiB ROM byte by byte takes some 40 us).
    rom_id: u64,
    /// The handle on the ROM's blocks, held while `compiled_blocks` is on in the PyBoy timing
    /// (`take_jit_handle`; the hardware timing never runs blocks, and a ROM's block table takes
    /// 9 bytes per ROM byte).
    jit: Option<Jit>,
}

/// 64-bit FNV-1a of the ROM: a save state only loads into the game it came from.
fn rom_id(rom: &[u8]) -> u64 {
    rom.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

impl GameBoy {
    /// A DMG in the state its boot ROM leaves at 0x0100, with this cartridge inserted.
    pub fn new(rom: Vec<u8>) -> Result<Self, CartridgeError> {
        Self::with_power_on(rom, PowerOn::Dmg)
    }

    pub fn with_power_on(rom: Vec<u8>, power_on: PowerOn) -> Result<Self, CartridgeError> {
        let id = rom_id(&rom);
        Self::build(rom, id, power_on, true)
    }

    /// `with_power_on` for a ROM whose `rom_id` is `id`, with compiled blocks on or off
    /// (`load_state` builds without, then passes on its setting and its handle on the blocks).
    fn build(
        rom: Vec<u8>,
        id: u64,
        power_on: PowerOn,
        compiled_blocks: bool,
    ) -> Result<Self, CartridgeError> {
        let mut gb = GameBoy {
            cpu: Cpu::after_boot(),
            bus: Bus::new(Cartridge::from_rom(rom)?),
            lcd_off_since: 0,
            rom_id: id,
            compiled_blocks,
            jit: None,
        };
        let cpu = &mut gb.cpu;
        match power_on {
            PowerOn::Dmg | PowerOn::PyBoy => {}
            PowerOn::Dmg0 => {
                (cpu.f, cpu.b, cpu.c, cpu.d, cpu.e, cpu.h, cpu.l) =
                    (0x00, 0xFF, 0x13, 0x00, 0xC1, 0x84, 0x03)
            }
            PowerOn::Mgb => cpu.a = 0xFF,
            PowerOn::Sgb | PowerOn::Sgb2 => {
                let a = if power_on == PowerOn::Sgb { 0x01 } else { 0xFF };
                (cpu.a, cpu.f, cpu.b, cpu.c, cpu.d, cpu.e, cpu.h, cpu.l) =
                    (a, 0x00, 0x00, 0x14, 0x00, 0x00, 0xC0, 0x60);
                gb.bus.joypad.deselect_rows();
                gb.bus.apu.silence_channel1();
            }
        }
        if power_on == PowerOn::PyBoy {
            let cpu = &mut gb.cpu;
            (cpu.a, cpu.f, cpu.b, cpu.c, cpu.d, cpu.e, cpu.h, cpu.l) =
                (0x01, 0xD0, 0x00, 0x13, 0x00, 0x8F, 0x00, 0x87);
            gb.bus.set_power_on_clock(4_507_360, 0xC6E0);
            gb.bus
                .ppu
                .set_vblank_position(145, 112)
                .expect("a VBlank position");
            gb.bus.hram[0xFFFC - 0xFF80] = 0xB1;
            gb.bus.joypad.pyboy_power_on();
            gb.bus.apu.pyboy_power_on();
            gb.set_pyboy_compat(true);
        }
        gb.bus.sync_all();
        Ok(gb)
    }

    /// PyBoy 2.8.1 compatibility timing (interrupt sampling, PPU mode lengths and the first frame
    /// after LCD enable as PyBoy has them); on with `PowerOn::PyBoy`, off (hardware) otherwise.
    pub fn set_pyboy_compat(&mut self, on: bool) {
        self.cpu.pyboy = on;
        self.bus.ppu.set_pyboy_timing(on);
        self.bus.pyboy = on;
        self.bus.joypad.pyboy = on;
        self.bus.serial.pyboy = on;
        self.take_jit_handle();
    }

    /// Takes a handle on the ROM's compiled blocks when they can run (compiled blocks on, the
    /// PyBoy timing), and drops it when they cannot.
    fn take_jit_handle(&mut self) {
        if !(self.compiled_blocks && self.cpu.pyboy) {
            self.jit = None;
        } else if self.jit.is_none() {
            self.jit = Some(Jit::for_rom(self.bus.cartridge().rom()));
        }
    }

    pub fn pyboy_compat(&self) -> bool {
        self.cpu.pyboy
    }

    /// Off: the sound registers as PyBoy has them with `sound_emulated=False` (all read 0, writes
    /// lost; see `Apu::registers_emulated`). On (the default): as the hardware has them.
    pub fn set_sound_emulated(&mut self, on: bool) {
        self.bus.apu.registers_emulated = on;
    }

    pub fn sound_emulated(&self) -> bool {
        self.bus.apu.registers_emulated
    }

    pub fn set_render(&mut self, render: bool) {
        self.bus.ppu.set_render(render);
    }

    pub fn render(&self) -> bool {
        self.bus.ppu.render()
    }

    /// Runs until LY wraps to 0 (the instruction during which line 0 starts completes; PyBoy's
    /// frame boundary), or one frame's worth of cycles when the LCD is off. The screen then holds
    /// the frame drawn in lines 0-143 before it.
    pub fn run_frame(&mut self) {
        self.run_frame_as(true, |_, _| {});
    }

    /// `run_frame` calling `hook` before every CPU step (debugging and traces; every instruction
    /// runs in the interpreter, so that the hook sees each one).
    pub fn run_frame_with(&mut self, hook: impl FnMut(&Cpu, &mut Bus)) {
        self.run_frame_as(false, hook);
    }

    /// Whether compiled blocks run the PyBoy-compatible timing's plain steps (on by default).
    pub fn set_compiled_blocks(&mut self, on: bool) {
        self.compiled_blocks = on;
        self.take_jit_handle();
    }

    pub fn compiled_blocks(&self) -> bool {
        self.compiled_blocks
    }

    #[cfg(test)]
    pub(crate) fn jit(&self) -> Option<&Jit> {
        self.jit.as_ref()
    }

    /// Compiled blocks this emulator ran (a diagnostic).
    pub fn compiled_blocks_run(&self) -> u64 {
        self.jit.as_ref().map_or(0, |jit| jit.blocks_run)
    }

    fn run_frame_as(&mut self, compiled: bool, hook: impl FnMut(&Cpu, &mut Bus)) {
        let deadline = if self.bus.ppu.lcd_is_on() {
            self.bus.cycles + CYCLES_PER_FRAME
        } else {
            // LCD off: frames of 70224 cycles counted from the moment it went off (as PyBoy).
            let off_for = self.bus.cycles - self.lcd_off_since;
            self.lcd_off_since + (off_for / CYCLES_PER_FRAME + 1) * CYCLES_PER_FRAME
        };
        self.bus.set_deadline(deadline);
        if self.cpu.pyboy {
            self.run_until_frame_ends::<true>(deadline, compiled, hook);
        } else {
            self.run_until_frame_ends::<false>(deadline, false, hook);
        }
        self.bus.sync_all();
        if !self.bus.ppu.lcd_is_on() && self.bus.cycles < deadline {
            // It was just switched off; PyBoy counts from its LCDC write (see `Bus::pyboy_lcd_off_at`).
            self.lcd_off_since = if self.pyboy_compat() {
                self.bus.pyboy_lcd_off_at()
            } else {
                self.bus.cycles
            };
        }
    }

    #[inline(always)]
    fn run_until_frame_ends<const PYBOY: bool>(
        &mut self,
        deadline: u64,
        compiled: bool,
        mut hook: impl FnMut(&Cpu, &mut Bus),
    ) {
        // The first instruction runs whatever the frame check would say (a frame is at least one).
        let mut slow_step_start = self.bus.cycles;
        hook(&self.cpu, &mut self.bus);
        self.bus.general_steps += 1;
        self.cpu.step_slow(&mut self.bus);
        loop {
            // One test per instruction: the bus keeps `attention_due` false while neither the
            // frame can have ended nor the CPU's plain step can be wrong.
            if self.bus.attention_due() {
                if self.bus.frame_check_due() {
                    let started = self.bus.ppu.take_frame_started();
                    if started || self.bus.cycles >= deadline {
                        if PYBOY && started && self.pyboy_ends_frame_one_step_later(slow_step_start)
                        {
                            hook(&self.cpu, &mut self.bus);
                            self.bus.general_steps += 1;
                            self.cpu.step_slow(&mut self.bus);
                        }
                        break;
                    }
                }
                if self.cpu.needs_slow_step::<Bus, PYBOY>(&self.bus)
                    || !self.bus.plain_steps_from_here()
                {
                    hook(&self.cpu, &mut self.bus);
                    self.bus.general_steps += 1;
                    slow_step_start = self.bus.cycles;
                    self.cpu.step_slow(&mut self.bus);
                    continue; // and look again before the next one
                }
            }
            hook(&self.cpu, &mut self.bus);
            // Blocks are compiled from ROM and work RAM; code elsewhere skips the look-up.
            if PYBOY
                && compiled
                && (self.cpu.pc < 0x8000 || (0xC000..0xE000).contains(&self.cpu.pc))
            {
                if let Some(jit) = self.jit.as_mut() {
                    if jit.try_run(&mut self.cpu, &mut self.bus) {
                        continue;
                    }
                }
            }
            self.cpu
                .step_plain::<PlainStep<PYBOY>, PYBOY>(&mut PlainStep::<PYBOY>(&mut self.bus));
        }
    }

    /// PyBoy mode, as a frame has just started: whether PyBoy ends the frame one step later.
    /// PyBoy ends its first frame after the LCD is switched on in two looks at its LCD clock
    /// (pyboy/core/lcd.py:289-297): its first tick at or after line 153's usual end stretches the
    /// line by 8 dots, and a later tick at or after the new end ends the frame. It ticks the LCD
    /// where its CPU returns to the scheduler, at the first instruction boundary at or after the
    /// nearest event, and on CPU accesses to 0xFF40-0xFF4B. So when the step that just crossed
    /// the frame's end (an instruction, or an interrupt dispatch, of 12 T-cycles or more)
    /// started before the first look and made no such access at or after it, PyBoy's first tick
    /// after the look is this step's end, where the stretch is decided, and the frame only ends
    /// where the next step does (the scheduler then asks its CPU for at least 4 T-cycles). A
    /// halted CPU's steps of 4 T-cycles cross one at most (and land on the look, an event, as
    /// PyBoy's halted CPU does).
    fn pyboy_ends_frame_one_step_later(&mut self, slow_step_start: u64) -> bool {
        let Some(look) = self.bus.take_pyboy_stretch_look() else {
            return false;
        };
        // A plain step sets the instruction's start; a dispatch is only ever a slow step.
        let step_start = slow_step_start.max(self.bus.pyboy_instr_start());
        step_start < look && self.bus.pyboy_lcd_access_at() < look
    }

    pub fn run_frames(&mut self, frames: u32) {
        for _ in 0..frames {
            self.run_frame();
        }
    }

    /// Runs `phases` in order, holding the buttons of each (a mask) for its number of frames; the
    /// buttons stay as the last phase left them. With `draw_last_only`, only the final frame is
    /// drawn (as PyBoy's `tick(n, render=True)`), whatever the render setting, which is then
    /// restored: the screen is the one a run with rendering on throughout would show.
    pub fn run_phases(&mut self, phases: &[(u8, u32)], draw_last_only: bool) {
        let render = self.bus.ppu.render();
        let total: u64 = phases.iter().map(|&(_, frames)| frames as u64).sum();
        let mut left = total;
        for &(mask, frames) in phases {
            // Even for no frames: a release between two presses is a fall the joypad sees.
            self.set_buttons(mask);
            for _ in 0..frames {
                if draw_last_only {
                    self.set_render(left == 1);
                }
                self.run_frame();
                left -= 1;
            }
        }
        if draw_last_only {
            self.set_render(render);
        }
    }

    /// `run_phases` in slices of at most `max_frames` frames (`slices::phase_slices`), each through
    /// `run_slice` (python.rs releases the GIL there); between two, `go_on` says whether to continue.
    /// When it always does, the same as one `run_phases` (tested). With `draw_last_only`, no slice
    /// before the last draws a frame, and the render setting is restored however the run ends.
    pub fn run_phases_in_slices(
        &mut self,
        phases: &[(u8, u32)],
        draw_last_only: bool,
        max_frames: u32,
        mut run_slice: impl FnMut(&mut Self, &[(u8, u32)], bool),
        mut go_on: impl FnMut() -> bool,
    ) {
        let render = self.render();
        let mut slices = phase_slices(phases, max_frames).peekable();
        while let Some(slice) = slices.next() {
            let last = slices.peek().is_none();
            if draw_last_only && !last {
                self.set_render(false);
            }
            run_slice(self, &slice, draw_last_only && last);
            if last || !go_on() {
                break;
            }
        }
        if draw_last_only {
            self.set_render(render);
        }
    }

    /// Runs at least `cycles` T-cycles (whole instructions).
    pub fn run_cycles(&mut self, cycles: u64) {
        self.run_cycles_to(self.bus.cycles + cycles);
    }

    /// Runs whole instructions until the cycle count reaches `end` (none if it has). Runs to a
    /// point between this one and `end`, then to `end`, end where one run to `end` does (the Python
    /// layer runs long calls in slices: `slices.rs`).
    pub fn run_cycles_to(&mut self, end: u64) {
        self.bus.set_deadline(end);
        while self.bus.cycles < end {
            self.cpu.step(&mut self.bus);
        }
        self.bus.sync_all();
    }

    /// Pressed buttons as a bit mask in `joypad::BUTTON_NAMES` order.
    pub fn set_buttons(&mut self, mask: u8) {
        self.bus
            .joypad
            .set_buttons(mask, &mut self.bus.interrupt_flags);
    }

    pub fn screen(&self) -> &[u8; SCREEN_WIDTH * SCREEN_HEIGHT] {
        self.bus.ppu.screen()
    }

    pub fn read_memory(&self, addr: u16) -> u8 {
        self.bus.peek(addr)
    }

    pub fn write_memory(&mut self, addr: u16, value: u8) {
        self.bus.write(addr, value);
    }

    pub fn serial_output(&self) -> &[u8] {
        &self.bus.serial.output
    }

    pub fn frame_count(&self) -> u64 {
        self.bus.ppu.frame_count()
    }

    pub fn save_state(&mut self) -> Vec<u8> {
        let mut w = StateWriter::new();
        w.u64(self.rom_id);
        self.cpu.save(&mut w);
        self.bus.save(&mut w);
        w.u64(self.lcd_off_since);
        w.finish()
    }

    /// Restores a state saved from the same ROM; on any error the emulator is left unchanged.
    pub fn load_state(&mut self, data: &[u8]) -> Result<(), StateError> {
        let mut r = StateReader::new(data)?;
        if r.u64()? != self.rom_id {
            return Err(StateError(
                "the state was saved from a different ROM".into(),
            ));
        }
        let rom = self.bus.cartridge.rom().to_vec();
        // Its compiled blocks are this one's (the same ROM; setting and handle taken once the
        // state has loaded).
        let mut fresh = GameBoy::build(rom, self.rom_id, PowerOn::Dmg, false)
            .map_err(|e| StateError(e.to_string()))?;
        fresh.set_render(self.bus.ppu.render());
        fresh.bus.eager_ppu = self.bus.eager_ppu;
        fresh.bus.skip_wait_loops = self.bus.skip_wait_loops;
        fresh.bus.wait_cycles_skipped = self.bus.wait_cycles_skipped;
        fresh.bus.polls_in_blocks = self.bus.polls_in_blocks;
        fresh.bus.plain_steps = self.bus.plain_steps;
        fresh.bus.general_steps = self.bus.general_steps;
        fresh.set_pyboy_compat(self.pyboy_compat());
        fresh.set_sound_emulated(self.sound_emulated());
        fresh.cpu.load(&mut r)?;
        fresh.bus.load(&mut r)?;
        fresh.lcd_off_since = r.u64()?;
        r.finish()?;
        fresh.compiled_blocks = self.compiled_blocks;
        fresh.jit = self.jit.take();
        *self = fresh;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn cycles_run_in_slices_end_where_one_run_ends() {
        for interrupts in [false, true] {
            let rom = wait_loop_rom(interrupts);
            let mut whole = GameBoy::new(rom.clone()).unwrap();
            let mut sliced = GameBoy::new(rom).unwrap();
            for cycles in [0, 1, 997, 70_224, 3 * 123_457, 1_000_003] {
                whole.run_cycles(cycles);
                let end = sliced.bus.cycles + cycles;
                loop {
                    sliced.run_cycles_to(end.min(sliced.bus.cycles + 4_999));
                    if sliced.bus.cycles >= end {
                        break;
                    }
                }
                assert_eq!(whole.bus.cycles, sliced.bus.cycles, "cycles {cycles}");
                assert_eq!(whole.save_state(), sliced.save_state(), "cycles {cycles}");
            }
            assert!(
                whole.read_memory(0xC012) > 0 || !interrupts,
                "the timer's interrupts ran"
            );
        }
    }

    #[test]
    fn frames_and_phases_run_in_slices_equal_one_run() {
        let rom = wait_loop_rom(true);
        let phases = [(1u8, 100u32), (0, 0), (0x10, 0), (4, 70), (0, 3)];
        for draw_last_only in [false, true] {
            let mut whole = GameBoy::new(rom.clone()).unwrap();
            let mut sliced = GameBoy::new(rom.clone()).unwrap();
            whole.run_phases(&phases, draw_last_only);
            let mut slices = 0;
            let run = |gb: &mut GameBoy, slice: &[(u8, u32)], draw: bool| {
                slices += 1;
                gb.run_phases(slice, draw)
            };
            sliced.run_phases_in_slices(&phases, draw_last_only, 60, run, || true);
            assert_eq!(slices, 3); // 173 frames
            assert_eq!(whole.save_state(), sliced.save_state());
            assert_eq!(whole.screen()[..], sliced.screen()[..]);
            assert_eq!(whole.bus.ppu.render(), sliced.bus.ppu.render());
        }
    }

    #[test]
    fn a_stop_between_slices_leaves_the_console_after_its_slice_and_its_render_setting_as_it_was() {
        let rom = wait_loop_rom(true);
        for render in [false, true] {
            let mut stopped = GameBoy::new(rom.clone()).unwrap();
            let mut first_slice = GameBoy::new(rom.clone()).unwrap();
            stopped.set_render(render);
            first_slice.set_render(false);
            first_slice.run_phases(&[(1, 60)], false);
            let mut slices = 0;
            let run = |gb: &mut GameBoy, slice: &[(u8, u32)], draw: bool| {
                slices += 1;
                gb.run_phases(slice, draw)
            };
            stopped.run_phases_in_slices(&[(1, 1000)], true, 60, run, || false);
            assert_eq!(slices, 1);
            assert_eq!(stopped.render(), render);
            first_slice.set_render(render);
            assert_eq!(stopped.save_state(), first_slice.save_state());
        }
    }

    /// A ROM-only cartridge that waits in every loop form `cpu::wait_loops` passes over: polling
    /// STAT and LY (AND n, BIT b,A and CP n tests; JR NZ, Z, NC and C), counting down with
    /// DEC r, SUB n and DEC rr, and counting down in high RAM during an OAM DMA transfer. It
    /// records DIV after each wait and counts interrupts in work RAM. `interrupts` enables the
    /// VBlank, STAT (mode 2) and timer interrupts, the timer ticking every 16 cycles; without,
    /// no STAT source is enabled either, so that the PPU's stage boundaries are not bus events.
    pub(crate) fn wait_loop_rom(interrupts: bool) -> Vec<u8> {
        let mut rom = vec![0u8; 0x8000];
        // Handlers, at 0x60 + 16n: PUSH AF (the flags a wait loop left stay on the stack, in high
        // RAM); PUSH HL; LD HL,0xC010+n; INC (HL); POP HL; POP AF; RETI.
        for (n, vector) in [0x40usize, 0x48, 0x50].into_iter().enumerate() {
            let handler = 0x60 + 16 * n;
            rom[vector..vector + 3].copy_from_slice(&[0xC3, handler as u8, 0x00]);
            let count_at = 0x10 + n as u8;
            rom[handler..handler + 9]
                .copy_from_slice(&[0xF5, 0xE5, 0x21, count_at, 0xC0, 0x34, 0xE1, 0xF1, 0xD9]);
        }
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]); // JP 0x0150
        let (ie, stat) = if interrupts {
            (0x07, 0x20)
        } else {
            (0x00, 0x00)
        };
        let mut code = vec![
            0x01, 0x00, 0xC1, // LD BC, 0xC100: where DIV is recorded
            0x3E, stat, 0xE0, 0x41, // STAT sources
            0x3E, 0x05, 0xE0, 0x07, // TAC: on, every 16 cycles
            0x3E, ie, 0xE0, 0xFF, // IE
            0x21, 0x80, 0xFF, // LD HL, 0xFF80
        ];
        // At 0xFF80: start OAM DMA from 0xC100, count A down from 40 (as games wait for it), RET.
        for byte in [0x3E, 0xC1, 0xE0, 0x46, 0x3E, 0x28, 0x3D, 0x20, 0xFD, 0xC9] {
            code.extend_from_slice(&[0x3E, byte, 0x22]); // LD A,byte; LD (HL+),A
        }
        code.push(0xFB); // EI
        let record_div = [0xF0, 0x04, 0x02, 0x03]; // LDH A,(DIV); LD (BC),A; INC BC
        let waits: [&[u8]; 12] = [
            &[0xF0, 0x41, 0xE6, 0x03, 0x20, 0xFA], // until mode 0: AND 3; JR NZ
            &[0xF0, 0x41, 0xCB, 0x4F, 0x28, 0xFA], // until STAT bit 1: BIT 1,A; JR Z
            &[0xF0, 0x44, 0xFE, 0x90, 0x20, 0xFA], // until LY = 144: CP 144; JR NZ
            &[0xF0, 0x44, 0xFE, 0x90, 0x30, 0xFA], // until LY < 144: CP 144; JR NC
            &[0xF0, 0x44, 0xFE, 0x40, 0x38, 0xFA], // until LY >= 64: CP 64; JR C
            &[0x16, 0x07, 0x15, 0x20, 0xFD],       // LD D,7; DEC D; JR NZ
            &[0x3E, 0x00, 0x3D, 0x20, 0xFD],       // LD A,0; DEC A; JR NZ (256 rounds)
            &[0x2E, 0x30, 0x2D, 0x20, 0xFD],       // LD L,0x30; DEC L; JR NZ
            &[0x3E, 0xC8, 0xD6, 0x07, 0x30, 0xFC], // LD A,200; SUB 7; JR NC
            &[0x11, 0x20, 0x03, 0x1B, 0x7A, 0xB3, 0x20, 0xFB], // DEC DE; LD A,D; OR E; JR NZ
            &[0x21, 0x40, 0x00, 0x2B, 0x7D, 0xB4, 0x20, 0xFB], // DEC HL; LD A,L; OR H; JR NZ
            &[0xCD, 0x80, 0xFF],                   // CALL 0xFF80
        ];
        let loop_start = 0x150 + code.len();
        for wait in waits {
            code.extend_from_slice(wait);
            code.extend_from_slice(&record_div);
        }
        // Keep BC in 0xC100..0xCFFF, then loop.
        code.extend_from_slice(&[0x78, 0xE6, 0x0E, 0xF6, 0xC1, 0x47]);
        code.extend_from_slice(&[0xC3, loop_start as u8, (loop_start >> 8) as u8]);
        rom[0x150..0x150 + code.len()].copy_from_slice(&code);
        rom[0x14D] = crate::cartridge::header_checksum(&rom);
        rom
    }

    /// A ROM-only cartridge that counts in A for a while and then runs an opcode the SM83 does
    /// not have (0xD3): the CPU locks up there, A stays as it was, and only the clock runs.
    fn lock_up_rom() -> Vec<u8> {
        let mut rom = vec![0u8; 0x8000];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]); // JP 0x0150
        let code = [
            0x3E, 0x00, // LD A,0
            0x16, 0x00, // LD D,0
            0x3C, 0x15, 0x20, 0xFC, // INC A; DEC D; JR NZ (256 rounds)
            0xD3, // lock up
            0x3C, 0x3C, 0x18, 0xFC, // INC A; INC A; JR back (never reached)
        ];
        rom[0x150..0x150 + code.len()].copy_from_slice(&code);
        rom[0x14D] = crate::cartridge::header_checksum(&rom);
        rom
    }

    /// A ROM-only cartridge that waits for VBlank, switches the LCD off and on again (LDH
    /// (0x40),A) and then runs `after_lcd_on` (envs/emurust/tests/l3_pyboy_test.py's
    /// `_lcd_on_rom`, which runs the same code on PyBoy).
    fn lcd_on_rom(after_lcd_on: &[u8]) -> Vec<u8> {
        let mut rom = vec![0u8; 0x8000];
        rom[0x100..0x104].copy_from_slice(&[0x00, 0xC3, 0x50, 0x01]); // JP 0x0150
        let mut code = vec![
            0xF3, // DI
            0xF0, 0x44, 0xFE, 0x90, 0x20, 0xFA, // until LY = 144
            0xAF, 0xE0, 0x40, // LCD off
            0x3E, 0x91, 0xE0, 0x40, // LCD on
        ];
        code.extend_from_slice(after_lcd_on);
        rom[0x150..0x150 + code.len()].copy_from_slice(&code);
        rom[0x14D] = crate::cartridge::header_checksum(&rom);
        rom
    }

    /// PyBoy's first frame after the LCD is switched on ends at 70224 T-cycles, or one step
    /// later when the step that crosses 70224 also crossed PyBoy's first look at 70216 without
    /// reading 0xFF40-0xFF4B after it (`GameBoy::pyboy_ends_frame_one_step_later`). The lengths
    /// are PyBoy 2.8.1's for the same code (l3_pyboy_test.py's
    /// `test_lcd_on_loops_cover_pyboys_ways_to_end_the_first_frame`).
    #[test]
    fn first_frame_after_lcd_on_ends_where_pyboys_does() {
        const JR_TO_ITSELF: [u8; 2] = [0x18, 0xFE];
        let cases: [(&str, Vec<u8>, u64); 6] = [
            ("JR from 70212 to 70224", JR_TO_ITSELF.to_vec(), 70236),
            (
                "JR ending at 70216",
                [&[0x00][..], &JR_TO_ITSELF].concat(),
                70228,
            ),
            (
                "JR ending at 70220",
                [&[0x00, 0x00][..], &JR_TO_ITSELF].concat(),
                70232,
            ),
            // JR to the next instruction, then rounds of LDH A,(n); JR back: an LDH from 70212.
            (
                "LY read from 70212",
                vec![0x18, 0x00, 0xF0, 0x44, 0x18, 0xFC],
                70224,
            ),
            (
                "HRAM read from 70212",
                vec![0x18, 0x00, 0xF0, 0x80, 0x18, 0xFC],
                70236,
            ),
            ("halted", vec![0x76, 0x00, 0x18, 0xFC], 70224),
        ];
        for (case, code, pyboy_length) in cases {
            let mut gb = GameBoy::with_power_on(lcd_on_rom(&code), PowerOn::PyBoy).unwrap();
            let mut lcd_was_off = false;
            for _ in 0..4 {
                gb.run_frame();
                let lcd_on = gb.read_memory(0xFF40) & 0x80 != 0;
                if lcd_was_off && lcd_on {
                    break;
                }
                lcd_was_off = !lcd_on;
            }
            assert!(lcd_was_off, "{case}: the LCD was never switched on");
            let start = gb.bus.cycles;
            gb.run_frame();
            assert_eq!(gb.bus.cycles - start, pyboy_length, "{case}");
            // The next frame ends on the 70224 grid again (at the first boundary after it).
            gb.run_frame();
            let over = gb.bus.cycles - start - 2 * CYCLES_PER_FRAME;
            assert!(over < 12, "{case}: {over} T-cycles over");
        }
    }

    /// Loading a state keeps the emulator's settings (they are not part of a state): rendering,
    /// the timing, the sound registers' emulation and the verification switches.
    #[test]
    fn load_state_keeps_the_settings() {
        let mut gb = GameBoy::with_power_on(lcd_on_rom(&[0x18, 0xFE]), PowerOn::PyBoy).unwrap();
        gb.set_render(false);
        gb.set_sound_emulated(false);
        gb.bus.eager_ppu = true;
        gb.bus.skip_wait_loops = false;
        gb.bus.plain_steps = false;
        gb.run_frame();
        let state = gb.save_state();
        gb.load_state(&state).unwrap();
        assert!(!gb.bus.ppu.render() && gb.pyboy_compat() && !gb.sound_emulated());
        assert!(gb.bus.eager_ppu && !gb.bus.skip_wait_loops && !gb.bus.plain_steps);
        assert_eq!(
            gb.read_memory(0xFF26),
            0,
            "sound registers read 0 when not emulated"
        );
        gb.set_sound_emulated(true);
        assert_eq!(
            gb.read_memory(0xFF26),
            0xF0,
            "PyBoy's boot state: powered, no channel on"
        );
    }

    /// A state whose checksum is right but whose timer counter is not a whole number of M-cycles
    /// (the scheduler waits for an edge such a counter never meets: `run_frames` hung) or whose
    /// cycle count is past `MAX_STATE_CYCLES` (a run from it wrapped the count: every later frame
    /// ended after one instruction) is refused, and the console is left as it was.
    #[test]
    fn states_no_console_can_reach_are_refused() {
        let mut gb = GameBoy::with_power_on(lcd_on_rom(&[0x18, 0xFE]), PowerOn::Dmg).unwrap();
        gb.run_frame();
        let good = gb.save_state();
        let mut unaligned =
            GameBoy::with_power_on(lcd_on_rom(&[0x18, 0xFE]), PowerOn::Dmg).unwrap();
        unaligned.bus.timer.counter |= 1;
        let mut far = GameBoy::with_power_on(lcd_on_rom(&[0x18, 0xFE]), PowerOn::Dmg).unwrap();
        far.bus.cycles = crate::bus::MAX_STATE_CYCLES + 4;
        for (bad, message) in [
            (unaligned.save_state(), "timer counter"),
            (far.save_state(), "past"),
        ] {
            let error = gb.load_state(&bad).unwrap_err();
            assert!(error.to_string().contains(message), "{error}");
            assert_eq!(gb.save_state(), good, "{message}: the console is unchanged");
        }
        // At the limit a console runs as one at power-on does (the same frames, the same cycles).
        let mut edge = GameBoy::with_power_on(lcd_on_rom(&[0x18, 0xFE]), PowerOn::Dmg).unwrap();
        edge.bus.cycles = crate::bus::MAX_STATE_CYCLES;
        gb.load_state(&edge.save_state()).unwrap();
        let mut fresh = GameBoy::with_power_on(lcd_on_rom(&[0x18, 0xFE]), PowerOn::Dmg).unwrap();
        gb.run_frames(30);
        fresh.run_frames(30);
        assert_eq!(
            gb.bus.cycles - crate::bus::MAX_STATE_CYCLES,
            fresh.bus.cycles
        );
        assert_eq!(gb.frame_count(), fresh.frame_count());
        assert_eq!(gb.screen()[..], fresh.screen()[..]);
    }

    fn assert_same_state(a: &mut GameBoy, b: &mut GameBoy, case: &str) {
        let (a, b) = (a.save_state(), b.save_state());
        let first_difference = a.iter().zip(&b).position(|(x, y)| x != y);
        assert!(
            a.len() == b.len() && first_difference.is_none(),
            "{case}: save states differ from byte {first_difference:?} of {}",
            a.len()
        );
    }

    /// Runs `fast` and `general` (every instruction through the general step) for `frames`
    /// frames with the same buttons: every instruction boundary is reached at the same cycle with
    /// the same registers, and the save states agree after every frame and inside the next.
    /// Returns the number of boundaries.
    fn assert_same_steps(
        fast: &mut GameBoy,
        general: &mut GameBoy,
        frames: u32,
        case: &str,
    ) -> usize {
        let mut boundaries_reached = 0;
        for frame in 0..frames {
            if frame % 16 == 0 {
                let buttons = (frame.wrapping_mul(0x9E37_79B9) >> 24) as u8;
                fast.set_buttons(buttons);
                general.set_buttons(buttons);
            }
            let mut expected = Vec::new();
            general.run_frame_with(|cpu, bus| expected.push((bus.cycles, cpu.clone())));
            let mut reached = Vec::new();
            fast.run_frame_with(|cpu, bus| reached.push((bus.cycles, cpu.clone())));
            if let Some(i) =
                (0..expected.len().max(reached.len())).find(|&i| expected.get(i) != reached.get(i))
            {
                panic!(
                    "{case}, frame {frame}, boundary {i}: {:?} expected, {:?} reached",
                    expected.get(i),
                    reached.get(i)
                );
            }
            boundaries_reached += reached.len();
            assert_same_state(fast, general, &format!("{case}, frame {frame}"));
            let cycles = 1 + (frame as u64 * 7919) % CYCLES_PER_FRAME;
            fast.run_cycles(cycles);
            general.run_cycles(cycles);
            assert_same_state(fast, general, &format!("{case}, frame {frame} +{cycles}"));
        }
        boundaries_reached
    }

    /// The frame loop's plain steps (no event test in their fetch, read and idle M-cycles, no
    /// look at the CPU's flags or interrupts between its looks) against the general step at every
    /// instruction: on the wait-loop ROM with and without its VBlank, STAT and fast timer
    /// interrupts, and on ROMs that take interrupts, HALT, EI and DI at every timing the test
    /// suites probe, in both timings.
    #[test]
    fn plain_steps_equal_general_steps() {
        // `EMURUST_ROMS` when the crate runs from a copy (build_ext.py's `run_unit_tests`).
        let roms_dir = std::env::var_os("EMURUST_ROMS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/roms")
            });
        let mut roms: Vec<(String, Vec<u8>)> = vec![
            ("wait loops".into(), wait_loop_rom(false)),
            ("wait loops, interrupts".into(), wait_loop_rom(true)),
            ("lock-up".into(), lock_up_rom()),
        ];
        for path in [
            "games/2048-wyattferguson/2048.gb",
            "games/tobutobugirl/tobutobugirl.gb",
            "dmg-acid2/dmg-acid2.gb",
            "blargg/cpu_instrs/individual/02-interrupts.gb",
            "blargg/halt_bug.gb",
            "mooneye/acceptance/ei_sequence.gb",
            "mooneye/acceptance/halt_ime1_timing2-GS.gb",
            "mooneye/acceptance/di_timing-GS.gb",
            "mooneye/acceptance/intr_timing.gb",
            "mooneye/acceptance/interrupts/ie_push.gb",
            "mooneye/acceptance/timer/tima_reload.gb",
            "mooneye/acceptance/timer/rapid_toggle.gb",
        ] {
            let rom = std::fs::read(roms_dir.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
            roms.push((path.into(), rom));
        }
        for (name, rom) in roms {
            for power_on in [PowerOn::Dmg, PowerOn::PyBoy] {
                let mut fast = GameBoy::with_power_on(rom.clone(), power_on).unwrap();
                let mut general = GameBoy::with_power_on(rom.clone(), power_on).unwrap();
                general.bus.plain_steps = false;
                let case = format!("{name}, {power_on:?}");
                let boundaries = assert_same_steps(&mut fast, &mut general, 40, &case);
                // Both ran the same instructions, the general run each as a general step.
                let plain = general.bus.general_steps - fast.bus.general_steps;
                assert!(plain > 500, "{case}: {plain} plain steps of {boundaries}");
                if name == "lock-up" {
                    assert!(fast.cpu.locked && fast.cpu.a == 0, "{case}: {:?}", fast.cpu);
                }
            }
        }
    }

    #[test]
    fn skipping_wait_loop_rounds_equals_running_them() {
        for interrupts in [false, true] {
            for power_on in [PowerOn::Dmg, PowerOn::PyBoy] {
                let rom = wait_loop_rom(interrupts);
                let mut skipping = GameBoy::with_power_on(rom.clone(), power_on).unwrap();
                let mut plain = GameBoy::with_power_on(rom, power_on).unwrap();
                plain.bus.skip_wait_loops = false;
                let case = format!("interrupts {interrupts}, {power_on:?}");
                let mut boundaries_reached = 0;
                for frame in 0..30 {
                    // Every instruction boundary the skipping run reaches, the plain run reaches
                    // at the same cycle with the same registers (so a skip leaves the registers
                    // as the rounds it passed over would have).
                    let mut boundaries = std::collections::HashMap::new();
                    plain.run_frame_with(|cpu, bus| {
                        boundaries.insert(bus.cycles, cpu.clone());
                    });
                    skipping.run_frame_with(|cpu, bus| {
                        boundaries_reached += 1;
                        let plain_cpu = boundaries.get(&bus.cycles);
                        assert_eq!(
                            plain_cpu,
                            Some(cpu),
                            "{case}, frame {frame}, cycle {}",
                            bus.cycles
                        );
                    });
                    assert_same_state(&mut skipping, &mut plain, &format!("{case}, frame {frame}"));
                    // And at instruction boundaries inside a frame.
                    let cycles = 1 + (frame as u64 * 7919) % CYCLES_PER_FRAME;
                    skipping.run_cycles(cycles);
                    plain.run_cycles(cycles);
                    assert_same_state(
                        &mut skipping,
                        &mut plain,
                        &format!("{case}, frame {frame} +{cycles}"),
                    );
                }
                assert!(
                    skipping.bus.wait_cycles_skipped > 30 * 10_000,
                    "{case}: {}",
                    skipping.bus.wait_cycles_skipped
                );
                assert_eq!(plain.bus.wait_cycles_skipped, 0);
                assert!(boundaries_reached > 5_000, "{case}: {boundaries_reached}");
                let interrupts_taken = (0..3)
                    .map(|n| plain.read_memory(0xC010 + n))
                    .collect::<Vec<_>>();
                if interrupts {
                    assert!(
                        interrupts_taken.iter().all(|&n| n > 0),
                        "{case}: {interrupts_taken:?}"
                    );
                } else {
                    assert_eq!(interrupts_taken, [0, 0, 0], "{case}");
                }
            }
        }
    }
}
