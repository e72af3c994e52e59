//! SB/SC (0xFF01/0xFF02) with no link partner: a transfer on the internal clock shifts out SB over
//! 8 bits at 8192 Hz, shifts in 1s, then requests the serial interrupt. Sent bytes are kept, since
//! test ROMs (blargg) print their results through the port. The bus completes the transfer when
//! bus time reaches `completes_at`.
//!
//! The 8192 Hz clock is not the transfer's own: each bit moves on a falling edge of the system
//! counter's bit 8 (the counter DIV shows the high byte of), so the eight bits take 3,588 to
//! 4,096 T-cycles depending on where the counter stands when the transfer starts, and resetting
//! DIV moves the edges (mooneye's serial/boot_sclk_align checks this against the boot ROM's
//! counter). The PyBoy-compatible timing takes PyBoy 2.8.1's 1,024 T-cycles (core/serial.py:
//! `8 * CYCLES_8192HZ`, with `CYCLES_8192HZ = 128`) from its moment of the write.

use crate::interrupts;
use crate::state::{StateError, StateReader, StateWriter};

/// PyBoy 2.8.1's transfer length (core/serial.py `set_SC`: 8 bits of 128 T-cycles each).
const PYBOY_CYCLES_PER_TRANSFER: u64 = 1024;
/// T-cycles between two falling edges of the system counter's bit 8.
const CYCLES_PER_BIT: u64 = 512;
/// From the eighth edge to the end of the transfer: one M-cycle, the delay that makes
/// serial/boot_sclk_align's interrupt land where the hardware's does (without it, one M-cycle early).
const END_DELAY: u64 = 4;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Serial {
    data: u8,
    control: u8,
    /// Bus cycle at which the running transfer ends.
    completes_at: Option<u64>,
    pub output: Vec<u8>,
    /// PyBoy 2.8.1 compatibility (configuration): a transfer takes 1,024 T-cycles from its start.
    pub pyboy: bool,
}

impl Serial {
    /// `now`: bus time, after `sync`. Mid-transfer, SB holds the bits not yet sent, shifted up
    /// under the 1s that came in.
    pub fn read(&self, addr: u16, now: u64) -> u8 {
        if addr != 0xFF01 {
            return self.control | 0x7E;
        }
        if self.pyboy {
            // PyBoy 2.8.1's disconnected link cable: SB always reads 0xFF (core/serial.py).
            return 0xFF;
        }
        match self.completes_at {
            Some(end) => {
                let sent = 8 - Self::bits_left(end, now);
                ((self.data as u16) << sent | ((1u16 << sent) - 1)) as u8
            }
            _ => self.data,
        }
    }

    /// `counter`: the system counter at `now` (the timer caught up).
    pub fn write(&mut self, addr: u16, value: u8, now: u64, counter: u16) {
        if addr == 0xFF01 {
            self.data = value;
        } else {
            self.control = value & 0x81;
            if value & 0x81 == 0x81 {
                self.output.push(self.data);
                self.completes_at = Some(if self.pyboy {
                    now + PYBOY_CYCLES_PER_TRANSFER
                } else {
                    // The first bit moves at the next falling edge, the others 512 apart; the
                    // transfer ends (SC, SB, the interrupt) one M-cycle after the eighth.
                    let to_edge = CYCLES_PER_BIT - counter as u64 % CYCLES_PER_BIT;
                    now + to_edge + 7 * CYCLES_PER_BIT + END_DELAY
                });
            }
        }
    }

    /// DIV was written at `now` with the system counter at `counter` (before it became 0): if its
    /// bit 8 was set, that fall moves a bit; the bits left then follow the new counter's edges.
    pub fn counter_reset(&mut self, now: u64, counter: u16) {
        let Some(end) = self.completes_at else {
            return;
        };
        if self.pyboy {
            return;
        }
        let left = Self::bits_left(end, now).saturating_sub(u64::from(counter & 0x100 != 0));
        self.completes_at = Some(now + left * CYCLES_PER_BIT + END_DELAY);
    }

    /// Bits of a transfer ending at `end` (`END_DELAY` after its last edge, the edges 512
    /// T-cycles apart) still to move after `now`.
    fn bits_left(end: u64, now: u64) -> u64 {
        end.saturating_sub(END_DELAY)
            .saturating_sub(now)
            .div_ceil(CYCLES_PER_BIT)
            .min(8)
    }

    pub fn next_event(&self) -> Option<u64> {
        self.completes_at
    }

