//! OAM DMA (0xFF46): 160 bytes copied from `source << 8` into OAM, one per M-cycle.
//!
//! Timing (mooneye `oam_dma_start`/`oam_dma_timing`/`oam_dma_restart`), counting the M-cycle of
//! the write to 0xFF46 as M=0: M=1 is a setup cycle (nothing happens, OAM is still usable), byte
//! i is copied in M=2+i, so the transfer occupies M=2..=161 and OAM is usable again from M=162.
//! A write while a transfer runs restarts it, but the old transfer keeps going (and keeps the bus)
//! through M=1 of the new one, so there is no free cycle in between.
//!
//! Bus conflicts (DMG): the DMA drives one of the two CPU-side buses for the whole transfer: the
//! VRAM bus when the source is 0x8000..=0x9FFF, otherwise the external bus (cartridge ROM/RAM
//! and work RAM, including the 0xE000+ echo). While it does, a CPU read on that bus returns the
//! byte the DMA moves in that cycle, and a CPU write on it is lost; OAM (0xFE00..=0xFEFF) reads
//! 0xFF and ignores writes. The other bus, the I/O registers and HRAM work normally.
//!
//! The bus copies lazily: `next_due` says which bytes should have been copied by a given cycle,
//! and the bus copies them before anything can observe OAM (a CPU access or a PPU event).

use crate::state::{StateError, StateReader, StateWriter};

pub const LENGTH: u16 = 160;

