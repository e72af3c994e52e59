//! DIV/TIMA/TMA/TAC. TIMA counts falling edges of one bit of the 16-bit system counter (the same
//! counter whose top byte is DIV), so writes to DIV and TAC can tick TIMA, as on DMG hardware.
//!
//! TIMA overflow (mooneye `tima_reload`, `tima_write_reloading`, `tma_write_reloading`): in the
//! M-cycle of the overflowing increment TIMA reads 0x00, and a TIMA write in that cycle cancels
//! the reload. In the next M-cycle TIMA is loaded from TMA and the timer interrupt is requested;
//! during that reload cycle TIMA writes are ignored and TMA writes also land in TIMA.
//!
//! The bus runs the timer lazily: `advance` jumps many M-cycles at once with the same result as
//! that many calls of `tick`, and `m_cycles_until_interrupt` tells the bus when it must catch up.

use crate::interrupts;
use crate::state::{StateError, StateReader, StateWriter};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timer {
    /// The system counter, advanced every T-cycle; DIV is its high byte.
    pub counter: u16,
    tima: u8,
    tma: u8,
    tac: u8,
    /// 1 in the M-cycle where TIMA overflowed (it reads 0; the next cycle reloads), else 0.
    overflow_age: u8,
    /// This M-cycle is the reload cycle: TIMA writes are ignored, TMA writes go through to TIMA.
    reloading: bool,
}

impl Default for Timer {
    fn default() -> Self {
        Self::new()
    }
}

impl Timer {
    /// After the DMG boot ROM: DIV = 0xAB.
    pub fn new() -> Self {
        Timer {
            counter: 0xABCC,
            tima: 0,
            tma: 0,
            tac: 0xF8,
            overflow_age: 0,
            reloading: false,
        }
    }

    /// The counter bit whose falling edge ticks TIMA, ANDed with the enable bit.
    fn selected_bit(&self) -> u32 {
        match self.tac & 3 {
            0 => 9,
            1 => 3,
            2 => 5,
            _ => 7,
        }
    }

    fn signal(&self) -> bool {
        self.tac & 4 != 0 && (self.counter >> self.selected_bit()) & 1 != 0
    }

    /// M-cycles from now to the next falling edge of the selected bit (the counter is a multiple
    /// of 4 and the edge period at least 16, so edges fall on M-cycle boundaries).
    fn m_cycles_to_edge(&self, edges: u64) -> u64 {
        let period = 2u64 << self.selected_bit();
        let counter = self.counter as u64;
        ((counter / period + edges) * period - counter) / 4
    }

    /// Same as `m_cycles` calls of `tick`.
    pub fn advance(&mut self, mut m_cycles: u64, interrupt_flags: &mut u8) {
        loop {
            // An overflow in flight, or the cycle after a reload: step exactly.
            while m_cycles > 0 && (self.overflow_age != 0 || self.reloading) {
                self.tick(interrupt_flags);
                m_cycles -= 1;
            }
            if m_cycles == 0 {
                return;
            }
            if self.tac & 4 == 0 {
                self.counter = self.counter.wrapping_add((m_cycles * 4) as u16);
                return;
            }
            let to_overflow = 0x100 - self.tima as u64;
            let overflow_at = self.m_cycles_to_edge(to_overflow);
            if overflow_at > m_cycles {
                let period = 2u64 << self.selected_bit();
                let counter = self.counter as u64;
                let edges = (counter + 4 * m_cycles) / period - counter / period;
                self.tima += edges as u8;
                self.counter = self.counter.wrapping_add((m_cycles * 4) as u16);
                return;
            }
            // Jump to the cycle before the overflowing edge, then let `tick` overflow.
            self.tima = 0xFF;
            self.counter = self.counter.wrapping_add(((overflow_at - 1) * 4) as u16);
            self.tick(interrupt_flags);
            m_cycles -= overflow_at;
        }
    }

    /// M-cycles until the timer requests its interrupt (None while it cannot).
    /// TIMA overflowed, or was reloaded and requested the interrupt, in the last M-cycle (the
    /// timer is up to date): both are event times of PyBoy's scheduler (pyboy/core/timer.py:
    /// 100-102 and 136-142 wake it at the overflow and when the reload raises the interrupt).
    pub fn overflowed_or_reloaded(&self) -> bool {
        self.overflow_age != 0 || self.reloading
    }

    pub fn m_cycles_until_interrupt(&self) -> Option<u64> {
        match self.overflow_age {
            1 => Some(1),
            _ if self.tac & 4 != 0 => Some(self.m_cycles_to_edge(0x100 - self.tima as u64) + 1),
            _ => None,
        }
    }

    fn increment(&mut self) {
        let (v, overflow) = self.tima.overflowing_add(1);
        self.tima = v;
        if overflow {
            self.overflow_age = 1;
        }
    }