    /// Finishes the transfer if bus time has reached its end.
    pub fn sync(&mut self, now: u64, interrupt_flags: &mut u8) {
        if let Some(end) = self.completes_at {
            if now >= end {
                self.completes_at = None;
                self.data = 0xFF;
                self.control &= 0x7F;
                *interrupt_flags |= interrupts::SERIAL;
            }
        }
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.u8(self.data);
        w.u8(self.control);
        w.bool(self.completes_at.is_some());
        w.u64(self.completes_at.unwrap_or(0));
        w.bytes(&self.output);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        self.data = r.u8()?;
        self.control = r.u8()? & 0x81;
        let running = r.bool()?;
        let end = r.u64()?;
        self.completes_at = running.then_some(end);
        self.output = r.bytes_vec()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pyboy_transfer_completes_after_1024_cycles() {
        // PyBoy 2.8.1 (core/serial.py `set_SC`): the transfer ends 8 x 128 T-cycles after the
        // write; measured there on blargg's cpu_instrs, SC's bit 7 is clear 1,044 T-cycles after it.
        let mut s = Serial::default();
        let mut flags = 0;
        s.pyboy = true;
        s.write(0xFF01, b'P', 100, 0);
        s.write(0xFF02, 0x81, 100, 0);
        assert_eq!(s.output, b"P");
        assert_eq!(s.next_event(), Some(1124));
        s.sync(1123, &mut flags);
        assert_eq!(flags, 0);
        assert_eq!(s.read(0xFF02, 1123) & 0x80, 0x80);
        s.sync(1124, &mut flags);
        assert_eq!(flags, interrupts::SERIAL);
        assert_eq!(s.read(0xFF01, 1124), 0xFF);
        assert_eq!(s.read(0xFF02, 1124) & 0x80, 0);
        assert_eq!(s.next_event(), None);
    }

    #[test]
    fn pyboy_sb_reads_0xff_whatever_was_written() {
        // PyBoy 2.8.1's disconnected cable (core/serial.py): SB starts at 0xFF and `set_SB`
        // stores 0xFF; the written byte still goes out (and into `output`).
        let mut s = Serial {
            pyboy: true,
            ..Serial::default()
        };
        assert_eq!(s.read(0xFF01, 0), 0xFF);
        s.write(0xFF01, 0x42, 8, 0);
        assert_eq!(s.read(0xFF01, 8), 0xFF);
        s.write(0xFF02, 0x81, 12, 0);
        assert_eq!(s.output, [0x42]);
        let hardware = Serial::default();
        assert_eq!(
            hardware.read(0xFF01, 0),
            0x00,
            "the DMG's SB after its boot ROM"
        );
    }
}

#[cfg(test)]
mod edge_tests {
    use super::*;

    /// The rule stepped one M-cycle at a time: a bit moves whenever the system counter's bit 8
    /// falls, counting up or reset to 0 by a DIV write (which the timer applies after the write's
    /// M-cycle has counted, as the bus does); the transfer ends one M-cycle after the eighth.
    /// Returns the bus cycle at which it ends and SB after each M-cycle.
    fn stepped(data: u8, start: u64, counter: u16, div_reset_at: Option<u64>) -> (u64, Vec<u8>) {
        let (mut now, mut counter, mut sent, mut sb) = (start, counter, 0u32, data);
        let mut seen = Vec::new();
        let fall = |before: u16, after: u16, sent: &mut u32, sb: &mut u8| {
            if before & 0x100 != 0 && after & 0x100 == 0 && *sent < 8 {
                *sent += 1;
                *sb = *sb << 1 | 1;
            }
        };
        loop {
            now += 4;
            let before = counter;
            counter = counter.wrapping_add(4);
            fall(before, counter, &mut sent, &mut sb);
            if div_reset_at == Some(now) {
                fall(counter, 0, &mut sent, &mut sb);
                counter = 0;
            }
            seen.push(sb);
            if sent == 8 {
                return (now + 4, seen);
            }
        }
    }

    fn started(data: u8, start: u64, counter: u16) -> Serial {
        let mut serial = Serial::default();
        serial.write(0xFF01, data, start, counter);
        serial.write(0xFF02, 0x81, start, counter);
        serial
    }

    #[test]
    fn bits_move_on_the_falling_edges_of_counter_bit_8() {
        // Every phase of the counter against the 512-cycle edge period, and two wraps.
        let counters = (0..512u16).step_by(4).chain([0xFFFC, 0xFE00, 0xABCC]);
        for counter in counters {
            let start = 10_000;
            let (end, seen) = stepped(0xA5, start, counter, None);
            let serial = started(0xA5, start, counter);
            assert_eq!(serial.next_event(), Some(end), "counter {counter:#06x}");
            assert!((start + 3588..=start + 4100).contains(&end));
            for (i, &sb) in seen.iter().enumerate() {
                let now = start + 4 * (i as u64 + 1);
                if now < end {
                    assert_eq!(
                        serial.read(0xFF01, now),
                        sb,
                        "counter {counter:#06x} at +{}",
                        now - start
                    );
                }
            }
        }
    }

    #[test]
    fn a_div_reset_moves_the_edges() {
        for counter in [0u16, 0x80, 0x100, 0x1FC, 0x17C] {
            for reset_after in [4u64, 300, 1024, 2052, 3000, 3584] {
                let start = 5_000;
                let reset_at = start + reset_after;
                let (end, _) = stepped(0x3C, start, counter, Some(reset_at));
                let mut serial = started(0x3C, start, counter);
                let mut flags = 0;
                serial.sync(reset_at, &mut flags);
                if flags != 0 {
                    assert!(
                        end <= reset_at,
                        "ended early: counter {counter:#x}, reset +{reset_after}"
                    );
                    continue;
                }
                serial.counter_reset(reset_at, counter.wrapping_add(reset_after as u16));
                assert_eq!(
                    serial.next_event(),
                    Some(end),
                    "counter {counter:#x}, reset +{reset_after}"
                );
            }
        }
    }
}
