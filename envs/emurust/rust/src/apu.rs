//! The APU's registers (0xFF10-0xFF3F) without audio output: read masks, NR52 power, channel
//! status bits driven by triggers, DACs, length counters and channel 1's frequency sweep (both
//! clocked by the frame sequencer off DIV), so that programs polling the sound registers see what
//! hardware would show. The sound itself is not made.
//!
//! The DMG's quirks that blargg's dmg_sound tests observe, as the Game Boy sound hardware notes
//! (gbdev wiki, "Obscure Behavior") describe them: enabling a length counter, or triggering with
//! a zero one, when the sequencer's next step does not clock lengths takes one more off it; the
//! sweep checks for overflow when triggered with a shift, writes back and checks again on its
//! clocks, treats a period of 0 as 8, and switches the channel off if negate mode is cleared after
//! it has subtracted since the trigger.

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
    /// The sequencer step to run next (0-7): even steps clock lengths, 2 and 6 the sweep.
    frame_step: u8,
    sweep: Sweep,
    playback: WavePlayback,
    /// PyBoy mode: PyBoy's own frame sequencer (see `PyBoySequencer`); all zero in the hardware
    /// timing.
    pub pyboy_sequencer: PyBoySequencer,
    /// Off is PyBoy's `sound_emulated=False` (pyboy/core/sound.py `Sound.get`/`set`): every
    /// sound register and wave RAM reads 0 and writes are lost. A setting, as rendering is: not
    /// part of a saved state, and a state loads the same either way.
    pub registers_emulated: bool,
}

/// PyBoy 2.8.1's frame sequencer, which the PyBoy-compatible mode follows. PyBoy does not step it
/// on DIV's falling edges but on its own 8,192-cycle count (pyboy/core/sound.py `tick`,
/// `cycles_target_512Hz`), which starts again where the APU is powered on (`set`, NR52) and where
/// DIV is written (`reset_apu_div`); only after a DIV write do the two agree. The bus steps the
/// sequencer where the system counter plus `phase` crosses a multiple of 8,192.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PyBoySequencer {
    /// Added to the system counter (mod 2^16) to find the sequencer's steps.
    pub phase: u16,
    /// PyBoy's `div_apu_counter` after a power-on while DIV's bit 4 was high following a DIV
    /// write (pyboy/core/mb.py:797-819): 2, its first step is skipped; 1, the next one steps from
    /// the start (PyBoy holds `div_apu` at 1 across both, which the steps' parity shows meanwhile).
    pub skip: u8,
    /// PyBoy's `apu_poweron_after_div_write`: set by a DIV write while bit 4 is high, cleared by
    /// a write to NR14.
    pub after_div_write: bool,
}

/// Where channel 3 is in its 32 samples, kept by bus time: its timer moves it on every
/// 2 x (2048 - frequency) T-cycles, and each move reads the byte of wave RAM holding the new
/// sample. On the DMG the CPU reaches wave RAM while the channel plays only right after such a
/// read (it then gets that byte; otherwise reads give 0xFF and writes are lost), and a trigger
/// just before one rewrites the start of wave RAM (dmg_sound 09, 10, 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct WavePlayback {
    /// The sample (0-31) read last.
    position: u8,
    /// Bus cycle of that read (`NEVER` before the first one after a trigger).
    last_read: u64,
    /// Bus cycle of the next read.
    next_read: u64,
}

const NEVER: u64 = u64::MAX;
/// The timing constants are PyBoy 2.8.1's (its `WaveChannel`), which passes dmg_sound 09, 10 and
/// 12 with CPU accesses timed as ours (mem_timing passes on both). Bus time at an access is a
/// multiple of 4, so only their offsets against each other matter. Checked by hand (2026-12-04):
/// moving any one of them by a T-cycle either way fails at least one of the three ROMs.
/// T-cycles from the trigger's write to the end of the channel's first timer period.
const WAVE_TRIGGER_DELAY: u64 = 5;
/// The CPU reaches wave RAM when its access comes this many T-cycles after the channel's read.
const WAVE_ACCESS_LAG: u64 = 1;
/// A trigger corrupts wave RAM when the channel's next read comes this many T-cycles after it.
const WAVE_TRIGGER_LEAD: u64 = 1;

