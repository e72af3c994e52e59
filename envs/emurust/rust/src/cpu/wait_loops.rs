//! Wait loops passed over in one step, as HALT passes over its idle cycles.
//!
//! Games and test ROMs wait in small loops: polling STAT or LY until the PPU reaches a mode or a
//! line (hundreds of times a frame in 2048, between its VRAM writes), or counting a register
//! down. While a loop's rounds can change nothing but its own registers and the clock, and
//! nothing else can happen meanwhile (no interrupt pending or raised, no unit due to act, no
//! stop of the caller's run loop: `CpuBus::quiet_cycles`), running k more rounds gives the same
//! machine as adding k rounds' cycles and setting the registers as the last round leaves them.
//! That is what these functions do, for the rounds that end before anything else could happen;
//! the rest run as usual. Each is checked against running every round (unit tests with every loop
//! form, L2 on real ROMs, whole save states compared); `Bus::skip_wait_loops` turns them off.
//! A `run_frame_with` hook sees only the instructions that actually run.

use super::{Cpu, CpuBus, FLAG_C, FLAG_H, FLAG_N, FLAG_Z};

/// T-cycles of one round of a polling loop: LDH A,(n) 12, the test 8, the taken JR 12.
const POLL_ROUND_CYCLES: u64 = 32;

impl Cpu {
    /// Called by an `LDH A,(register)` (STAT or LY) that has just read `self.a`. If it opens a
    /// polling loop (`LDH A,(r)`, one test of A: `AND n`, `CP n` or `BIT b,A`, then `JR cc` back
    /// to the LDH) and that value keeps the loop going, every further round reads the same value
    /// until the PPU changes the register, takes the jump again and leaves the registers as they
    /// are; the rounds before that change are passed over.
    #[cold]
    #[inline(never)]
    pub(super) fn skip_register_poll<B: CpuBus>(&mut self, bus: &mut B, register: u8) {
        let code = |i: u16| bus.peek_code(self.pc.wrapping_add(i));
        let (Some(test), Some(operand), Some(jump), Some(offset)) =
            (code(0), code(1), code(2), code(3))
        else {
            return;
        };
        if !closes_polling_loop(test, operand, jump, offset) {
            return;
        }
        let register = 0xFF00 | register as u16;
        self.skip_known_poll(bus, register, test, operand, jump);
    }

    /// `skip_register_poll` for a loop already known to be one, reading `register` (0xFF41 or
    /// 0xFF44) with that test and jump.
    #[inline(always)]
    pub(crate) fn skip_known_poll<B: CpuBus>(
        &mut self,
        bus: &mut B,
        register: u16,
        test: u8,
        operand: u8,
        jump: u8,
    ) {
        let mut round = self.clone();
        round.run_poll_test(bus, test, operand);
        if !round.poll_jumps_back(jump) {
            return;
        }
        let loop_start = self.pc.wrapping_sub(2);
        let quiet = bus.poll_quiet_cycles(loop_start, register, self.a);
        let rounds = quiet / POLL_ROUND_CYCLES;
        if rounds > 0 {
            bus.skip_wait_cycles(rounds * POLL_ROUND_CYCLES);
            // As the last skipped round's test left them; A is what this LDH just read again.
            self.f = round.f;
        }
    }

    /// A polling loop's test of A (`closes_polling_loop`: `AND n`, `CP n` or `BIT b,A`), as the
    /// interpreter runs it (`AND` keeps its result in A).
    #[inline(always)]
    pub(crate) fn run_poll_test<B: CpuBus>(&mut self, bus: &mut B, test: u8, operand: u8) {
        match test {
            0xE6 => self.alu(bus, 4, operand),
            0xFE => self.alu(bus, 7, operand),
            _ => {
                let bit_clear = self.a >> ((operand >> 3) & 7) & 1 == 0;
                self.f = (self.f & FLAG_C) | FLAG_H | if bit_clear { FLAG_Z } else { 0 };
            }
        }
    }

    /// Whether a polling loop's `JR cc` (opcode `jump`) jumps back with the flags as they are.
    #[inline(always)]
    pub(crate) fn poll_jumps_back(&self, jump: u8) -> bool {
        self.condition(jump >> 3)
    }

