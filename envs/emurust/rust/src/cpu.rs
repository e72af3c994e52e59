//! The SM83 CPU (the Game Boy's LR35902 core): registers, the instruction set, interrupts, HALT.
//!
//! Every memory access is one M-cycle on the bus (`CpuBus::read_cycle`/`write_cycle`) and every
//! internal cycle is an explicit `idle_cycle`, so the rest of the machine advances exactly when the
//! hardware would, in the order the hardware does it (the SingleStepTests vectors record that order).

use crate::state::{StateError, StateReader, StateWriter};

mod wait_loops;
pub(crate) use wait_loops::closes_polling_loop;

/// Invokes the macro `$m` with the 256 byte values as literals: both opcode tables are generated
/// from this one list, one match arm per opcode.
macro_rules! with_every_byte {
    ($m:ident) => {
        $m!(
            0x00 0x01 0x02 0x03 0x04 0x05 0x06 0x07 0x08 0x09 0x0A 0x0B 0x0C 0x0D 0x0E 0x0F
            0x10 0x11 0x12 0x13 0x14 0x15 0x16 0x17 0x18 0x19 0x1A 0x1B 0x1C 0x1D 0x1E 0x1F
            0x20 0x21 0x22 0x23 0x24 0x25 0x26 0x27 0x28 0x29 0x2A 0x2B 0x2C 0x2D 0x2E 0x2F
            0x30 0x31 0x32 0x33 0x34 0x35 0x36 0x37 0x38 0x39 0x3A 0x3B 0x3C 0x3D 0x3E 0x3F
            0x40 0x41 0x42 0x43 0x44 0x45 0x46 0x47 0x48 0x49 0x4A 0x4B 0x4C 0x4D 0x4E 0x4F
            0x50 0x51 0x52 0x53 0x54 0x55 0x56 0x57 0x58 0x59 0x5A 0x5B 0x5C 0x5D 0x5E 0x5F
            0x60 0x61 0x62 0x63 0x64 0x65 0x66 0x67 0x68 0x69 0x6A 0x6B 0x6C 0x6D 0x6E 0x6F
            0x70 0x71 0x72 0x73 0x74 0x75 0x76 0x77 0x78 0x79 0x7A 0x7B 0x7C 0x7D 0x7E 0x7F
            0x80 0x81 0x82 0x83 0x84 0x85 0x86 0x87 0x88 0x89 0x8A 0x8B 0x8C 0x8D 0x8E 0x8F
            0x90 0x91 0x92 0x93 0x94 0x95 0x96 0x97 0x98 0x99 0x9A 0x9B 0x9C 0x9D 0x9E 0x9F
            0xA0 0xA1 0xA2 0xA3 0xA4 0xA5 0xA6 0xA7 0xA8 0xA9 0xAA 0xAB 0xAC 0xAD 0xAE 0xAF
            0xB0 0xB1 0xB2 0xB3 0xB4 0xB5 0xB6 0xB7 0xB8 0xB9 0xBA 0xBB 0xBC 0xBD 0xBE 0xBF
            0xC0 0xC1 0xC2 0xC3 0xC4 0xC5 0xC6 0xC7 0xC8 0xC9 0xCA 0xCB 0xCC 0xCD 0xCE 0xCF
            0xD0 0xD1 0xD2 0xD3 0xD4 0xD5 0xD6 0xD7 0xD8 0xD9 0xDA 0xDB 0xDC 0xDD 0xDE 0xDF
            0xE0 0xE1 0xE2 0xE3 0xE4 0xE5 0xE6 0xE7 0xE8 0xE9 0xEA 0xEB 0xEC 0xED 0xEE 0xEF
            0xF0 0xF1 0xF2 0xF3 0xF4 0xF5 0xF6 0xF7 0xF8 0xF9 0xFA 0xFB 0xFC 0xFD 0xFE 0xFF
        )
    };
}

pub const FLAG_Z: u8 = 0x80;
pub const FLAG_N: u8 = 0x40;
pub const FLAG_H: u8 = 0x20;
pub const FLAG_C: u8 = 0x10;

