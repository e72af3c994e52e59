//! What the JIT's compiled blocks (`crate::jit`) need of the bus: where a block may start, the
//! frame loop's next look, and the accesses of the instructions they run, each made at the bus
//! cycle the interpreter's `PlainStep` would make it.

use std::mem::offset_of;

use super::{pyboy_read_offsets, Bus};
use crate::cpu::{Cpu, CpuBus};
use crate::ppu::Ppu;

/// How a block reads an LCD register that only the CPU changes (`Bus::jit_lcd_register_read`):
/// in place, with nothing else to do but note PyBoy's moment of the access.
pub(crate) struct LcdRegisterRead {
    /// Where in the `Bus` the register is (a byte).
    pub(crate) value_at: usize,
    /// Where in the `Bus` PyBoy's moment of the last access to the LCD registers is noted (a
    /// `u64`, bus cycles), and that moment, in T-cycles after the instruction's start.
    pub(crate) access_noted_at: usize,
    pub(crate) access_after_start: u64,
}

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

    /// A block's read of `addr` by an instruction with `opcode`, made `elapsed` T-cycles after
    /// the instruction's start, when it can be made in place: `addr` is a register only the CPU
    /// changes (LCDC, SCY, SCX, LYC, BGP, OBP0, OBP1, WY, WX: `Ppu::cpu_register_offset`), which
    /// `read_io` returns as stored and whose read only notes PyBoy's moment of the access
    /// (`pyboy_lcd_access_at`, its lag from `pyboy_read_offsets`). Blocks run in the PyBoy timing
    /// only (`jit_code_offset`) and without OAM DMA (`read` would see the DMA's bus).
    pub(crate) fn jit_lcd_register_read(
        addr: u16,
        opcode: u8,
        elapsed: u64,
    ) -> Option<LcdRegisterRead> {
        let register_at = Ppu::cpu_register_offset(addr)?;
        let lag = elapsed.saturating_sub(pyboy_read_offsets(opcode, elapsed).0);
        Some(LcdRegisterRead {
            value_at: offset_of!(Bus, ppu) + register_at,
            access_noted_at: offset_of!(Bus, pyboy_lcd_access_at),
            access_after_start: elapsed - lag,
        })
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

    /// Runs a polling loop (`LDH A,(r)` of `register`, a test of A with opcode `test` and
    /// `operand`, `JR` with opcode `jump` back to the LDH) from the CPU's PC as the frame loop
    /// would, with plain steps (and their passes over rounds) until the PC reaches the loop's end,
    /// and its looks while they find nothing but that plain steps may go on
    /// (`look_finds_plain_steps`). Whether it reached the end and the frame loop need not look
    /// there. The loop is the one its block was compiled from: a block leaves after a write to
    /// the bank registers and after a write into its own bytes in work RAM, and a polling loop
    /// writes nothing.
    pub(crate) fn jit_run_poll(
        &mut self,
        cpu: &mut Cpu,
        register: u8,
        test: u8,
        operand: u8,
        jump: u8,
    ) -> bool {
        self.polls_in_blocks += 1;
        debug_assert_eq!(
            (0..6)
                .map(|i| self.peek_code(cpu.pc.wrapping_add(i)))
                .collect::<Vec<_>>(),
            [0xF0, register, test, operand, jump, 0xFA].map(Some),
            "not the polling loop the block was compiled from"
        );
        self.run_poll_rounds(cpu, 0xFF00 | register as u16, test, operand, jump)
    }

    /// `jit_run_poll`'s rounds without the interpreter's fetches and dispatch: each instruction's
    /// M-cycles, opcode note (`pyboy_opcode_fetched`) and registers as its plain step leaves them,
    /// the LDH's read at the end of its third M-cycle and its pass over rounds
    /// (`Cpu::skip_register_poll`), and a look before each instruction when one is due.
    fn run_poll_rounds(
        &mut self,
        cpu: &mut Cpu,
        addr: u16,
        test: u8,
        operand: u8,
        jump: u8,
    ) -> bool {
        let loop_start = cpu.pc;
        loop {
            if !self.may_step(cpu) {
                return false;
            }
            // LDH A,(r): opcode and operand fetches, then the read.
            self.cycles += 4;
            self.pyboy_opcode_fetched(0xF0);
            self.cycles += 8;
            cpu.a = self.read(addr);
            cpu.pc = loop_start.wrapping_add(2);
            cpu.skip_known_poll(self, addr, test, operand, jump);
            if !self.may_step(cpu) {
                return false;
            }
            self.cycles += 4;
            self.pyboy_opcode_fetched(test);
            self.cycles += 4;
            cpu.run_poll_test(self, test, operand);
            cpu.pc = loop_start.wrapping_add(4);
            if !self.may_step(cpu) {
                return false;
            }
            self.cycles += 4;
            self.pyboy_opcode_fetched(jump);
            self.cycles += 4;
            if !cpu.poll_jumps_back(jump) {
                cpu.pc = loop_start.wrapping_add(6);
                return self.may_step(cpu);
            }
            self.cycles += 4;
            cpu.pc = loop_start;
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
