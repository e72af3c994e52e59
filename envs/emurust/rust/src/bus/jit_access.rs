//! What the JIT's compiled blocks (`crate::jit`) need of the bus: where a block may start, the
//! frame loop's next look, and the accesses of the instructions they run, each made at the bus
//! cycle the interpreter's `PlainStep` would make it.

use super::{Bus, PlainStep};
use crate::cpu::{Cpu, CpuBus};

impl Bus {
    /// Where in the ROM image the instruction at `pc` is, if a compiled block may run from it now:
    /// in the PyBoy-compatible timing with plain steps on, from ROM, with no OAM DMA transfer
    /// pending or running (its fetches would see the DMA's bus: `fetch_slow`). The byte at
    /// `rom()[offset]` is what the CPU fetches at `pc` until the next write to the bank registers.
    #[inline(always)]
    pub(crate) fn jit_code_offset(&self, pc: u16) -> Option<usize> {
        if !self.pyboy || !self.plain_steps || self.dma_busy_len != 0 || pc >= 0x8000 {
            return None;
        }
        let offset = self.cartridge.bank_offset(pc) + (pc as usize & 0x3FFF);
        // A block is compiled for one half of the ROM space (its constant addresses are there):
        // not for bank 0 seen in the upper half (MBC5) nor another bank in the lower (MBC1's
        // mode 1).
        if (offset < 0x4000) != (pc < 0x4000) {
            return None;
        }
        Some(offset)
    }

    /// Where in work RAM the instruction at `pc` is, if a compiled block may run from it now: as
    /// `jit_code_offset`, for code at 0xC000-0xDFFF (its echo is left to the interpreter).
    #[inline(always)]
    pub(crate) fn jit_ram_index(&self, pc: u16) -> Option<usize> {
        if !self.pyboy
            || !self.plain_steps
            || self.dma_busy_len != 0
            || !(0xC000..0xE000).contains(&pc)
        {
            return None;
        }
        Some(pc as usize - 0xC000)
    }

    /// Work RAM as the CPU sees it at 0xC000-0xDFFF (the code blocks there are compiled from).
    #[inline(always)]
    pub(crate) fn jit_wram(&self) -> &[u8] {
        &self.memory[..0x2000]
    }

    /// Work RAM (0x2000 bytes) and high RAM (0x7F bytes), which blocks access in place where
    /// `read` and `write` would.
    #[inline(always)]
    pub(crate) fn jit_memory(&mut self) -> (*mut u8, *mut u8) {
        (self.memory.as_mut_ptr(), self.hram.as_mut_ptr())
    }

    /// The frame loop's next look (`attention_due`): every instruction of a block must start
    /// before it, as each plain step does.
    #[inline(always)]
    pub(crate) fn jit_attention_at(&self) -> u64 {
        self.attention_at
    }

    /// An instruction's data read whose M-cycle ends at bus cycle `at`, as `PlainStep`'s
    /// `read_cycle` makes it (in the PyBoy timing `read_idu_cycle` is the same). `instr_start` and
    /// `opcode` are the instruction's (PyBoy times some reads from them: `pyboy_opcode_fetched`).
    /// Also returns whether the frame loop must look before the next instruction.
    #[inline]
    pub(crate) fn jit_read(
        &mut self,
        at: u64,
        instr_start: u64,
        opcode: u8,
        addr: u16,
    ) -> (u8, bool) {
        self.cycles = at;
        self.pyboy_fetch_end = instr_start + 4;
        self.pyboy_opcode = opcode;
        let value = self.read(addr);
        (value, self.attention_at == 0)
    }

    /// An instruction's write whose M-cycle ends at `at`, as `PlainStep`'s `write_cycle` makes
    /// it: with the tested tick (an earlier write of the same instruction may have rescheduled).
    /// Returns whether the frame loop must look before the next instruction.
    #[inline]
    pub(crate) fn jit_write(
        &mut self,
        at: u64,
        instr_start: u64,
        opcode: u8,
        addr: u16,
        value: u8,
    ) -> bool {
        self.cycles = at - 4;
        self.pyboy_fetch_end = instr_start + 4;
        self.pyboy_opcode = opcode;
        self.write_cycle(addr, value);
        self.attention_at == 0
    }

