//! P1/JOYP (0xFF00): two selectable rows of four active-low inputs; a pressed key that pulls a
//! selected line low requests the joypad interrupt.

use crate::interrupts;
use crate::state::{StateError, StateReader, StateWriter};

/// Button order of the `buttons` mask (bit i set = pressed), shared with the Python API.
pub const BUTTON_NAMES: [&str; 8] = ["a", "b", "select", "start", "right", "left", "up", "down"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Joypad {
    select: u8,
    buttons: u8,
    /// PyBoy 2.8.1 compatibility (configuration): P1 reads the value latched at the last write,
    /// `0xC0 | row` with the select bits reading 0, and 0xCF unless exactly one row is selected.
    pub pyboy: bool,
    pyboy_latched: u8,
}

impl Default for Joypad {
    /// As the DMG boot ROM leaves it: both rows selected, P1 reading 0xCF (mooneye's
    /// boot_hwio-dmgABCmgb). The PyBoy-compatible power-on deselects them (`pyboy_power_on`).
    fn default() -> Self {
        Joypad {
            select: 0x00,
            buttons: 0,
            pyboy: false,
            pyboy_latched: 0xCF,
        }
    }
}

impl Joypad {
    fn lines(&self) -> u8 {
        let mut low = 0u8;
        if self.select & 0x10 == 0 {
            low |= (self.buttons >> 4) & 0x0F; // right left up down
        }
        if self.select & 0x20 == 0 {
            low |= self.buttons & 0x0F; // a b select start
        }
        !low & 0x0F
    }

    pub fn read(&self) -> u8 {
        if self.pyboy {
            return self.pyboy_latched;
        }
        0xC0 | self.select | self.lines()
    }

    pub fn write(&mut self, value: u8, interrupt_flags: &mut u8) {
        let before = self.lines();
        self.select = value & 0x30;
        self.pyboy_latched = if self.select == 0x10 || self.select == 0x20 {
            0xC0 | self.lines()
        } else {
            0xCF
        };
        if !self.pyboy {
            // PyBoy's P1 write only recomputes the byte P1 reads (core/mb.py).
            self.request_on_fall(before, interrupt_flags);
        }
    }

    pub fn set_buttons(&mut self, buttons: u8, interrupt_flags: &mut u8) {
        if self.pyboy {
            // PyBoy 2.8.1 (core/interaction.py `key_event`, core/mb.py `buttonevent`) requests the
            // joypad interrupt for every newly pressed button, whichever rows P1 selects.
            if buttons & !self.buttons != 0 {
                *interrupt_flags |= interrupts::JOYPAD;
            }
            self.buttons = buttons;
            return;
        }
        let before = self.lines();
        self.buttons = buttons;
        self.request_on_fall(before, interrupt_flags);
    }

    /// Neither row selected (P1 reads 0xFF), as the SGB's boot ROM leaves it.
    pub fn deselect_rows(&mut self) {
        self.select = 0x30;
    }

    /// Neither row selected (P1 bits 4-5 high), with no interrupt, and P1 reading 0x00 until the
    /// game first writes it (PyBoy keeps P1 as a byte its writes compute, 0 at power-on, which its
    /// boot ROM never writes): the state PyBoy 2.8.1 starts the cartridge in.
    pub fn pyboy_power_on(&mut self) {
        self.deselect_rows();
        self.pyboy_latched = 0x00;
    }

    pub fn buttons(&self) -> u8 {
        self.buttons
    }

    fn request_on_fall(&self, before: u8, interrupt_flags: &mut u8) {
        if before & !self.lines() != 0 {
            *interrupt_flags |= interrupts::JOYPAD;
        }
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.u8(self.select);
        w.u8(self.buttons);
        w.u8(self.pyboy_latched);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        self.select = r.u8()? & 0x30;
        self.buttons = r.u8()?;
        self.pyboy_latched = r.u8()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_selected_and_active_low() {
        let mut pad = Joypad {
            select: 0x30,
            ..Joypad::default()
        };
        let mut flags = 0;
        pad.set_buttons(0b0001_0001, &mut flags); // A and RIGHT
        assert_eq!(flags, 0, "no row selected: no interrupt");
        pad.write(0x20, &mut flags); // select directions (bit 4 low)
        assert_eq!(pad.read() & 0x0F, 0b1110);
        assert_eq!(flags, interrupts::JOYPAD);
        pad.write(0x10, &mut flags); // select actions
        assert_eq!(pad.read() & 0x0F, 0b1110);
        pad.write(0x30, &mut flags);
        assert_eq!(pad.read(), 0xFF);
    }

    #[test]
    fn the_dmg_boot_state_selects_both_rows() {
        let mut pad = Joypad::default();
        assert_eq!(
            pad.read(),
            0xCF,
            "P1 after the DMG boot ROM (mooneye boot_hwio-dmgABCmgb)"
        );
        let mut flags = 0;
        pad.set_buttons(0b0100_0000, &mut flags); // UP
        assert_eq!(pad.read(), 0xCB);
        assert_eq!(flags, interrupts::JOYPAD, "a selected line fell");
    }

    #[test]
    fn pyboy_mode_requests_on_every_press_and_latches_p1_at_writes() {
        // PyBoy 2.8.1: core/interaction.py `key_event` answers a press of any button, and
        // core/mb.py then sets IF bit 4; a P1 write only recomputes the byte P1 reads.
        let mut pad = Joypad {
            pyboy: true,
            ..Joypad::default()
        };
        pad.pyboy_power_on();
        assert_eq!(pad.read(), 0x00, "P1 reads 0 until the game writes it");
        let mut flags = 0;
        pad.set_buttons(0b0000_1000, &mut flags); // START, no row selected
        assert_eq!(flags, interrupts::JOYPAD, "any newly pressed button");
        flags = 0;
        pad.set_buttons(0b0000_1000, &mut flags);
        assert_eq!(flags, 0, "held, not newly pressed");
        pad.set_buttons(0, &mut flags);
        assert_eq!(flags, 0, "a release requests nothing");
        pad.set_buttons(0b0001_0000, &mut flags); // RIGHT
        flags = 0;
        pad.write(0x20, &mut flags); // select directions: the line is already low
        assert_eq!(flags, 0, "a write requests nothing");
        assert_eq!(pad.read(), 0xCE, "RIGHT, latched by the write");
        pad.set_buttons(0b0011_0000, &mut flags); // and LEFT, after the write
        assert_eq!(pad.read(), 0xCE, "P1 keeps what the last write latched");
    }
}