    /// One M-cycle (4 T-cycles).
    #[inline]
    pub fn tick(&mut self, interrupt_flags: &mut u8) {
        self.reloading = false;
        if self.overflow_age == 1 {
            self.overflow_age = 0;
            self.tima = self.tma;
            *interrupt_flags |= interrupts::TIMER;
            self.reloading = true;
        }
        let before = self.signal();
        self.counter = self.counter.wrapping_add(4);
        if before && !self.signal() {
            self.increment();
        }
    }

    /// TIMA as it read `ago` T-cycles before now (PyBoy mode: PyBoy reads the timer at its own
    /// moment of an instruction's read). TIMA less the selected bit's falling edges since then;
    /// as it is now if it overflowed or was reloaded meanwhile.
    pub fn tima_ago(&self, ago: u64) -> u8 {
        if ago == 0 || self.tac & 4 == 0 || self.overflow_age != 0 || self.reloading {
            return self.tima;
        }
        // The edge period divides 0x10000, so counting from one wrap above keeps the edges.
        let period = 2u64 << self.selected_bit();
        let now = self.counter as u64 + 0x10000;
        let edges = now / period - now.saturating_sub(ago) / period;
        if edges > self.tima as u64 {
            return self.tima;
        }
        self.tima - edges as u8
    }

    pub fn read(&self, addr: u16) -> u8 {
        match addr {
            0xFF04 => (self.counter >> 8) as u8,
            0xFF05 => self.tima,
            0xFF06 => self.tma,
            _ => self.tac | 0xF8,
        }
    }