    /// Called by a `JR NZ` / `JR NC` (`jump`) that has just jumped back 3 to 5 bytes (`offset`)
    /// to the start of its loop. If the loop is a counting delay loop (`DEC r; JR NZ`,
    /// `SUB n; JR NC`, or `DEC rr; LD A,hi; OR lo; JR NZ` over BC, DE or HL), its rounds before
    /// the count runs out are passed over (the last one, which falls through, runs as usual).
    #[cold]
    #[inline(never)]
    pub(super) fn skip_delay_loop<B: CpuBus>(&mut self, bus: &mut B, jump: u8, offset: u8) {
        let start = self.pc;
        let body_len = 0u8.wrapping_sub(offset) - 2; // the bytes before the 2-byte JR
        let mut body = [0u8; 3];
        for (i, byte) in body.iter_mut().enumerate().take(body_len as usize) {
            match bus.peek_code(start.wrapping_add(i as u16)) {
                Some(b) => *byte = b,
                None => return,
            }
        }
        // Rounds that still jump back, and the cycles of one.
        let (rounds_left, round_cycles) = match (jump, body_len, body) {
            // The jump was taken: the count is not 0.
            (0x20, 1, [dec, _, _]) if dec & 0xC7 == 0x05 && dec != 0x35 => {
                (*self.count_register(dec >> 3) as u64 - 1, 16)
            }
            (0x30, 2, [0xD6, n, _]) => (self.a.checked_div(n).map_or(u64::MAX, u64::from), 20),
            (0x20, 3, [dec, ld, or]) if is_pair_test(dec, ld, or) => {
                (self.rp(dec >> 4) as u64 - 1, 28)
            }
            _ => return,
        };
        let rounds = rounds_left.min(bus.quiet_cycles(start) / round_cycles);
        if rounds == 0 {
            return;
        }
        bus.skip_wait_cycles(rounds * round_cycles);
        // The registers as the last skipped round leaves them.
        match body[0] {
            0xD6 => {
                let n = body[1];
                let before = self.a.wrapping_sub(((rounds - 1) as u8).wrapping_mul(n));
                self.a = before.wrapping_sub(n);
                self.set_flags(self.a == 0, true, before & 0xF < n & 0xF, false);
            }
            dec if dec & 0x07 == 0x05 => {
                let count = self.count_register(dec >> 3);
                *count -= rounds as u8;
                let half_borrow = (*count).wrapping_add(1) & 0xF == 0;
                self.f = (self.f & FLAG_C) | FLAG_N | if half_borrow { FLAG_H } else { 0 };
            }
            dec => {
                let pair = self.rp(dec >> 4) - rounds as u16;
                self.set_rp(dec >> 4, pair);
                let [hi, lo] = pair.to_be_bytes();
                self.a = hi | lo;
                self.f = 0; // OR of a non-zero value
            }
        }
    }

    /// The 8-bit register a `DEC r` (not `DEC (HL)`) with this 3-bit field counts down.
    fn count_register(&mut self, index: u8) -> &mut u8 {
        match index & 7 {
            0 => &mut self.b,
            1 => &mut self.c,
            2 => &mut self.d,
            3 => &mut self.e,
            4 => &mut self.h,
            5 => &mut self.l,
            _ => &mut self.a,
        }
    }
}

/// Whether the four bytes after an `LDH A,(r)` close a polling loop these functions pass over:
/// one test of A (`AND n`, `CP n` or `BIT b,A`), then `JR NZ` / `Z` / `NC` / `C` back to the LDH
/// (offset -6). Compiled blocks run such loops from inside them (`crate::jit`).
pub(crate) fn closes_polling_loop(test: u8, operand: u8, jump: u8, offset: u8) -> bool {
    let tests_a = matches!(test, 0xE6 | 0xFE) || test == 0xCB && operand & 0xC7 == 0x47;
    tests_a && jump & 0xE7 == 0x20 && offset == 0xFA
}

/// `DEC rr; LD A,hi; OR lo` (or lo then hi) over the same pair BC, DE or HL.
fn is_pair_test(dec: u8, ld: u8, or: u8) -> bool {
    matches!(
        (dec, ld, or),
        (0x0B, 0x78, 0xB1)
            | (0x0B, 0x79, 0xB0)
            | (0x1B, 0x7A, 0xB3)
            | (0x1B, 0x7B, 0xB2)
            | (0x2B, 0x7C, 0xB5)
            | (0x2B, 0x7D, 0xB4)
    )
}