impl Default for WavePlayback {
    fn default() -> Self {
        WavePlayback {
            position: 0,
            last_read: NEVER,
            next_read: NEVER,
        }
    }
}

/// Channel 1's frequency sweep unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sweep {
    /// The frequency the sweep computes from (copied from NR13/NR14 at the trigger).
    shadow: u16,
    /// Sweep clocks left until the next calculation.
    timer: u8,
    /// Set at the trigger when the period or the shift is non-zero.
    enabled: bool,
    /// A calculation in negate mode since the trigger.
    negated: bool,
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
            sweep: Sweep::default(),
            playback: WavePlayback::default(),
            pyboy_sequencer: PyBoySequencer::default(),
            registers_emulated: true,
        }
    }

    /// As PyBoy 2.8.1's own boot ROM leaves the APU (read from PyBoy at 0x0100): NR10 holds
    /// 0x13 (it reads 0x93), channel 1 is off again, and wave RAM holds the 0xFF bytes PyBoy
    /// starts it with (core/sound.py `WaveChannel`).
    /// Its boot ROM powers the APU on at T-cycle 297,944 (the same for every cartridge), where
    /// PyBoy's sequencer count starts: by 0x0100 (T-cycle 4,507,360, system counter 0xC6E0) it
    /// has stepped 513 times, and steps again where the counter is 3,032 past a multiple of 8,192.
    pub fn pyboy_power_on(&mut self) {
        self.registers[0x00] = 0x13;
        self.silence_channel1();
        self.wave = [0xFF; 16];
        self.frame_step = (513 % 8) as u8;
        self.pyboy_sequencer = PyBoySequencer {
            phase: 8192 - 3032,
            ..PyBoySequencer::default()
        };
    }

    /// Channel 1 off (NR52 0xF0), as a boot ROM that plays no start-up sound on the APU leaves it.
    pub fn silence_channel1(&mut self) {
        self.enabled[0] = false;
    }

    pub fn powered(&self) -> bool {
        self.powered
    }

    /// PyBoy mode: the APU was just powered on at system counter `counter` (PyBoy's moment of the
    /// NR52 write): PyBoy's sequencer steps 8,192 T-cycles later, or, after a DIV write while
    /// DIV's bit 4 is high now, on DIV's next falling edge but one.
    pub fn pyboy_powered_on(&mut self, counter: u16) {
        let sequencer = &mut self.pyboy_sequencer;
        if sequencer.after_div_write && counter & 0x1000 != 0 {
            sequencer.phase = 0;
            sequencer.skip = 2;
            self.frame_step = 1;
        } else {
            sequencer.phase = (8192 - counter % 8192) % 8192;
        }
    }

    /// T-cycles between two of channel 3's sample reads at its current frequency.
    fn wave_period(&self) -> u64 {
        let frequency = self.registers[0x0D] as u64 | (self.registers[0x0E] as u64 & 7) << 8;
        2 * (2048 - frequency)
    }

    /// Channel 3's playback at `now`, its reads since the last look counted (the period is the
    /// one in the registers, which only change after `wave_catch_up`).
    fn wave_at(&self, now: u64) -> WavePlayback {
        let mut playback = self.playback;
        if playback.next_read <= now {
            let period = self.wave_period();
            let reads = (now - playback.next_read) / period + 1;
            playback.position = ((playback.position as u64 + reads) % 32) as u8;
            playback.last_read = playback.next_read + (reads - 1) * period;
            playback.next_read = playback.last_read + period;
        }
        playback
    }

    fn wave_catch_up(&mut self, now: u64) {
        if self.enabled[2] {
            self.playback = self.wave_at(now);
        }
    }

    /// The wave RAM byte the CPU reaches at `now` while channel 3 plays, if any.
    fn wave_byte_in_reach(&self, now: u64) -> Option<usize> {
        let playback = self.wave_at(now);
        (playback.last_read != NEVER && now.wrapping_sub(playback.last_read) == WAVE_ACCESS_LAG)
            .then_some(playback.position as usize / 2)
    }

    /// Channel 3 triggered at `now` (`was_on`: it was playing).
    fn wave_trigger(&mut self, now: u64, was_on: bool) {
        if was_on {
            // DMG: a trigger just before a read rewrites wave RAM's first byte with the byte
            // about to be read, or its first four with the aligned four holding it.
            let playback = self.wave_at(now);
            if playback.next_read == now + WAVE_TRIGGER_LEAD {
                let byte = ((playback.position as usize + 1) % 32) / 2;
                if byte < 4 {
                    self.wave[0] = self.wave[byte];
                } else {
                    let start = byte & !3;
                    self.wave.copy_within(start..start + 4, 0);
                }
            }
        }
        self.playback = WavePlayback {
            position: 0,
            last_read: NEVER,
            next_read: now + self.wave_period() + WAVE_TRIGGER_DELAY,
        };
    }

    fn sweep_period(&self) -> u8 {
        (self.registers[0x00] >> 4) & 7
    }

    /// The sweep's next frequency from the shadow; above 2047 switches channel 1 off.
    fn sweep_calculate(&mut self) -> u16 {
        let shift = self.registers[0x00] & 7;
        let delta = self.sweep.shadow >> shift;
        let next = if self.registers[0x00] & 0x08 != 0 {
            self.sweep.negated = true;
            self.sweep.shadow - delta
        } else {
            self.sweep.shadow + delta
        };
        if next > 2047 {
            self.enabled[0] = false;
        }
        next
    }

    fn sweep_trigger(&mut self) {
        let period = self.sweep_period();
        let shift = self.registers[0x00] & 7;
        self.sweep = Sweep {
            shadow: self.registers[0x03] as u16 | (self.registers[0x04] as u16 & 7) << 8,
            timer: if period == 0 { 8 } else { period },
            enabled: period != 0 || shift != 0,
            negated: false,
        };
        if shift != 0 {
            self.sweep_calculate();
        }
    }

    fn sweep_clock(&mut self) {
        self.sweep.timer = self.sweep.timer.saturating_sub(1);
        if self.sweep.timer != 0 {
            return;
        }
        let period = self.sweep_period();
        self.sweep.timer = if period == 0 { 8 } else { period };
        if !self.sweep.enabled || period == 0 {
            return;
        }
        let next = self.sweep_calculate();
        if next <= 2047 && self.registers[0x00] & 7 != 0 {
            self.sweep.shadow = next;
            self.registers[0x03] = next as u8;
            self.registers[0x04] = self.registers[0x04] & !7 | (next >> 8) as u8;
            self.sweep_calculate();
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

    /// Whether channel 3 plays (wave RAM is then closed to the CPU but at its sample reads).
    pub fn wave_playing(&self) -> bool {
        self.registers_emulated && self.enabled[2]
    }

    /// `now`: bus time (wave RAM's reach while channel 3 plays depends on it).
    pub fn read(&self, addr: u16, now: u64) -> u8 {
        if !self.registers_emulated {
            return 0;
        }
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
            _ if self.enabled[2] => match self.wave_byte_in_reach(now) {
                Some(byte) => self.wave[byte],
                None => 0xFF,
            },
            _ => self.wave[(addr - 0xFF30) as usize],
        }
    }

    pub fn write(&mut self, addr: u16, value: u8, now: u64) {
        if !self.registers_emulated {
            return;
        }
        match addr {
            0xFF26 => {
                let power = value & 0x80 != 0;
                if self.powered && !power {
                    self.registers[..0x16].fill(0);
                    self.enabled = [false; 4];
                    self.sweep = Sweep::default();
                    self.pyboy_sequencer.skip = 0;
                } else if !self.powered && power {
                    self.frame_step = 0;
                }
                self.powered = power;
            }
            0xFF30..=0xFF3F if self.enabled[2] => {
                if let Some(byte) = self.wave_byte_in_reach(now) {
                    self.wave[byte] = value;
                }
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
                if channel == 2 {
                    self.wave_catch_up(now); // at the frequency before this write
                }
                let before = self.registers[index];
                self.registers[index] = value;
                if channel >= 4 {
                    return;
                }
                match field {
                    1 => self.load_length(channel, value),
                    // Negate mode cleared after a subtraction since the trigger.
                    0 if channel == 0 && self.sweep.negated && value & 0x08 == 0 => {
                        self.enabled[0] = false
                    }
                    2 | 0 if !self.dac_on(channel) => self.enabled[channel] = false,
                    4 => self.write_control(channel, before, value, now),
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// NRx4: length enable and trigger.
    fn write_control(&mut self, channel: usize, before: u8, value: u8, now: u64) {
        let was_on = self.enabled[channel];
        let length_on = value & 0x40 != 0;
        // The sequencer's next step clocks no length: enabling a counter takes one off now.
        let between_clocks = self.frame_step % 2 == 1;
        if between_clocks && before & 0x40 == 0 && length_on && self.length[channel] > 0 {
            self.length[channel] -= 1;
            if self.length[channel] == 0 && value & 0x80 == 0 {
                self.enabled[channel] = false;
            }
        }
        if value & 0x80 != 0 {
            if self.length[channel] == 0 {
                self.length[channel] = length_max(channel) - u16::from(between_clocks && length_on);
            }
            self.enabled[channel] = self.dac_on(channel);
            if channel == 0 {
                self.sweep_trigger();
            }
            if channel == 2 {
                self.wave_trigger(now, was_on);
            }
        }
    }

    fn load_length(&mut self, channel: usize, value: u8) {
        self.length[channel] = if channel == 2 {
            256 - value as u16
        } else {
            64 - (value & 0x3F) as u16
        };
    }

    /// `steps` falling edges of DIV bit 4 at once. Once no length counter runs and the sweep is
    /// off, further steps only move the phase.
    pub fn frame_sequencer_steps(&mut self, mut steps: u64) {
        if !self.powered {
            return; // the sequencer restarts at step 0 when powered on
        }
        while steps > 0 && self.pyboy_sequencer.skip > 0 {
            steps -= 1;
            self.pyboy_sequencer.skip -= 1;
            if self.pyboy_sequencer.skip == 0 {
                self.frame_step = 0;
                self.frame_sequencer_step();
            }
        }
        for done in 0..steps {
            if self.idle() {
                self.frame_step = ((self.frame_step as u64 + (steps - done)) & 7) as u8;
                return;
            }
            self.frame_sequencer_step();
        }
    }

    /// Whether a sequencer step can change anything but its own phase.
    fn idle(&self) -> bool {
        let lengths_run = (0..4)
            .any(|channel| self.registers[channel * 5 + 4] & 0x40 != 0 && self.length[channel] > 0);
        !lengths_run && !self.sweep.enabled
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
        if self.frame_step == 2 || self.frame_step == 6 {
            self.sweep_clock();
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
        w.u16(self.sweep.shadow);
        w.u8(self.sweep.timer);
        w.bool(self.sweep.enabled);
        w.bool(self.sweep.negated);
        w.u8(self.playback.position);
        w.u64(self.playback.last_read);
        w.u64(self.playback.next_read);
        w.u16(self.pyboy_sequencer.phase);
        w.u8(self.pyboy_sequencer.skip);
        w.bool(self.pyboy_sequencer.after_div_write);
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
        self.sweep = Sweep {
            shadow: r.u16()?,
            timer: r.u8()?,
            enabled: r.bool()?,
            negated: r.bool()?,
        };
        if self.sweep.shadow > 2047 || self.sweep.timer > 8 {
            return Err(StateError("APU sweep out of range".into()));
        }
        self.playback = WavePlayback {
            position: r.u8()?,
            last_read: r.u64()?,
            next_read: r.u64()?,
        };
        if self.playback.position > 31 {
            return Err(StateError("APU wave position out of range".into()));
        }
        self.pyboy_sequencer = PyBoySequencer {
            phase: r.u16()?,
            skip: r.u8()?,
            after_div_write: r.bool()?,
        };
        if self.pyboy_sequencer.phase >= 8192 || self.pyboy_sequencer.skip > 2 {
            return Err(StateError("APU sequencer phase out of range".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyboy_power_on_is_pyboy_boot_roms_state() {
        // Read from PyBoy 2.8.1 at 0x0100: NR10 0x93, NR52 0xF0, wave RAM sixteen 0xFF.
        let mut apu = Apu::new();
        assert_eq!((apu.read(0xFF10, 0), apu.read(0xFF26, 0)), (0x80, 0xF1));
        apu.pyboy_power_on();
        assert_eq!((apu.read(0xFF10, 0), apu.read(0xFF26, 0)), (0x93, 0xF0));
        assert!((0xFF30..0xFF40).all(|addr| apu.read(addr, 0) == 0xFF));
    }

    /// PyBoy's sequencer count starts again at a power-on (pyboy/core/sound.py `set`, NR52): the
    /// phase puts the next step 8,192 T-cycles after the counter given.
    #[test]
    fn pyboy_power_on_starts_the_sequencer_count_there() {
        for counter in [0u16, 1, 1760, 4096, 8191, 0xC6E0, 0xFFFF] {
            let mut apu = Apu::new();
            apu.pyboy_powered_on(counter);
            let sequencer = apu.pyboy_sequencer;
            assert_eq!((sequencer.skip, sequencer.after_div_write), (0, false));
            assert!(sequencer.phase < 8192);
            assert_eq!(
                counter.wrapping_add(sequencer.phase) % 8192,
                0,
                "counter {counter}"
            );
        }
    }

    /// A power-on after a DIV write while DIV's bit 4 is high, and with it high again
    /// (pyboy/core/mb.py:797-819, sound.py `_tick_frame_sequencer` with `div_apu_counter` 2):
    /// PyBoy keeps to DIV's edges, holds `div_apu` at 1 (a length enabled then takes the extra
    /// clock of an odd step), does nothing at the first step and clocks lengths at the second.
    /// The hardware's sequence (a power-on at step 0, lengths at the first step) would leave
    /// two after the enable and none after two steps.
    #[test]
    fn pyboy_power_on_after_a_div_write_skips_a_step() {
        let mut apu = Apu::new();
        apu.write(0xFF26, 0x00, 0);
        apu.write(0xFF26, 0x80, 0);
        apu.pyboy_sequencer.after_div_write = true;
        apu.pyboy_powered_on(0x1000);
        assert_eq!(
            apu.pyboy_sequencer,
            PyBoySequencer {
                phase: 0,
                skip: 2,
                after_div_write: true
            }
        );
        apu.write(0xFF17, 0xF0, 0); // DAC on
        apu.write(0xFF16, 0x3E, 0); // length 2
        apu.write(0xFF19, 0x80, 0); // trigger, length not counting
        apu.write(0xFF19, 0x40, 0); // length enabled at an odd step: 1 left
        assert_eq!(apu.length[1], 1);
        apu.frame_sequencer_steps(1); // skipped
        assert_eq!((apu.length[1], apu.read(0xFF26, 0) & 0x02), (1, 0x02));
        apu.frame_sequencer_steps(1); // the first step: lengths clocked
        assert_eq!((apu.length[1], apu.read(0xFF26, 0) & 0x02), (0, 0));
        assert_eq!(apu.pyboy_sequencer.skip, 0);
        // Powering off forgets a pending skip.
        apu.pyboy_powered_on(0x1000);
        apu.write(0xFF26, 0x00, 0);
        assert_eq!(apu.pyboy_sequencer.skip, 0);
    }

    #[test]
    fn pyboy_sequencer_is_saved() {
        let mut apu = Apu::new();
        apu.pyboy_sequencer = PyBoySequencer {
            phase: 5160,
            skip: 1,
            after_div_write: true,
        };
        let mut w = crate::state::StateWriter::new();
        apu.save(&mut w);
        let state = w.finish();
        let mut loaded = Apu::new();
        loaded
            .load(&mut crate::state::StateReader::new(&state).unwrap())
            .unwrap();
        assert_eq!(loaded.pyboy_sequencer, apu.pyboy_sequencer);
    }

    #[test]
    fn read_masks_and_power_off() {
        let mut apu = Apu::new();
        apu.write(0xFF11, 0x00, 0);
        assert_eq!(
            apu.read(0xFF11, 0),
            0x3F,
            "duty bits read back, length bits read 1"
        );
        assert_eq!(apu.read(0xFF13, 0), 0xFF, "frequency low is write-only");
        apu.write(0xFF26, 0x00, 0);
        assert_eq!(apu.read(0xFF26, 0), 0x70);
        apu.write(0xFF12, 0xF0, 0);
        assert_eq!(apu.read(0xFF12, 0), 0x00, "writes are ignored while off");
        apu.write(0xFF30, 0x5A, 0);
        assert_eq!(apu.read(0xFF30, 0), 0x5A, "wave RAM stays accessible");
    }

    #[test]
    fn registers_not_emulated_read_zero_and_lose_writes() {
        // PyBoy 2.8.1 with sound_emulated=False: 0xFF10-0xFF3F read 0 (NR52, the unused
        // 0xFF27-0xFF2F and wave RAM too) and a write changes nothing, even once switched back.
        let mut apu = Apu::new();
        apu.registers_emulated = false;
        assert!((0xFF10..0xFF40).all(|addr| apu.read(addr, 0) == 0));
        let before = apu.clone();
        for addr in 0xFF10..0xFF40 {
            apu.write(addr, 0x5A, 0);
        }
        apu.write(0xFF26, 0x00, 0);
        assert_eq!(apu, before);
        apu.registers_emulated = true;
        assert_eq!((apu.read(0xFF10, 0), apu.read(0xFF26, 0)), (0x80, 0xF1));
    }

    #[test]
    fn length_counter_switches_channel_off() {
        let mut apu = Apu::new();
        apu.write(0xFF17, 0xF0, 0); // DAC on
        apu.write(0xFF16, 0x3E, 0); // length 2
        apu.write(0xFF19, 0xC0, 0); // trigger with length enabled
        assert_eq!(apu.read(0xFF26, 0) & 0x02, 0x02);
        apu.frame_sequencer_step(); // step 0 clocks length: 1 left
        assert_eq!(apu.read(0xFF26, 0) & 0x02, 0x02);
        apu.frame_sequencer_step(); // step 1: no length clock
        apu.frame_sequencer_step(); // step 2: 0 left
        assert_eq!(apu.read(0xFF26, 0) & 0x02, 0);
    }

    #[test]
    fn dac_off_disables_channel() {
        let mut apu = Apu::new();
        apu.write(0xFF1A, 0x80, 0);
        apu.write(0xFF1E, 0x80, 0);
        assert_eq!(apu.read(0xFF26, 0) & 0x04, 0x04);
        apu.write(0xFF1A, 0x00, 0);
        assert_eq!(apu.read(0xFF26, 0) & 0x04, 0);
    }
}