    /// Runs a polling loop (`LDH A,(r)`, a test of A with opcode `test`, `JR` with opcode `jump`
    /// back to the LDH) from the CPU's PC as the frame loop would, with plain steps (and their
    /// passes over rounds) until the PC reaches the loop's end, and its looks while they find
    /// nothing but that plain steps may go on (`look_finds_plain_steps`). Whether it reached the
    /// end and the frame loop need not look there.
    pub(crate) fn jit_run_poll(&mut self, cpu: &mut Cpu, test: u8, jump: u8) -> bool {
        self.polls_in_blocks += 1;
        macro_rules! by_opcodes {
            ($(($t:literal, $j:literal)),*) => {
                match (test, jump) {
                    $(($t, $j) => self.run_poll_rounds::<$t, $j>(cpu),)*
                    _ => self.run_poll_steps(cpu, cpu.pc.wrapping_add(6)),
                }
            };
        }
        by_opcodes!(
            (0xE6, 0x20),
            (0xE6, 0x28),
            (0xE6, 0x30),
            (0xE6, 0x38),
            (0xFE, 0x20),
            (0xFE, 0x28),
            (0xFE, 0x30),
            (0xFE, 0x38),
            (0xCB, 0x20),
            (0xCB, 0x28),
            (0xCB, 0x30),
            (0xCB, 0x38)
        )
    }

    /// `jit_run_poll` for a loop of these opcodes: each step's body is chosen at compile time.
    fn run_poll_rounds<const TEST: u8, const JUMP: u8>(&mut self, cpu: &mut Cpu) -> bool {
        let loop_start = cpu.pc;
        let loop_end = loop_start.wrapping_add(6);
        loop {
            if !self.may_step(cpu) {
                return false;
            }
            cpu.step_plain_expecting::<PlainStep<true>, 0xF0>(&mut PlainStep::<true>(self));
            if !self.may_step(cpu) {
                return false;
            }
            cpu.step_plain_expecting::<PlainStep<true>, TEST>(&mut PlainStep::<true>(self));
            if !self.may_step(cpu) {
                return false;
            }
            cpu.step_plain_expecting::<PlainStep<true>, JUMP>(&mut PlainStep::<true>(self));
            if cpu.pc == loop_end {
                return self.may_step(cpu);
            }
            if cpu.pc != loop_start {
                // Not the loop the block was compiled for (it cannot be, in ROM): step on.
                return self.run_poll_steps(cpu, loop_end);
            }
        }
    }

    /// `jit_run_poll` one plain step at a time, with the dispatch.
    fn run_poll_steps(&mut self, cpu: &mut Cpu, loop_end: u16) -> bool {
        loop {
            if !self.may_step(cpu) {
                return false;
            }
            cpu.step_plain::<PlainStep<true>, true>(&mut PlainStep::<true>(self));
            if cpu.pc == loop_end {
                return self.may_step(cpu);
            }
        }
    }

    /// Whether the frame loop would run the next instruction as a plain step now, looking first
    /// if it is due.
    #[inline(always)]
    fn may_step(&mut self, cpu: &Cpu) -> bool {
        !self.attention_due() || self.look_finds_plain_steps(cpu)
    }

    /// The frame loop's look (`GameBoy::run_until_frame_ends`, PyBoy timing) when it would only
    /// find that the next instruction may run as a plain step (and set its next look): not at
    /// the frame's check, nor when the CPU needs a slow step.
    fn look_finds_plain_steps(&mut self, cpu: &Cpu) -> bool {
        !self.frame_check_due()
            && !cpu.needs_slow_step::<Bus, true>(self)
            && self.plain_steps_from_here()
    }

    /// The bus cycle, and the start and opcode of the last instruction (as `jit_block_ran` takes
    /// them).
    pub(crate) fn jit_last_instruction(&self) -> (u64, u64, u64) {
        (
            self.cycles,
            self.pyboy_fetch_end - 4,
            self.pyboy_opcode as u64,
        )
    }

    /// A block ran until bus cycle `cycles`; its last instruction started at `instr_start` with
    /// `opcode` (as `pyboy_opcode_fetched` would have noted it).
    #[inline(always)]
    pub(crate) fn jit_block_ran(&mut self, cycles: u64, instr_start: u64, opcode: u8) {
        self.cycles = cycles;
        self.pyboy_fetch_end = instr_start + 4;
        self.pyboy_opcode = opcode;
    }
}