/// What the CPU sees of the machine. Each call is one M-cycle (4 T-cycles).
pub trait CpuBus {
    fn read_cycle(&mut self, addr: u16) -> u8;
    /// `read_cycle` of an opcode or operand byte (a bus may read the instruction stream faster).
    fn fetch_cycle(&mut self, addr: u16) -> u8 {
        self.read_cycle(addr)
    }
    fn write_cycle(&mut self, addr: u16, value: u8);
    fn idle_cycle(&mut self);
    /// An internal M-cycle in which the 16-bit increment unit puts `addr` (a register pair as it
    /// was before INC/DEC, or SP before a push) on the address bus. On the DMG this reaches OAM
    /// when `addr` is in 0xFE00-0xFEFF (the OAM corruption bug).
    #[inline(always)]
    fn idu_cycle(&mut self, _addr: u16) {
        self.idle_cycle();
    }
    /// `read_cycle` in which the increment unit also steps the address register (LD A,(HL+),
    /// LD A,(HL-), a pop's first byte): to OAM a read and a write in one M-cycle.
    #[inline(always)]
    fn read_idu_cycle(&mut self, addr: u16) -> u8 {
        self.read_cycle(addr)
    }
    /// PyBoy compatibility: a write in no time (PyBoy's cancelled interrupt dispatch writes IE
    /// without advancing its clock); a bus without one may take an M-cycle.
    fn pyboy_untimed_write(&mut self, addr: u16, value: u8) {
        self.write_cycle(addr, value);
    }
    /// One M-cycle of HALT with no interrupt pending; a bus may skip ahead to its next event.
    fn halt_cycle(&mut self) {
        self.idle_cycle();
    }
    /// One M-cycle of HALT with no interrupt pending at its start that also reads `addr` (the
    /// halted CPU keeps fetching the next opcode); a bus may first skip ahead to its next event.
    fn halt_fetch_cycle(&mut self, addr: u16) -> u8 {
        self.read_cycle(addr)
    }
    /// IE & IF & 0x1F: requested and enabled interrupts.
    fn pending_interrupts(&self) -> u8;
    fn acknowledge_interrupt(&mut self, mask: u8);
    /// STOP resets the divider on DMG.
    fn stop(&mut self) {}
    /// PyBoy compatibility: `opcode` was just fetched (its fetch was the instruction's first
    /// M-cycle); the bus may time the instruction's I/O reads as PyBoy does.
    fn pyboy_opcode_fetched(&mut self, _opcode: u8) {}
    /// The CPU entered a state its plain step does not handle (HALT, EI, RETI, a lock-up): a
    /// run loop that skips `Cpu::needs_slow_step` must look again before the next instruction.
    fn request_attention(&mut self) {}
    /// IF's five request bits (PyBoy compatibility; a bus without one may answer with the
    /// pending, i.e. also enabled, requests).
    fn requested_interrupts(&self) -> u8 {
        self.pending_interrupts()
    }
    /// IE (PyBoy compatibility; see `requested_interrupts`).
    fn enabled_interrupts(&self) -> u8 {
        0x1F
    }
    /// PyBoy compatibility: whether one of PyBoy's scheduler events fell in the last M-cycle
    /// (so that PyBoy's chunk of instructions ends with the instruction that just ran).
    fn pyboy_chunk_ended(&mut self) -> bool {
        false
    }
    /// The byte at `addr` if reading it has no side effects and nothing but the CPU's own writes
    /// can change it (ROM, work RAM, high RAM), for looking ahead at code; `None` elsewhere.
    fn peek_code(&self, _addr: u16) -> Option<u8> {
        None
    }
    /// How many T-cycles from now can pass with nothing observable happening besides the CPU's
    /// own instructions, while they run a loop at `code_at` that touches only registers: no
    /// interrupt pending or raised, no unit due to act, no stop of the caller's run loop, and
    /// the code reading as it does now. 0 when that cannot be promised (see `cpu::wait_loops`).
    fn quiet_cycles(&self, _code_at: u16) -> u64 {
        0
    }
    /// `quiet_cycles` for a loop that also reads `addr` (STAT or LY) and has just read `value`
    /// there: also bounded by the next change of what that register reads.
    fn poll_quiet_cycles(&self, _code_at: u16, _addr: u16, _value: u8) -> u64 {
        0
    }
    /// Lets `cycles` (at most `quiet_cycles` or `poll_quiet_cycles`) pass, as the CPU's rounds of
    /// a wait loop would.
    fn skip_wait_cycles(&mut self, _cycles: u64) {}
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cpu {
    pub a: u8,
    pub f: u8,
    pub b: u8,
    pub c: u8,
    pub d: u8,
    pub e: u8,
    pub h: u8,
    pub l: u8,
    pub sp: u16,
    pub pc: u16,
    pub ime: bool,
    /// EI was executed: IME turns on after the instruction that follows it.
    pub ei_pending: bool,
    pub halted: bool,
    /// HALT with IME=0 and an interrupt already pending: the next opcode byte is read twice.
    pub halt_bug: bool,
    /// Set by an opcode the SM83 does not have (0xD3, 0xDB, ...): the real CPU locks up.
    pub locked: bool,
    /// PyBoy 2.8.1 compatibility (configuration, not machine state): interrupts are sampled at
    /// instruction boundaries only, never during the next opcode's fetch, and HALT has no bug.
    pub pyboy: bool,
    /// PyBoy mode: the CPU is halted by a HALT that ran right after EI (see `step_pyboy`).
    pub pyboy_halt_after_ei: bool,
}

impl Cpu {
    /// Registers as the DMG boot ROM leaves them at 0x0100.
    pub fn after_boot() -> Self {
        Cpu {
            a: 0x01,
            f: 0xB0,
            b: 0x00,
            c: 0x13,
            d: 0x00,
            e: 0xD8,
            h: 0x01,
            l: 0x4D,
            sp: 0xFFFE,
            pc: 0x0100,
            ..Default::default()
        }
    }

    #[inline(always)]
    pub fn hl(&self) -> u16 {
        u16::from_be_bytes([self.h, self.l])
    }
    #[inline(always)]
    fn set_hl(&mut self, v: u16) {
        [self.h, self.l] = v.to_be_bytes();
    }
    #[inline(always)]
    fn bc(&self) -> u16 {
        u16::from_be_bytes([self.b, self.c])
    }
    #[inline(always)]
    fn de(&self) -> u16 {
        u16::from_be_bytes([self.d, self.e])
    }
    #[inline(always)]
    fn flag(&self, mask: u8) -> bool {
        self.f & mask != 0
    }
    #[inline(always)]
    fn set_flags(&mut self, z: bool, n: bool, h: bool, c: bool) {
        self.f = (z as u8) << 7 | (n as u8) << 6 | (h as u8) << 5 | (c as u8) << 4;
    }

