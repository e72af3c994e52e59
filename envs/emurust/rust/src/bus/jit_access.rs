//! What the JIT's compiled blocks (`crate::jit`) need of the bus: where a block may start, the
//! frame loop's next look, and the accesses of the instructions they run, each made at the bus
//! cycle the interpreter's `PlainStep` would make it.

use super::Bus;
use crate::cpu::CpuBus;

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

    /// A block ran until bus cycle `cycles`; its last instruction started at `instr_start` with
    /// `opcode` (as `pyboy_opcode_fetched` would have noted it).
    #[inline(always)]
    pub(crate) fn jit_block_ran(&mut self, cycles: u64, instr_start: u64, opcode: u8) {
        self.cycles = cycles;
        self.pyboy_fetch_end = instr_start + 4;
        self.pyboy_opcode = opcode;
    }
}