    pub fn write(&mut self, addr: u16, value: u8) {
        match addr {
            0xFF04 => {
                let before = self.signal();
                self.counter = 0;
                if before {
                    self.increment();
                }
            }
            0xFF05 => {
                if !self.reloading {
                    self.tima = value;
                    self.overflow_age = 0; // a write in the overflow cycle cancels the reload
                }
            }
            0xFF06 => {
                self.tma = value;
                if self.reloading {
                    self.tima = value;
                }
            }
            _ => {
                let before = self.signal();
                self.tac = value & 7;
                if before && !self.signal() {
                    self.increment();
                }
            }
        }
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.u16(self.counter);
        w.u8(self.tima);
        w.u8(self.tma);
        w.u8(self.tac);
        w.u8(self.overflow_age);
        w.bool(self.reloading);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        self.counter = r.u16()?;
        if !self.counter.is_multiple_of(4) {
            // it advances by whole M-cycles; an unaligned one never meets the edge the scheduler waits for
            return Err(StateError(
                "timer counter is not a whole number of M-cycles".into(),
            ));
        }
        self.tima = r.u8()?;
        self.tma = r.u8()?;
        self.tac = r.u8()? & 7;
        self.overflow_age = r.u8()?;
        if self.overflow_age > 1 {
            return Err(StateError("timer overflow stage out of range".into()));
        }
        self.reloading = r.bool()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tima_ago_is_tima_that_many_cycles_before() {
        // Against the stepped timer: TIMA read `ago` T-cycles back equals TIMA as it was then,
        // for every rate, counter phase and look-back up to 3 M-cycles, overflow windows excepted
        // (there it reads as now).
        for tac in [4u8, 5, 6, 7] {
            for start in (0..2048u16).step_by(4) {
                for tima in [0x00u8, 0x7F, 0xFD, 0xFF] {
                    let mut timer = Timer::new();
                    timer.write(0xFF07, tac);
                    timer.counter = start.wrapping_add(0xFF00);
                    timer.tima = tima;
                    let mut flags = 0;
                    let mut history = vec![timer.tima];
                    // Whether TIMA overflowed or was reloaded in each M-cycle.
                    let mut overflow_in = vec![false];
                    for _ in 0..3 {
                        timer.tick(&mut flags);
                        history.push(timer.tima);
                        overflow_in.push(timer.overflowed_or_reloaded());
                    }
                    for back in 0..=3usize {
                        let then = history[3 - back];
                        let expected = if (4 - back..=3).any(|i| overflow_in[i]) {
                            timer.tima
                        } else {
                            then
                        };
                        assert_eq!(
                            timer.tima_ago(4 * back as u64),
                            expected,
                            "tac {tac} start {start} tima {tima:#x} back {back}"
                        );
                    }
                }
            }
        }
    }

    fn run(timer: &mut Timer, m_cycles: u32) -> u8 {
        let mut flags = 0;
        for _ in 0..m_cycles {
            timer.tick(&mut flags);
        }
        flags
    }

    #[test]
    fn div_counts_every_256_cycles() {
        let mut t = Timer::new();
        t.write(0xFF04, 0);
        run(&mut t, 63);
        assert_eq!(t.read(0xFF04), 0);
        run(&mut t, 1);
        assert_eq!(t.read(0xFF04), 1);
    }

    #[test]
    fn tima_rates_follow_tac() {
        for (tac, cycles_per_tick) in [(4u8, 1024u32), (5, 16), (6, 64), (7, 256)] {
            let mut t = Timer::new();
            t.write(0xFF04, 0);
            t.write(0xFF07, tac);
            t.write(0xFF05, 0);
            run(&mut t, cycles_per_tick * 10 / 4);
            assert_eq!(t.read(0xFF05), 10, "TAC {tac}");
        }
    }

    #[test]
    fn overflow_reads_zero_then_reloads_and_interrupts() {
        let mut t = Timer::new();
        t.write(0xFF04, 0);
        t.write(0xFF07, 5); // 16 cycles per tick
        t.write(0xFF06, 0x42);
        t.write(0xFF05, 0xFF);
        let mut flags = 0;
        for _ in 0..4 {
            t.tick(&mut flags);
        }
        assert_eq!(t.read(0xFF05), 0, "TIMA is 0 in the overflow cycle");
        assert_eq!(flags, 0);
        t.tick(&mut flags);
        assert_eq!(
            t.read(0xFF05),
            0x42,
            "reloaded one M-cycle after the overflow"
        );
        assert_eq!(flags, interrupts::TIMER);
    }

    #[test]
    fn write_in_delay_cycle_cancels_reload() {
        let mut t = Timer::new();
        t.write(0xFF04, 0);
        t.write(0xFF07, 5);
        t.write(0xFF06, 0x42);
        t.write(0xFF05, 0xFF);
        let mut flags = run(&mut t, 4);
        t.write(0xFF05, 0x10);
        for _ in 0..2 {
            t.tick(&mut flags);
        }
        assert_eq!(flags, 0);
        assert_eq!(t.read(0xFF05), 0x10);
    }

    #[test]
    fn advance_equals_repeated_ticks() {
        // Lazy catch-up must give exactly the state that M-cycle stepping gives.
        for tac in [0u8, 4, 5, 6, 7] {
            for tima in [0x00u8, 0xF0, 0xFE, 0xFF] {
                for start in [0u16, 4, 12, 508, 0xFFF0] {
                    for span in [1u64, 2, 3, 5, 17, 300, 5000] {
                        let mut stepped = Timer::new();
                        stepped.counter = start;
                        stepped.write(0xFF07, tac);
                        stepped.write(0xFF06, 0xF3);
                        stepped.write(0xFF05, tima);
                        let mut lazy = stepped.clone();
                        let (mut f1, mut f2) = (0u8, 0u8);
                        let predicted = lazy.m_cycles_until_interrupt();
                        let mut first_interrupt = None;
                        for i in 0..span {
                            stepped.tick(&mut f1);
                            if f1 != 0 && first_interrupt.is_none() {
                                first_interrupt = Some(i + 1);
                            }
                        }
                        lazy.advance(span, &mut f2);
                        assert_eq!(
                            stepped, lazy,
                            "tac {tac} tima {tima} start {start} span {span}"
                        );
                        assert_eq!(f1, f2);
                        if let Some(at) = first_interrupt {
                            assert_eq!(
                                predicted,
                                Some(at),
                                "interrupt time, tac {tac} tima {tima} start {start}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn reload_cycle_ignores_tima_writes_and_passes_tma_writes() {
        let setup = || {
            let mut t = Timer::new();
            t.write(0xFF04, 0);
            t.write(0xFF07, 5);
            t.write(0xFF06, 0x42);
            t.write(0xFF05, 0xFF);
            let flags = run(&mut t, 5); // overflow at tick 4, reload at tick 5
            assert_eq!(flags, interrupts::TIMER);
            t
        };
        let mut t = setup();
        t.write(0xFF05, 0x10);
        assert_eq!(
            t.read(0xFF05),
            0x42,
            "TIMA write in the reload cycle is ignored"
        );
        let mut t = setup();
        t.write(0xFF06, 0x77);
        assert_eq!(
            t.read(0xFF05),
            0x77,
            "TMA write in the reload cycle reaches TIMA"
        );
        run(&mut t, 1);
        t.write(0xFF05, 0x10);
        assert_eq!(
            t.read(0xFF05),
            0x10,
            "writes work again after the reload cycle"
        );
    }

    #[test]
    fn div_write_on_high_signal_ticks_tima() {
        let mut t = Timer::new();
        t.write(0xFF04, 0);
        t.write(0xFF07, 5); // bit 3
        t.write(0xFF05, 0);
        run(&mut t, 2); // counter = 8: bit 3 high
        t.write(0xFF04, 0);
        assert_eq!(t.read(0xFF05), 1);
    }
}
