//! The console: CPU + bus, frame stepping, buttons, memory access and save states.

use crate::bus::Bus;
use crate::cartridge::{Cartridge, CartridgeError};
use crate::cpu::Cpu;
use crate::ppu::{SCREEN_HEIGHT, SCREEN_WIDTH};
use crate::state::{StateError, StateReader, StateWriter};

/// T-cycles in one frame with the LCD on (154 lines x 456 dots).
pub const CYCLES_PER_FRAME: u64 = 70_224;

/// The machine state at 0x0100, where the cartridge's code starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerOn {
    /// As Nintendo's DMG boot ROM leaves it (Pan Docs' power-up sequence).
    Dmg,
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
        let mut gb = GameBoy {
            cpu: Cpu::after_boot(),
            bus: Bus::new(Cartridge::from_rom(rom)?),
            lcd_off_since: 0,
        };
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
    }

    pub fn pyboy_compat(&self) -> bool {
        self.cpu.pyboy
    }

    pub fn set_render(&mut self, render: bool) {
        self.bus.ppu.set_render(render);
    }

    /// Runs until LY wraps to 0 (the instruction during which line 0 starts completes; PyBoy's
    /// frame boundary), or one frame's worth of cycles when the LCD is off. The screen then holds
    /// the frame drawn in lines 0-143 before it.
    pub fn run_frame(&mut self) {
        self.run_frame_with(|_, _| {});
    }

    /// `run_frame` calling `hook` before every CPU step (debugging and traces).
    pub fn run_frame_with(&mut self, hook: impl FnMut(&Cpu, &mut Bus)) {
        let deadline = if self.bus.ppu.lcd_is_on() {
            self.bus.cycles + CYCLES_PER_FRAME
        } else {
            // LCD off: frames of 70224 cycles counted from the moment it went off (as PyBoy).
            let off_for = self.bus.cycles - self.lcd_off_since;
            self.lcd_off_since + (off_for / CYCLES_PER_FRAME + 1) * CYCLES_PER_FRAME
        };
        self.bus.set_deadline(deadline);
        if self.cpu.pyboy {
            self.run_until_frame_ends::<true>(deadline, hook);
        } else {
            self.run_until_frame_ends::<false>(deadline, hook);
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
        mut hook: impl FnMut(&Cpu, &mut Bus),
    ) {
        loop {
            hook(&self.cpu, &mut self.bus);
            self.cpu.step_as::<Bus, PYBOY>(&mut self.bus);
            if self.bus.frame_check_due()
                && (self.bus.ppu.take_frame_started() || self.bus.cycles >= deadline)
            {
                break;
            }
        }
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
            if frames == 0 {
                continue;
            }
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

    /// Runs at least `cycles` T-cycles (whole instructions).
    pub fn run_cycles(&mut self, cycles: u64) {
        let end = self.bus.cycles + cycles;
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
        w.u64(rom_id(self.bus.cartridge.rom()));
        self.cpu.save(&mut w);
        self.bus.save(&mut w);
        w.u64(self.lcd_off_since);
        w.finish()
    }

    /// Restores a state saved from the same ROM; on any error the emulator is left unchanged.
    pub fn load_state(&mut self, data: &[u8]) -> Result<(), StateError> {
        let mut r = StateReader::new(data)?;
        if r.u64()? != rom_id(self.bus.cartridge.rom()) {
            return Err(StateError(
                "the state was saved from a different ROM".into(),
            ));
        }
        let rom = self.bus.cartridge.rom().to_vec();
        let mut fresh = GameBoy::new(rom).map_err(|e| StateError(e.to_string()))?;
        fresh.set_render(self.bus.ppu.render());
        fresh.bus.eager_ppu = self.bus.eager_ppu;
        fresh.set_pyboy_compat(self.pyboy_compat());
        fresh.cpu.load(&mut r)?;
        fresh.bus.load(&mut r)?;
        fresh.lcd_off_since = r.u64()?;
        r.finish()?;
        *self = fresh;
        Ok(())
    }
}