    /// Register pair by the 2-bit field of the opcode (BC, DE, HL, SP).
    #[inline(always)]
    fn rp(&self, index: u8) -> u16 {
        match index & 3 {
            0 => self.bc(),
            1 => self.de(),
            2 => self.hl(),
            _ => self.sp,
        }
    }
    #[inline(always)]
    fn set_rp(&mut self, index: u8, v: u16) {
        match index & 3 {
            0 => [self.b, self.c] = v.to_be_bytes(),
            1 => [self.d, self.e] = v.to_be_bytes(),
            2 => self.set_hl(v),
            _ => self.sp = v,
        }
    }

    /// 8-bit operand by the 3-bit field (B C D E H L (HL) A); (HL) costs a bus cycle.
    #[inline(always)]
    fn read_r<B: CpuBus>(&mut self, bus: &mut B, index: u8) -> u8 {
        match index & 7 {
            0 => self.b,
            1 => self.c,
            2 => self.d,
            3 => self.e,
            4 => self.h,
            5 => self.l,
            6 => bus.read_cycle(self.hl()),
            _ => self.a,
        }
    }
    #[inline(always)]
    fn write_r<B: CpuBus>(&mut self, bus: &mut B, index: u8, v: u8) {
        match index & 7 {
            0 => self.b = v,
            1 => self.c = v,
            2 => self.d = v,
            3 => self.e = v,
            4 => self.h = v,
            5 => self.l = v,
            6 => bus.write_cycle(self.hl(), v),
            _ => self.a = v,
        }
    }

    #[inline(always)]
    fn fetch<B: CpuBus>(&mut self, bus: &mut B) -> u8 {
        let v = bus.fetch_cycle(self.pc);
        self.pc = self.pc.wrapping_add(1);
        v
    }
    #[inline(always)]
    fn fetch16<B: CpuBus>(&mut self, bus: &mut B) -> u16 {
        let lo = self.fetch(bus);
        let hi = self.fetch(bus);
        u16::from_le_bytes([lo, hi])
    }
    #[inline(always)]
    fn push16<B: CpuBus>(&mut self, bus: &mut B, v: u16) {
        let [hi, lo] = v.to_be_bytes();
        self.sp = self.sp.wrapping_sub(1);
        bus.write_cycle(self.sp, hi);
        self.sp = self.sp.wrapping_sub(1);
        bus.write_cycle(self.sp, lo);
    }
    #[inline(always)]
    fn pop16<B: CpuBus>(&mut self, bus: &mut B) -> u16 {
        let lo = bus.read_idu_cycle(self.sp);
        self.sp = self.sp.wrapping_add(1);
        let hi = bus.read_cycle(self.sp);
        self.sp = self.sp.wrapping_add(1);
        u16::from_le_bytes([lo, hi])
    }
    #[inline(always)]
    fn condition(&self, cc: u8) -> bool {
        match cc & 3 {
            0 => !self.flag(FLAG_Z),
            1 => self.flag(FLAG_Z),
            2 => !self.flag(FLAG_C),
            _ => self.flag(FLAG_C),
        }
    }

    /// One instruction, one interrupt dispatch, or one M-cycle of HALT.
    ///
    /// Interrupts are sampled in the M-cycle that fetches the next opcode (on hardware it overlaps
    /// the end of the previous instruction), so a request raised during that very cycle is still
    /// taken: the fetched byte is then discarded and that cycle is the first of the dispatch.
    /// A halted CPU samples the same way every M-cycle, which makes HALT wake up with exactly
    /// the timing of a run of NOPs (mooneye `halt_ime1_timing2`).
    #[inline(always)]
    pub fn step<B: CpuBus>(&mut self, bus: &mut B) {
        if self.pyboy {
            self.step_as::<B, true>(bus)
        } else {
            self.step_as::<B, false>(bus)
        }
    }

    /// `step` with the timing mode fixed at compile time (`PYBOY` is `self.pyboy`). The frame loop
    /// makes the same choice itself, between its looks (`needs_slow_step`, `step_plain`).
    #[inline(always)]
    fn step_as<B: CpuBus, const PYBOY: bool>(&mut self, bus: &mut B) {
        debug_assert_eq!(self.pyboy, PYBOY);
        if self.needs_slow_step::<B, PYBOY>(bus) {
            return self.step_slow(bus);
        }
        self.step_plain::<B, PYBOY>(bus);
    }

    /// Whether `step_plain` would be wrong now: a lock, HALT, the HALT bug or a pending EI, and
    /// in the PyBoy timing an interrupt to take at this boundary. It can only become true by
    /// something the CPU does (which then calls `CpuBus::request_attention`) or by an interrupt
    /// request (which the bus notes itself).
    #[inline(always)]
    pub fn needs_slow_step<B: CpuBus, const PYBOY: bool>(&self, bus: &B) -> bool {
        (self.locked | self.halted | self.halt_bug | self.ei_pending)
            || PYBOY && self.ime && bus.pending_interrupts() != 0
    }

    /// `step_slow`'s steps when `needs_slow_step` is false.
    #[inline(always)]
    pub fn step_plain<B: CpuBus, const PYBOY: bool>(&mut self, bus: &mut B) {
        let opcode = if PYBOY {
            let opcode = self.fetch(bus);
            bus.pyboy_opcode_fetched(opcode);
            opcode
        } else {
            let opcode = self.fetch(bus);
            if self.ime && bus.pending_interrupts() != 0 {
                // The fetch was the dispatch's first cycle; PC stays on the discarded opcode.
                self.pc = self.pc.wrapping_sub(1);
                self.dispatch_interrupt(bus);
                return;
            }
            opcode
        };
        // The one call site where the dispatch is inlined (once per bus type): the frame loop
        // then keeps its registers across instructions instead of a call's saves and restores.
        self.execute_inline(bus, opcode);
    }

