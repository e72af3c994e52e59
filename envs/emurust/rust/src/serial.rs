//! SB/SC (0xFF01/0xFF02) with no link partner: a transfer on the internal clock shifts out SB over
//! 8 bits at 8192 Hz, shifts in 1s, then requests the serial interrupt. Sent bytes are kept, since
//! test ROMs (blargg) print their results through the port. The bus completes the transfer when
//! bus time reaches `completes_at`.

use crate::interrupts;
use crate::state::{StateError, StateReader, StateWriter};

const CYCLES_PER_TRANSFER: u64 = 4096;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Serial {
    data: u8,
    control: u8,
    /// Bus cycle at which the running transfer ends.
    completes_at: Option<u64>,
    pub output: Vec<u8>,
}

impl Serial {
    pub fn read(&self, addr: u16) -> u8 {
        if addr == 0xFF01 {
            self.data
        } else {
            self.control | 0x7E
        }
    }

    pub fn write(&mut self, addr: u16, value: u8, now: u64) {
        if addr == 0xFF01 {
            self.data = value;
        } else {
            self.control = value & 0x81;
            if value & 0x81 == 0x81 {
                self.output.push(self.data);
                self.completes_at = Some(now + CYCLES_PER_TRANSFER);
            }
        }
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
    fn transfer_completes_after_4096_cycles() {
        let mut s = Serial::default();
        let mut flags = 0;
        s.write(0xFF01, b'P', 100);
        s.write(0xFF02, 0x81, 100);
        assert_eq!(s.output, b"P");
        assert_eq!(s.next_event(), Some(4196));
        s.sync(4195, &mut flags);
        assert_eq!(flags, 0);
        assert_eq!(s.read(0xFF02) & 0x80, 0x80);
        s.sync(4196, &mut flags);
        assert_eq!(flags, interrupts::SERIAL);
        assert_eq!(s.read(0xFF01), 0xFF);
        assert_eq!(s.read(0xFF02) & 0x80, 0);
        assert_eq!(s.next_event(), None);
    }
}
