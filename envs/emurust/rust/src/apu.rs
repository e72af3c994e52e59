//! The APU's registers (0xFF10-0xFF3F) without audio output: read masks, NR52 power, channel
//! status bits driven by triggers, DACs and length counters (clocked by the frame sequencer off
//! DIV), so that programs polling the sound registers see what hardware would show. Not modelled:
//! frequency sweep overflow (it can switch channel 1 off) and the sound itself.

use crate::state::{StateError, StateReader, StateWriter};

/// Bits that read back as 1 on DMG, per register from 0xFF10 to 0xFF2F.
const READ_MASK: [u8; 0x20] = [
    0x80, 0x3F, 0x00, 0xFF, 0xBF, // NR10-NR14
    0xFF, 0x3F, 0x00, 0xFF, 0xBF, // (unused), NR21-NR24
    0x7F, 0xFF, 0x9F, 0xFF, 0xBF, // NR30-NR34
    0xFF, 0xFF, 0x00, 0x00, 0xBF, // (unused), NR41-NR44
    0x00, 0x00, 0x70, // NR50, NR51, NR52
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // 0xFF27-0xFF2F
];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Apu {
    registers: [u8; 0x20],
    wave: [u8; 16],
    powered: bool,
    enabled: [bool; 4],
    length: [u16; 4],
    frame_step: u8,
}

impl Default for Apu {
    fn default() -> Self {
        Self::new()
    }
}

fn length_max(channel: usize) -> u16 {
    if channel == 2 {
        256
    } else {
        64
    }
}

impl Apu {
    /// After the DMG boot ROM: powered, channel 1 on (the boot sound), NR50 0x77, NR51 0xF3.
    pub fn new() -> Self {
        let mut registers = [0u8; 0x20];
        registers[0x00] = 0x80;
        registers[0x01] = 0xBF;
        registers[0x02] = 0xF3;
        registers[0x04] = 0xBF;
        registers[0x06] = 0x3F;
        registers[0x09] = 0xBF;
        registers[0x0A] = 0x7F;
        registers[0x0B] = 0xFF;
        registers[0x0C] = 0x9F;
        registers[0x0E] = 0xBF;
        registers[0x10] = 0xFF;
        registers[0x13] = 0xBF;
        registers[0x14] = 0x77;
        registers[0x15] = 0xF3;
        Apu {
            registers,
            wave: [0; 16],
            powered: true,
            enabled: [true, false, false, false],
            length: [0; 4],
            frame_step: 0,
        }
    }

    fn dac_on(&self, channel: usize) -> bool {
        match channel {
            0 => self.registers[0x02] & 0xF8 != 0,
            1 => self.registers[0x07] & 0xF8 != 0,
            2 => self.registers[0x0A] & 0x80 != 0,
            _ => self.registers[0x11] & 0xF8 != 0,
        }
    }

    pub fn read(&self, addr: u16) -> u8 {
        match addr {
            0xFF26 => {
                let status = self
                    .enabled
                    .iter()
                    .enumerate()
                    .fold(0, |acc, (i, &on)| acc | ((on as u8) << i));
                0x70 | (self.powered as u8) << 7 | status
            }
            0xFF10..=0xFF2F => {
                self.registers[(addr - 0xFF10) as usize] | READ_MASK[(addr - 0xFF10) as usize]
            }
            _ => self.wave[(addr - 0xFF30) as usize],
        }
    }