    /// One step from any state (the plain case included, with its dispatch called, not inlined).
    #[inline(never)]
    pub fn step_slow<B: CpuBus>(&mut self, bus: &mut B) {
        if self.pyboy {
            return self.step_pyboy(bus);
        }
        if self.locked {
            bus.halt_cycle();
            return;
        }
        if self.halted {
            if bus.pending_interrupts() == 0 {
                let opcode = bus.halt_fetch_cycle(self.pc);
                if bus.pending_interrupts() == 0 {
                    return;
                }
                // Woken during this cycle, which was the next opcode's fetch (or, with IME=1,
                // the first cycle of the dispatch).
                self.halted = false;
                if self.ime {
                    self.dispatch_interrupt(bus);
                } else {
                    self.pc = self.pc.wrapping_add(1);
                    self.finish_step(bus, opcode);
                }
                return;
            }
            self.halted = false;
        }
        let enable_after = self.ei_pending;
        self.ei_pending = false;
        let pc = self.pc;
        let opcode = if self.halt_bug {
            self.halt_bug = false;
            bus.read_cycle(self.pc)
        } else {
            self.fetch(bus)
        };
        if self.ime && bus.pending_interrupts() != 0 {
            // The fetch was the dispatch's first cycle; PC stays on the discarded opcode.
            self.pc = pc;
            self.dispatch_interrupt(bus);
            return;
        }
        self.execute(bus, opcode);
        // A DI right after EI cancels it.
        if enable_after && opcode != 0xF3 {
            self.ime = true;
        }
    }

    /// `step` as PyBoy 2.8.1 times it. PyBoy checks for interrupts only when its scheduler starts
    /// a chunk of instructions; chunks end at the first instruction boundary at or after every
    /// interrupt-raising event (and after writes to IE/IF/IO, RETI, EI taking effect, HALT), so an
    /// interrupt is taken at the first instruction boundary where it is already requested (an
    /// event during the next opcode's fetch waits one more instruction). The dispatch takes 20
    /// T-cycles from that boundary. A halted CPU wakes at the boundary too, HALT never repeats a
    /// byte, and no interrupt is taken while an EI is still pending.
    fn step_pyboy<B: CpuBus>(&mut self, bus: &mut B) {
        if self.locked {
            bus.halt_cycle();
            return;
        }
        if self.halted {
            if bus.pending_interrupts() == 0 {
                bus.halt_cycle();
                return;
            }
            self.halted = false;
            if std::mem::take(&mut self.pyboy_halt_after_ei) {
                // PyBoy's HALT leaves PC on itself and steps over it when it wakes, except when
                // it ran right after EI: then PC stays on the HALT, which is pushed as the return
                // address and runs again after the handler (pyboy/core/opcodes.py:1155-1159,
                // cpu.py:156-162). But the EI delay ending after that HALT overwrites the HALT's
                // "end the chunk" flag with "an interrupt is pending" (cpu.py:259-263), so
                // unless one is pending or the chunk's cycle budget runs out with the HALT
                // (one of the scheduler's events fell in it), PyBoy runs the HALT again at once
                // as a plain HALT, and the return address is the next instruction as usual.
                self.pc = self.pc.wrapping_sub(1);
            }
        }
        if self.ime && !self.ei_pending && bus.pending_interrupts() != 0 {
            // PyBoy picks the vector from the requests as they were at the boundary (nothing
            // ticks during its dispatch) and IE as it is after the high push (pyboy/core/cpu.py:181-213):
            // a request raised during the dispatch waits for the next one.
            let requested = bus.requested_interrupts();
            let [pc_high, _] = self.pc.to_be_bytes();
            if self.sp == 0x0000 && requested & pc_high & 0x1F == 0 {
                // The high push lands on IE and leaves no request enabled. PyBoy then cancels the
                // dispatch at once (cpu.py:196-201): no time passes, nothing more is pushed, SP
                // stays, and the CPU goes on at 0x0000 with IME off. (The hardware, and the
                // default timing, push both bytes in the dispatch's 5 M-cycles and go to 0x0000.)
                bus.pyboy_untimed_write(0xFFFF, pc_high);
                self.ime = false;
                self.pc = 0x0000;
                return;
            }
            // The pushes are no opcode's accesses (PyBoy times them with no offset).
            bus.pyboy_opcode_fetched(0x00);
            bus.idle_cycle();
            self.dispatch_interrupt_with(bus, Some(requested));
            return;
        }
        let enable_after = self.ei_pending;
        self.ei_pending = false;
        let opcode = self.fetch(bus);
        bus.pyboy_opcode_fetched(opcode);
        self.execute(bus, opcode);
        if enable_after {
            // The instruction right after EI. PyBoy remembers a HALT there (above); an EI there
            // does not start a new delay (PyBoy's EI only arms it when none is running,
            // opcodes.py:2882-2887), so IME is on after it.
            self.pyboy_halt_after_ei =
                opcode == 0x76 && (bus.pending_interrupts() != 0 || bus.pyboy_chunk_ended());
            if opcode == 0xFB {
                self.ei_pending = false;
            }
            if opcode != 0xF3 {
                self.ime = true; // unless DI cancelled it
            }
        }
    }