/// Which CPU-side bus a DMA source address is on (DMG).
#[inline]
pub fn is_vram_bus(addr: u16) -> bool {
    (0x8000..0xA000).contains(&addr)
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OamDma {
    /// Last value written to 0xFF46 (reads return it).
    pub register: u8,
    source: u16,
    /// Bus cycle at which byte 0 is copied; byte i at `first_copy + 4 i`.
    first_copy: u64,
    copied: u16,
    active: bool,
    /// Start of the bus-busy window: `first_copy`, or earlier when a restart continued a running
    /// transfer (the old one owns the bus until the new one's first copy).
    busy_from: u64,
    /// The last byte of an interrupted transfer, still copied in the restart's setup cycle:
    /// (source address, OAM index, bus cycle), when pending.
    tail: Option<(u16, u8, u64)>,
}

impl OamDma {
    /// A write to 0xFF46 during the M-cycle that ends at bus cycle `now` (bytes due by `now`
    /// must already have been copied).
    /// A transfer is requested or running.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.active
    }

    pub fn request(&mut self, value: u8, now: u64) {
        let continuing = self.active && self.first_copy <= now + 4;
        self.tail = None;
        if continuing {
            // The running transfer still copies its next byte in the setup cycle of the new one.
            let next = now + 4;
            let index = (next - self.first_copy) / 4;
            if self.first_copy + 4 * self.copied as u64 == next && index < LENGTH as u64 {
                self.tail = Some((self.source.wrapping_add(index as u16), index as u8, next));
            }
        }
        self.register = value;
        self.source = (value as u16) << 8;
        self.first_copy = now + 8;
        self.busy_from = if continuing {
            self.busy_from.min(now + 4)
        } else {
            self.first_copy
        };
        self.copied = 0;
        self.active = true;
    }

    /// Whether the CPU is locked out of OAM at bus cycle `now`.
    #[inline]
    pub fn blocks_oam(&self, now: u64) -> bool {
        let (start, end) = self.busy_window();
        now >= start && now < end
    }

    /// [start, end) in bus cycles during which the DMA owns the bus (empty when idle).
    pub fn busy_window(&self) -> (u64, u64) {
        if self.active {
            (self.busy_from, self.first_copy + 4 * LENGTH as u64)
        } else {
            (0, 0)
        }
    }

    /// The source address the DMA puts on its bus in the M-cycle ending at `now` (inside the busy
    /// window): what a conflicting CPU read returns.
    pub fn bus_address(&self, now: u64) -> u16 {
        if now < self.first_copy {
            if let Some((addr, _, _)) = self.tail {
                return addr;
            }
            return self.source;
        }
        let index = ((now - self.first_copy) / 4).min(LENGTH as u64 - 1);
        self.source.wrapping_add(index as u16)
    }

    /// The next (source address, OAM index) due by cycle `now`, marking it copied.
    #[inline]
    pub fn next_due(&mut self, now: u64) -> Option<(u16, usize)> {
        if let Some((addr, index, at)) = self.tail {
            if at <= now {
                self.tail = None;
                return Some((addr, index as usize));
            }
        }
        if !self.active || self.first_copy + 4 * self.copied as u64 > now {
            return None;
        }
        let item = (self.source.wrapping_add(self.copied), self.copied as usize);
        self.copied += 1;
        if self.copied == LENGTH {
            self.active = false;
        }
        Some(item)
    }

    /// What repeated `next_due(now)` calls would give, as one run when they are consecutive bytes
    /// of the current transfer: (source address, OAM index, count), all marked copied. `None`
    /// while a restart's tail byte is pending (take it with `next_due`) or nothing is due.
    pub fn due_run(&mut self, now: u64) -> Option<(u16, usize, usize)> {
        if self.tail.is_some() || !self.active || self.first_copy + 4 * self.copied as u64 > now {
            return None;
        }
        let due = ((now - self.first_copy) / 4 + 1).min(LENGTH as u64) as u16;
        let run = (
            self.source.wrapping_add(self.copied),
            self.copied as usize,
            (due - self.copied) as usize,
        );
        self.copied = due;
        if due == LENGTH {
            self.active = false;
        }
        Some(run)
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.u8(self.register);
        w.u16(self.source);
        w.u64(self.first_copy);
        w.u16(self.copied);
        w.bool(self.active);
        w.u64(self.busy_from);
        let (addr, index, at) = self.tail.unwrap_or((0, 0, 0));
        w.bool(self.tail.is_some());
        w.u16(addr);
        w.u8(index);
        w.u64(at);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        self.register = r.u8()?;
        self.source = r.u16()?;
        self.first_copy = r.u64()?;
        self.copied = r.u16()?;
        self.active = r.bool()?;
        self.busy_from = r.u64()?;
        let has_tail = r.bool()?;
        let tail = (r.u16()?, r.u8()?, r.u64()?);
        self.tail = has_tail.then_some(tail);
        if self.copied > LENGTH || tail.1 as u16 >= LENGTH {
            return Err(StateError("OAM DMA progress out of range".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_runs_give_what_single_bytes_give() {
        // Random syncs and restarts: draining with `due_run` (and `next_due` for a restart's
        // tail) copies the same bytes to the same places as `next_due` alone, and leaves the
        // same state.
        let mut seed = 0x243F_6A88_85A3_08D3u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let (mut single, mut runs) = (OamDma::default(), OamDma::default());
        let mut now = 0u64;
        let mut restarts = 0;
        for _ in 0..5000 {
            now += 4 * (1 + next(12));
            if next(40) == 0 {
                let value = next(256) as u8;
                single.request(value, now);
                runs.request(value, now);
                restarts += 1;
            }
            let mut by_single = Vec::new();
            while let Some((addr, index)) = single.next_due(now) {
                by_single.push((addr, index));
            }
            let mut by_runs = Vec::new();
            loop {
                if let Some((addr, index, count)) = runs.due_run(now) {
                    assert!(count > 0, "an empty run at cycle {now}");
                    by_runs.extend((0..count).map(|i| (addr + i as u16, index + i)));
                } else if let Some(one) = runs.next_due(now) {
                    by_runs.push(one);
                } else {
                    break;
                }
            }
            assert_eq!(by_runs, by_single, "at cycle {now}");
            assert_eq!(runs, single, "at cycle {now}");
        }
        assert!(restarts > 50);
    }

    #[test]
    fn setup_cycle_then_160_copies() {
        let mut d = OamDma::default();
        d.request(0xC1, 100);
        assert!(!d.blocks_oam(104), "M=1 is a setup cycle");
        assert!(d.blocks_oam(108));
        assert!(d.blocks_oam(100 + 4 * 161));
        assert!(!d.blocks_oam(100 + 4 * 162));
        assert_eq!(d.next_due(104), None);
        assert_eq!(d.next_due(108), Some((0xC100, 0)));
        assert_eq!(d.bus_address(108 + 4 * 5), 0xC105);
    }

    #[test]
    fn restart_keeps_the_bus_busy() {
        let mut d = OamDma::default();
        d.request(0x80, 0);
        while d.next_due(40).is_some() {}
        d.request(0xC0, 40);
        assert!(
            d.blocks_oam(44),
            "the old transfer still runs in the restart's setup cycle"
        );
        assert_eq!(d.next_due(44), Some((0x8009, 9)));
        assert_eq!(d.next_due(48), Some((0xC000, 0)));
        assert!(!d.blocks_oam(48 + 4 * 160));
    }
}