    pub fn write(&mut self, addr: u16, value: u8) {
        match addr {
            0xFF26 => {
                let power = value & 0x80 != 0;
                if self.powered && !power {
                    self.registers[..0x16].fill(0);
                    self.enabled = [false; 4];
                } else if !self.powered && power {
                    self.frame_step = 0;
                }
                self.powered = power;
            }
            0xFF30..=0xFF3F => self.wave[(addr - 0xFF30) as usize] = value,
            0xFF10..=0xFF25 => {
                let index = (addr - 0xFF10) as usize;
                let channel = index / 5;
                let field = index % 5;
                if !self.powered {
                    // DMG: with the APU off, only the length counters can be written.
                    if field == 1 && channel < 4 {
                        self.load_length(channel, value);
                    }
                    return;
                }
                self.registers[index] = value;
                if channel >= 4 {
                    return;
                }
                match field {
                    1 => self.load_length(channel, value),
                    2 | 0 if !self.dac_on(channel) => self.enabled[channel] = false,
                    4 if value & 0x80 != 0 => {
                        if self.length[channel] == 0 {
                            self.length[channel] = length_max(channel);
                        }
                        self.enabled[channel] = self.dac_on(channel);
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    fn load_length(&mut self, channel: usize, value: u8) {
        self.length[channel] = if channel == 2 {
            256 - value as u16
        } else {
            64 - (value & 0x3F) as u16
        };
    }

    /// `steps` falling edges of DIV bit 4 at once. After 512 steps every length counter that can
    /// expire has, so longer spans only need their phase (the step count mod 8).
    pub fn frame_sequencer_steps(&mut self, steps: u64) {
        let steps = if steps > 1024 {
            1024 + (steps - 1024) % 8
        } else {
            steps
        };
        for _ in 0..steps {
            self.frame_sequencer_step();
        }
    }

    /// Called when DIV's bit 4 (system counter bit 12) falls: one step of the 512 Hz sequencer.
    pub fn frame_sequencer_step(&mut self) {
        if !self.powered {
            return;
        }
        if self.frame_step.is_multiple_of(2) {
            for channel in 0..4 {
                let length_enabled = self.registers[channel * 5 + 4] & 0x40 != 0;
                if length_enabled && self.length[channel] > 0 {
                    self.length[channel] -= 1;
                    if self.length[channel] == 0 {
                        self.enabled[channel] = false;
                    }
                }
            }
        }
        self.frame_step = (self.frame_step + 1) & 7;
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.bytes(&self.registers);
        w.bytes(&self.wave);
        w.bool(self.powered);
        for channel in 0..4 {
            w.bool(self.enabled[channel]);
            w.u16(self.length[channel]);
        }
        w.u8(self.frame_step);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        r.bytes_into(&mut self.registers)?;
        r.bytes_into(&mut self.wave)?;
        self.powered = r.bool()?;
        for channel in 0..4 {
            self.enabled[channel] = r.bool()?;
            self.length[channel] = r.u16()?;
            if self.length[channel] > length_max(channel) {
                return Err(StateError(format!(
                    "APU length counter {} out of range",
                    channel + 1
                )));
            }
        }
        self.frame_step = r.u8()? & 7;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_masks_and_power_off() {
        let mut apu = Apu::new();
        apu.write(0xFF11, 0x00);
        assert_eq!(
            apu.read(0xFF11),
            0x3F,
            "duty bits read back, length bits read 1"
        );
        assert_eq!(apu.read(0xFF13), 0xFF, "frequency low is write-only");
        apu.write(0xFF26, 0x00);
        assert_eq!(apu.read(0xFF26), 0x70);
        apu.write(0xFF12, 0xF0);
        assert_eq!(apu.read(0xFF12), 0x00, "writes are ignored while off");
        apu.write(0xFF30, 0x5A);
        assert_eq!(apu.read(0xFF30), 0x5A, "wave RAM stays accessible");
    }

    #[test]
    fn length_counter_switches_channel_off() {
        let mut apu = Apu::new();
        apu.write(0xFF17, 0xF0); // DAC on
        apu.write(0xFF16, 0x3E); // length 2
        apu.write(0xFF19, 0xC0); // trigger with length enabled
        assert_eq!(apu.read(0xFF26) & 0x02, 0x02);
        apu.frame_sequencer_step(); // step 0 clocks length: 1 left
        assert_eq!(apu.read(0xFF26) & 0x02, 0x02);
        apu.frame_sequencer_step(); // step 1: no length clock
        apu.frame_sequencer_step(); // step 2: 0 left
        assert_eq!(apu.read(0xFF26) & 0x02, 0);
    }

    #[test]
    fn dac_off_disables_channel() {
        let mut apu = Apu::new();
        apu.write(0xFF1A, 0x80);
        apu.write(0xFF1E, 0x80);
        assert_eq!(apu.read(0xFF26) & 0x04, 0x04);
        apu.write(0xFF1A, 0x00);
        assert_eq!(apu.read(0xFF26) & 0x04, 0);
    }
}