    /// Runs an already fetched opcode (HALT woken with IME=0); no EI can be pending here.
    fn finish_step<B: CpuBus>(&mut self, bus: &mut B, opcode: u8) {
        self.execute(bus, opcode);
    }
    /// The rest of an interrupt dispatch, whose first M-cycle (the discarded opcode fetch, or a
    /// HALT cycle) has already run: one internal cycle, push PC high, (IE re-read), push PC low,
    /// and one internal cycle that loads the vector: five M-cycles in all before the handler's
    /// first fetch (mooneye `intr_timing`).
    fn dispatch_interrupt<B: CpuBus>(&mut self, bus: &mut B) {
        self.dispatch_interrupt_with(bus, None);
    }

    /// `dispatch_interrupt`; with `requested`, the vector is chosen from those IF bits (and IE as
    /// it is after the high push) instead of IF as it is then.
    fn dispatch_interrupt_with<B: CpuBus>(&mut self, bus: &mut B, requested: Option<u8>) {
        self.ime = false;
        self.ei_pending = false;
        bus.idu_cycle(self.sp);
        let [hi, lo] = self.pc.to_be_bytes();
        self.sp = self.sp.wrapping_sub(1);
        bus.write_cycle(self.sp, hi);
        // The high push can land on IE (SP=0x0000) and cancel the request: the vector is chosen now.
        let pending = match requested {
            Some(flags) => flags & bus.enabled_interrupts() & 0x1F,
            None => bus.pending_interrupts(),
        };
        self.sp = self.sp.wrapping_sub(1);
        bus.write_cycle(self.sp, lo);
        if pending == 0 {
            self.pc = 0x0000;
        } else {
            let bit = pending.trailing_zeros() as u16;
            bus.acknowledge_interrupt(1 << bit);
            self.pc = 0x0040 + 8 * bit;
        }
        bus.idle_cycle();
    }

    #[inline(always)]
    fn alu<B: CpuBus>(&mut self, _bus: &mut B, op: u8, v: u8) {
        let a = self.a;
        match op & 7 {
            0 | 1 => {
                // ADD / ADC
                let carry = if op & 7 == 1 && self.flag(FLAG_C) {
                    1
                } else {
                    0
                };
                let sum = a as u16 + v as u16 + carry as u16;
                let r = sum as u8;
                self.set_flags(
                    r == 0,
                    false,
                    (a & 0xF) + (v & 0xF) + carry > 0xF,
                    sum > 0xFF,
                );
                self.a = r;
            }
            2 | 3 | 7 => {
                // SUB / SBC / CP
                let carry = if op & 7 == 3 && self.flag(FLAG_C) {
                    1
                } else {
                    0
                };
                let diff = a as i16 - v as i16 - carry as i16;
                let r = diff as u8;
                let half = (a & 0xF) as i16 - (v & 0xF) as i16 - carry as i16;
                self.set_flags(r == 0, true, half < 0, diff < 0);
                if op & 7 != 7 {
                    self.a = r;
                }
            }
            4 => {
                self.a = a & v;
                self.set_flags(self.a == 0, false, true, false);
            }
            5 => {
                self.a = a ^ v;
                self.set_flags(self.a == 0, false, false, false);
            }
            _ => {
                self.a = a | v;
                self.set_flags(self.a == 0, false, false, false);
            }
        }
    }

    /// The CB-prefixed rotate/shift group; returns the result and sets Z N H C.
    #[inline(always)]
    fn rotate(&mut self, op: u8, v: u8) -> u8 {
        let carry_in = self.flag(FLAG_C) as u8;
        let (r, c) = match op & 7 {
            0 => (v.rotate_left(1), v & 0x80 != 0),    // RLC
            1 => (v.rotate_right(1), v & 1 != 0),      // RRC
            2 => (v << 1 | carry_in, v & 0x80 != 0),   // RL
            3 => (v >> 1 | carry_in << 7, v & 1 != 0), // RR
            4 => (v << 1, v & 0x80 != 0),              // SLA
            5 => (((v as i8) >> 1) as u8, v & 1 != 0), // SRA
            6 => (v.rotate_left(4), false),            // SWAP
            _ => (v >> 1, v & 1 != 0),                 // SRL
        };
        self.set_flags(r == 0, false, false, c);
        r
    }

    /// Fetches a CB-prefixed opcode and runs it through a body specialised for that opcode.
    fn execute_cb<B: CpuBus>(&mut self, bus: &mut B) {
        let op = self.fetch(bus);
        macro_rules! dispatch_cb {
            ($($n:literal)*) => {
                match op {
                    $($n => self.execute_cb_op::<B, $n>(bus),)*
                }
            };
        }
        with_every_byte!(dispatch_cb);
    }

    /// One CB-prefixed opcode; `OP` is a constant, so the register and bit fields fold away.
    #[inline(always)]
    fn execute_cb_op<B: CpuBus, const OP: u8>(&mut self, bus: &mut B) {
        let op = OP;
        let reg = op & 7;
        let bit = (op >> 3) & 7;
        match op >> 6 {
            0 => {
                let v = self.read_r(bus, reg);
                let r = self.rotate(op >> 3, v);
                self.write_r(bus, reg, r);
            }
            1 => {
                let v = self.read_r(bus, reg);
                let carry = self.flag(FLAG_C);
                self.set_flags(v & (1 << bit) == 0, false, true, carry);
            }
            2 => {
                let v = self.read_r(bus, reg);
                self.write_r(bus, reg, v & !(1 << bit));
            }
            _ => {
                let v = self.read_r(bus, reg);
                self.write_r(bus, reg, v | (1 << bit));
            }
        }
    }

    #[inline(always)]
    fn add_sp_offset<B: CpuBus>(&mut self, bus: &mut B) -> u16 {
        let offset = self.fetch(bus) as i8 as i16 as u16;
        let sp = self.sp;
        let half = (sp & 0xF) + (offset & 0xF) > 0xF;
        let carry = (sp & 0xFF) + (offset & 0xFF) > 0xFF;
        self.set_flags(false, false, half, carry);
        sp.wrapping_add(offset)
    }

    /// `execute_inline` as a call, for the rare paths (interrupts, HALT, EI): one copy of the
    /// dispatch serves them all.
    fn execute<B: CpuBus>(&mut self, bus: &mut B, op: u8) {
        self.execute_inline(bus, op);
    }

    /// Runs one opcode through a body specialised for it (the match below has one arm per opcode,
    /// each a copy of `execute_op` with the opcode's register fields known at compile time).
    #[inline(always)]
    fn execute_inline<B: CpuBus>(&mut self, bus: &mut B, op: u8) {
        macro_rules! dispatch {
            ($($n:literal)*) => {
                match op {
                    $($n => self.execute_op::<B, $n>(bus),)*
                }
            };
        }
        with_every_byte!(dispatch);
    }

    #[inline(always)]
    fn execute_op<B: CpuBus, const OP: u8>(&mut self, bus: &mut B) {
        let op = OP;
        match op {
            0x00 => {}
            0x10 => {
                // STOP: the vectors treat it as one byte; DMG resets DIV. Low-power mode is not modelled.
                bus.stop();
            }
            0x76 => {
                if !self.pyboy && !self.ime && bus.pending_interrupts() != 0 {
                    self.halt_bug = true;
                } else {
                    self.halted = true;
                }
                bus.request_attention();
            }
            0x40..=0x7F => {
                let v = self.read_r(bus, op & 7);
                self.write_r(bus, (op >> 3) & 7, v);
            }
            0x80..=0xBF => {
                let v = self.read_r(bus, op & 7);
                self.alu(bus, op >> 3, v);
            }
            0xC6 | 0xCE | 0xD6 | 0xDE | 0xE6 | 0xEE | 0xF6 | 0xFE => {
                let v = self.fetch(bus);
                self.alu(bus, op >> 3, v);
            }
            // LD r, n
            0x06 | 0x0E | 0x16 | 0x1E | 0x26 | 0x2E | 0x36 | 0x3E => {
                let v = self.fetch(bus);
                self.write_r(bus, op >> 3, v);
            }
            // INC r / DEC r
            0x04 | 0x0C | 0x14 | 0x1C | 0x24 | 0x2C | 0x34 | 0x3C => {
                let reg = op >> 3;
                let v = self.read_r(bus, reg);
                let r = v.wrapping_add(1);
                let carry = self.flag(FLAG_C);
                self.set_flags(r == 0, false, v & 0xF == 0xF, carry);
                self.write_r(bus, reg, r);
            }
            0x05 | 0x0D | 0x15 | 0x1D | 0x25 | 0x2D | 0x35 | 0x3D => {
                let reg = op >> 3;
                let v = self.read_r(bus, reg);
                let r = v.wrapping_sub(1);
                let carry = self.flag(FLAG_C);
                self.set_flags(r == 0, true, v & 0xF == 0, carry);
                self.write_r(bus, reg, r);
            }
            // LD rr, nn
            0x01 | 0x11 | 0x21 | 0x31 => {
                let v = self.fetch16(bus);
                self.set_rp(op >> 4, v);
            }
            // INC rr / DEC rr
            0x03 | 0x13 | 0x23 | 0x33 => {
                let before = self.rp(op >> 4);
                self.set_rp(op >> 4, before.wrapping_add(1));
                bus.idu_cycle(before);
            }
            0x0B | 0x1B | 0x2B | 0x3B => {
                let before = self.rp(op >> 4);
                self.set_rp(op >> 4, before.wrapping_sub(1));
                bus.idu_cycle(before);
            }
            // ADD HL, rr
            0x09 | 0x19 | 0x29 | 0x39 => {
                let hl = self.hl();
                let v = self.rp(op >> 4);
                let sum = hl as u32 + v as u32;
                let z = self.flag(FLAG_Z);
                self.set_flags(z, false, (hl & 0xFFF) + (v & 0xFFF) > 0xFFF, sum > 0xFFFF);
                self.set_hl(sum as u16);
                bus.idle_cycle();
            }
            // LD (BC)/(DE)/(HL+)/(HL-), A and back
            0x02 => bus.write_cycle(self.bc(), self.a),
            0x12 => bus.write_cycle(self.de(), self.a),
            0x22 => {
                let hl = self.hl();
                bus.write_cycle(hl, self.a);
                self.set_hl(hl.wrapping_add(1));
            }
            0x32 => {
                let hl = self.hl();
                bus.write_cycle(hl, self.a);
                self.set_hl(hl.wrapping_sub(1));
            }
            0x0A => self.a = bus.read_cycle(self.bc()),
            0x1A => self.a = bus.read_cycle(self.de()),
            0x2A => {
                let hl = self.hl();
                self.a = bus.read_idu_cycle(hl);
                self.set_hl(hl.wrapping_add(1));
            }
            0x3A => {
                let hl = self.hl();
                self.a = bus.read_idu_cycle(hl);
                self.set_hl(hl.wrapping_sub(1));
            }
            0x08 => {
                let addr = self.fetch16(bus);
                let [hi, lo] = self.sp.to_be_bytes();
                bus.write_cycle(addr, lo);
                bus.write_cycle(addr.wrapping_add(1), hi);
            }
            // Accumulator rotates: Z is always cleared.
            0x07 | 0x0F | 0x17 | 0x1F => {
                let r = self.rotate(op >> 3, self.a);
                self.f &= !FLAG_Z;
                self.a = r;
            }
            0x27 => {
                // DAA: adjust A to BCD after an addition or subtraction.
                let mut a = self.a;
                let mut carry = self.flag(FLAG_C);
                if !self.flag(FLAG_N) {
                    if carry || a > 0x99 {
                        a = a.wrapping_add(0x60);
                        carry = true;
                    }
                    if self.flag(FLAG_H) || a & 0x0F > 0x09 {
                        a = a.wrapping_add(0x06);
                    }
                } else {
                    if carry {
                        a = a.wrapping_sub(0x60);
                    }
                    if self.flag(FLAG_H) {
                        a = a.wrapping_sub(0x06);
                    }
                }
                let n = self.flag(FLAG_N);
                self.set_flags(a == 0, n, false, carry);
                self.a = a;
            }
            0x2F => {
                self.a = !self.a;
                self.f |= FLAG_N | FLAG_H;
            }
            0x37 => self.f = (self.f & FLAG_Z) | FLAG_C,
            0x3F => self.f = (self.f & (FLAG_Z | FLAG_C)) ^ FLAG_C,
            // JR e / JR cc, e
            0x18 => {
                let offset = self.fetch(bus) as i8;
                self.pc = self.pc.wrapping_add(offset as u16);
                bus.idle_cycle();
            }
            0x20 | 0x28 | 0x30 | 0x38 => {
                let offset = self.fetch(bus);
                if self.condition(op >> 3) {
                    self.pc = self.pc.wrapping_add(offset as i8 as u16);
                    bus.idle_cycle();
                    // Back 3 to 5 bytes with JR NZ / NC: perhaps a counting delay loop.
                    if op & 0x08 == 0 && offset.wrapping_sub(0xFB) < 3 {
                        self.skip_delay_loop(bus, op, offset);
                    }
                }
            }
            // RET / RET cc / RETI
            0xC9 => {
                self.pc = self.pop16(bus);
                bus.idle_cycle();
            }
            0xD9 => {
                self.pc = self.pop16(bus);
                bus.idle_cycle();
                self.ime = true;
                bus.request_attention();
            }
            0xC0 | 0xC8 | 0xD0 | 0xD8 => {
                bus.idle_cycle();
                if self.condition(op >> 3) {
                    self.pc = self.pop16(bus);
                    bus.idle_cycle();
                }
            }
            // JP nn / JP cc, nn / JP HL
            0xC3 => {
                self.pc = self.fetch16(bus);
                bus.idle_cycle();
            }
            0xC2 | 0xCA | 0xD2 | 0xDA => {
                let addr = self.fetch16(bus);
                if self.condition(op >> 3) {
                    self.pc = addr;
                    bus.idle_cycle();
                }
            }
            0xE9 => self.pc = self.hl(),
            // CALL nn / CALL cc, nn
            0xCD => {
                let addr = self.fetch16(bus);
                bus.idu_cycle(self.sp);
                self.push16(bus, self.pc);
                self.pc = addr;
            }
            0xC4 | 0xCC | 0xD4 | 0xDC => {
                let addr = self.fetch16(bus);
                if self.condition(op >> 3) {
                    bus.idu_cycle(self.sp);
                    self.push16(bus, self.pc);
                    self.pc = addr;
                }
            }
            // RST
            0xC7 | 0xCF | 0xD7 | 0xDF | 0xE7 | 0xEF | 0xF7 | 0xFF => {
                bus.idu_cycle(self.sp);
                self.push16(bus, self.pc);
                self.pc = (op & 0x38) as u16;
            }
            // PUSH / POP (AF's low nibble of F is always zero)
            0xC5 | 0xD5 | 0xE5 | 0xF5 => {
                let v = if op == 0xF5 {
                    u16::from_be_bytes([self.a, self.f])
                } else {
                    self.rp((op >> 4) & 3)
                };
                bus.idu_cycle(self.sp);
                self.push16(bus, v);
            }
            0xC1 | 0xD1 | 0xE1 | 0xF1 => {
                let v = self.pop16(bus);
                if op == 0xF1 {
                    let [a, f] = v.to_be_bytes();
                    self.a = a;
                    self.f = f & 0xF0;
                } else {
                    self.set_rp((op >> 4) & 3, v);
                }
            }
            0xCB => self.execute_cb(bus),
            // LDH (n), A / LDH A, (n) / LD (C), A / LD A, (C)
            0xE0 => {
                let n = self.fetch(bus);
                bus.write_cycle(0xFF00 | n as u16, self.a);
            }
            0xF0 => {
                let n = self.fetch(bus);
                self.a = bus.read_cycle(0xFF00 | n as u16);
                if n == 0x41 || n == 0x44 {
                    self.skip_register_poll(bus, n);
                }
            }
            0xE2 => bus.write_cycle(0xFF00 | self.c as u16, self.a),
            0xF2 => self.a = bus.read_cycle(0xFF00 | self.c as u16),
            0xEA => {
                let addr = self.fetch16(bus);
                bus.write_cycle(addr, self.a);
            }
            0xFA => {
                let addr = self.fetch16(bus);
                self.a = bus.read_cycle(addr);
            }
            0xE8 => {
                self.sp = self.add_sp_offset(bus);
                bus.idle_cycle();
                bus.idle_cycle();
            }
            0xF8 => {
                let v = self.add_sp_offset(bus);
                self.set_hl(v);
                bus.idle_cycle();
            }
            0xF9 => {
                self.sp = self.hl();
                bus.idle_cycle();
            }
            0xF3 => {
                self.ime = false;
                self.ei_pending = false;
            }
            0xFB => {
                self.ei_pending = true;
                bus.request_attention();
            }
            // 0xD3 0xDB 0xDD 0xE3 0xE4 0xEB 0xEC 0xED 0xF4 0xFC 0xFD: the CPU hangs.
            _ => {
                self.locked = true;
                bus.request_attention();
            }
        }
    }

    pub fn save(&self, w: &mut StateWriter) {
        for v in [
            self.a, self.f, self.b, self.c, self.d, self.e, self.h, self.l,
        ] {
            w.u8(v);
        }
        w.u16(self.sp);
        w.u16(self.pc);
        for v in [
            self.ime,
            self.ei_pending,
            self.halted,
            self.halt_bug,
            self.locked,
            self.pyboy_halt_after_ei,
        ] {
            w.bool(v);
        }
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        self.a = r.u8()?;
        self.f = r.u8()?;
        if self.f & 0x0F != 0 {
            return Err(StateError(format!(
                "CPU flag register 0x{:02X} has low bits set",
                self.f
            )));
        }
        self.b = r.u8()?;
        self.c = r.u8()?;
        self.d = r.u8()?;
        self.e = r.u8()?;
        self.h = r.u8()?;
        self.l = r.u8()?;
        self.sp = r.u16()?;
        self.pc = r.u16()?;
        self.ime = r.bool()?;
        self.ei_pending = r.bool()?;
        self.halted = r.bool()?;
        self.halt_bug = r.bool()?;
        self.locked = r.bool()?;
        self.pyboy_halt_after_ei = r.bool()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 KiB of NOPs; IF bit 0 is raised by the tick of M-cycle `raise_at` (1-based).
    struct TestBus {
        mem: Vec<u8>,
        cycle: u64,
        raise_at: u64,
        flags: u8,
    }

    impl TestBus {
        fn tick(&mut self) {
            self.cycle += 1;
            if self.cycle == self.raise_at {
                self.flags |= 1;
            }
        }
    }

    impl CpuBus for TestBus {
        fn read_cycle(&mut self, addr: u16) -> u8 {
            self.tick();
            self.mem[addr as usize]
        }
        fn write_cycle(&mut self, addr: u16, value: u8) {
            self.tick();
            self.mem[addr as usize] = value;
        }
        fn idle_cycle(&mut self) {
            self.tick();
        }
        fn pending_interrupts(&self) -> u8 {
            self.flags
        }
        fn acknowledge_interrupt(&mut self, mask: u8) {
            self.flags &= !mask;
        }
    }

    /// M-cycle at which the VBlank handler's first opcode is fetched.
    fn handler_fetch_cycle(raise_at: u64, halted: bool) -> u64 {
        handler_fetch_cycle_with(raise_at, halted, false)
    }

    fn handler_fetch_cycle_with(raise_at: u64, halted: bool, pyboy: bool) -> u64 {
        let mut bus = TestBus {
            mem: vec![0; 0x10000],
            cycle: 0,
            raise_at,
            flags: 0,
        };
        let mut cpu = Cpu {
            pc: 0x1000,
            sp: 0xD000,
            ime: true,
            halted,
            pyboy,
            ..Default::default()
        };
        while cpu.pc != 0x0040 {
            cpu.step(&mut bus);
        }
        bus.cycle + 1
    }

    #[test]
    fn interrupt_raised_during_a_fetch_replaces_that_opcode() {
        // Raised in M-cycle 10 (a NOP's fetch): cycles 10..=14 dispatch, the handler fetch is 15.
        assert_eq!(handler_fetch_cycle(10, false), 15);
        // HALT wakes with the same timing as NOPs.
        assert_eq!(handler_fetch_cycle(10, true), 15);
    }

    #[test]
    fn pyboy_mode_takes_interrupts_at_instruction_boundaries() {
        // Raised during the fetch of the 10th NOP: PyBoy runs that NOP, dispatches in 11..=15.
        assert_eq!(handler_fetch_cycle_with(10, false, true), 16);
        assert_eq!(handler_fetch_cycle_with(10, true, true), 16);
        // Raised in the cycle before a boundary: taken at that boundary, as on hardware.
        assert_eq!(
            handler_fetch_cycle_with(9, false, true),
            handler_fetch_cycle(10, false)
        );
    }

    /// Return address pushed by the VBlank dispatch that ends `EI; HALT` at 0x1000 (PyBoy mode).
    fn pyboy_ei_halt_return_address(raise_at: u64) -> u16 {
        let mut bus = TestBus {
            mem: vec![0; 0x10000],
            cycle: 0,
            raise_at,
            flags: 0,
        };
        bus.mem[0x1000] = 0xFB;
        bus.mem[0x1001] = 0x76;
        let mut cpu = Cpu {
            pc: 0x1000,
            sp: 0xD000,
            pyboy: true,
            ..Default::default()
        };
        while cpu.pc != 0x0040 {
            cpu.step(&mut bus);
        }
        u16::from_le_bytes([bus.mem[0xCFFE], bus.mem[0xCFFF]])
    }

    #[test]
    fn pyboy_mode_halt_right_after_ei() {
        // Requested when the HALT runs: PyBoy's chunk ends there, and it returns to the HALT.
        assert_eq!(pyboy_ei_halt_return_address(1), 0x1001);
        // Requested later (no scheduler event in the HALT): PyBoy reran the HALT as a plain one.
        assert_eq!(pyboy_ei_halt_return_address(20), 0x1002);
    }
}
