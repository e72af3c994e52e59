//! SM83 instructions to Cranelift IR, each one as the interpreter runs it in a plain step
//! (`Cpu::execute_op` through `PlainStep` in the PyBoy timing): the same results, flags and
//! M-cycles, the accesses in the same order at the same bus cycles.

use std::mem::offset_of;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    types, AbiParam, BlockArg, InstBuilder, MemFlagsData, SigRef, Signature, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::Module;

use super::{poll_callback, read_callback, write_callback, BlockContext, BlockFn, POLL_FINISHED};
use crate::bus::Bus;
use crate::cpu::{closes_polling_loop, Cpu, FLAG_C, FLAG_H, FLAG_N, FLAG_Z};

/// Longest block, in instructions (blocks end earlier at a control transfer). 128 holds several
/// of 2048's calls of its tile routine, each from the caller's code through the routine's wait
/// for the PPU and its VRAM write back to the caller (78 blocks a frame in play, against 123
/// with 64 and 206 with 32; 256 gave 72, no faster, and compiled longer).
pub(super) const MAX_INSTRUCTIONS: usize = 128;
/// The same for a block of work RAM: code there is rewritten and compiled again (blargg's
/// cpu_instrs), and blocks of 128 instructions made its first 200 calls some 15% slower.
const MAX_INSTRUCTIONS_IN_RAM: usize = 64;

/// The stack pointers with which a block compiled for the stack in work RAM may run
/// (`Translator::stack_in_wram`): every address within `STACK_REACH` of such a pointer is in
/// work RAM or its echo (0xC000-0xFDFF), which blocks read and write in place.
pub(super) const STACK_WINDOW: std::ops::Range<u16> = 0xC100..0xFD00;
const STACK_REACH: i32 = 0x100;

/// T-cycles after which a run of instructions is cut into another segment (`split_segment`).
const SEGMENT_CYCLES: u64 = 64;

// Register slots: the eight 8-bit registers, then SP.
const A: usize = 0;
const F: usize = 1;
const B: usize = 2;
const C: usize = 3;
const D: usize = 4;
const E: usize = 5;
const H: usize = 6;
const L: usize = 7;
const SP: usize = 8;

const REGISTER_OFFSETS: [usize; 8] = [
    offset_of!(Cpu, a),
    offset_of!(Cpu, f),
    offset_of!(Cpu, b),
    offset_of!(Cpu, c),
    offset_of!(Cpu, d),
    offset_of!(Cpu, e),
    offset_of!(Cpu, h),
    offset_of!(Cpu, l),
];

/// The slot of the 3-bit register field (B C D E H L (HL) A); `None` for (HL).
fn r8(field: u8) -> Option<usize> {
    match field & 7 {
        0 => Some(B),
        1 => Some(C),
        2 => Some(D),
        3 => Some(E),
        4 => Some(H),
        5 => Some(L),
        6 => None,
        _ => Some(A),
    }
}

/// Compiles the block starting at `rom[offset]`: its code, and the T-cycles from its start to
/// the start of its last instruction. `None` when its first instruction stays with the
/// interpreter (or Cranelift fails).
pub(super) fn compile_block(
    module: &mut JITModule,
    name: &str,
    rom: &[u8],
    offset: usize,
    stack_in_wram: bool,
) -> Option<(BlockFn, u64)> {
    // The block stays in the 16 KiB bank holding `offset` (the CPU sees one bank at a time in
    // each half of the ROM space, and none can switch during a block). It follows jumps and
    // calls to constant addresses in the same half.
    let bank_start = offset & !0x3FFF;
    let code = &rom[bank_start..(bank_start + 0x4000).min(rom.len())];
    // Where the CPU sees it: 0x0000-0x3FFF for bank 0's offsets, 0x4000-0x7FFF otherwise (a
    // block is only looked up where the CPU fetches it, so the half is the one it came from).
    let half = if offset < 0x4000 { 0x0000 } else { 0x4000 };
    compile(
        module,
        name,
        code,
        half,
        offset & 0x3FFF,
        false,
        stack_in_wram,
    )
    .map(|(run, last_start, _)| (run, last_start))
}

/// Compiles the block starting at `wram[index]`, code in work RAM (0xC000 + `index`, as the
/// CPU sees it) as it is now: its code, its `last_start`, and the end (an index of `wram`,
/// exclusive) of the bytes it was compiled from, `wram[index..end]`. The block follows no jump
/// or call (its bytes stay one range), and it leaves after an instruction whose write in place
/// lands in that range (`BlockContext::code_end`): the code after it may have changed. Whoever
/// runs it checks first that those bytes are still the ones it was compiled from.
pub(super) fn compile_ram_block(
    module: &mut JITModule,
    name: &str,
    wram: &[u8],
    index: usize,
    stack_in_wram: bool,
) -> Option<(BlockFn, u64, usize)> {
    compile(module, name, wram, 0xC000, index, true, stack_in_wram)
}

/// `stack_in_wram`: the block may only run with SP in `STACK_WINDOW`
/// (`Translator::stack_in_wram`).
fn compile(
    module: &mut JITModule,
    name: &str,
    code: &[u8],
    half: u16,
    start_pos: usize,
    in_ram: bool,
    stack_in_wram: bool,
) -> Option<(BlockFn, u64, usize)> {
    let pointer = module.target_config().pointer_type();
    let mut ctx = module.make_context();
    ctx.func.signature.params.push(AbiParam::new(pointer));
    let read_sig = {
        let mut sig = module.make_signature();
        for ty in [pointer, types::I32, types::I64, types::I64, types::I32] {
            sig.params.push(AbiParam::new(ty));
        }
        sig.returns.push(AbiParam::new(types::I32));
        sig
    };
    let write_sig = {
        let mut sig = module.make_signature();
        for ty in [
            pointer,
            types::I32,
            types::I32,
            types::I64,
            types::I64,
            types::I32,
        ] {
            sig.params.push(AbiParam::new(ty));
        }
        sig.returns.push(AbiParam::new(types::I32));
        sig
    };
    // (context, pc, the loop's register, test, operand and jump, at, instr_start, opcode) ->
    // status: a write's shape.
    let poll_sig = write_sig.clone();
    let mut fctx = FunctionBuilderContext::new();
    let last_start;
    let code_end;
    {
        let builder = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let signatures = Signatures {
            read: read_sig,
            write: write_sig,
            poll: poll_sig,
        };
        let mut t = Translator::new(builder, pointer, signatures, code, half, start_pos);
        t.in_ram = in_ram;
        t.stack_in_wram = stack_in_wram;
        t.sp_offset = stack_in_wram.then_some(0);
        let count = t.translate();
        if count == 0 {
            t.b.ins().return_(&[]);
            t.b.seal_all_blocks();
            t.b.finalize(module.target_config());
            module.clear_context(&mut ctx);
            return None;
        }
        last_start = t.first_last_start.unwrap_or(t.last_start);
        code_end = t.high_water;
        t.b.seal_all_blocks();
        t.b.finalize(module.target_config());
    }
    let code = match super::define(module, name, &mut ctx) {
        Some(code) => code,
        None => {
            module.clear_context(&mut ctx);
            return None;
        }
    };
    // SAFETY: the function was built with the signature `(pointer) -> ()` under the host's
    // default calling convention, which is `extern "C"`'s.
    let run = unsafe { std::mem::transmute::<*const u8, BlockFn>(code) };
    Some((run, last_start, code_end))
}

/// One flag bit of a result: known at compile time, or a 0/1 value.
#[derive(Clone, Copy)]
enum Bit {
    Known(bool),
    Of(Value),
}

struct Translator<'a, 'c> {
    b: FunctionBuilder<'a>,
    context: Value,
    cpu: Value,
    start: Value,
    read_fn: Value,
    write_fn: Value,
    poll_fn: Value,
    /// Work RAM (`Bus::memory`'s first 8 KiB) and high RAM, read and written in place.
    wram: Value,
    hram: Value,
    pointer: cranelift_codegen::ir::Type,
    read_sig: SigRef,
    write_sig: SigRef,
    poll_sig: SigRef,
    regs: [Variable; 9],
    /// Slots written so far (stored back at every exit).
    written: u16,
    code: &'c [u8],
    /// Where the next byte is read, in `code` (the bank), and the half of the ROM space the CPU
    /// sees the bank in.
    pos: usize,
    half: u16,
    /// T-cycles since the block's start, at the point being translated.
    t: u64,
    /// The current instruction's start (T-cycles since the block's start) and opcode.
    instr_start: u64,
    opcode: u8,
    last_start: u64,
    /// OR of the "look now" answers of the current instruction's accesses.
    look: Option<Value>,
    /// After a polling loop (`poll`): the block's time is counted from the loop's end (`start`
    /// is then the bus cycle there), and the segment after it may only run if its last
    /// instruction starts before the frame loop's next look; so may the segments a long run of
    /// instructions is cut into (`split_segment`). `segment_check` is the test of the current
    /// segment (filled in at the end, `fill_segment_checks`).
    segment_check: Option<SegmentCheck>,
    /// The tests of ended segments, filled in once the whole block is translated, with the
    /// segment's start cycle and its `last_start`.
    segment_checks: Vec<(SegmentCheck, Value, u64)>,
    /// Instructions translated in the current segment (since the last polling loop).
    segment_instructions: usize,
    /// `t` where the current segment started.
    segment_t: u64,
    /// The first segment's `last_start`, once a loop has ended it (what `try_run` tests).
    first_last_start: Option<u64>,
    /// Code in work RAM (`compile_ram_block`): no jump is followed, and a write in place into the
    /// block's own bytes ends it after the instruction.
    in_ram: bool,
    /// Where the block starts in `code`, and one past the last byte read as an instruction or a
    /// polling loop so far.
    code_start: usize,
    high_water: usize,
    /// The return addresses of the calls followed so far, innermost last: a return to the
    /// innermost one goes on in the block (`return_to`).
    returns: Vec<u16>,
    /// The block runs only with SP in `STACK_WINDOW` when it starts. Then while SP, or HL, is
    /// that SP plus a known offset (`sp_offset`, `hl_offset`: pushes, pops, calls and returns,
    /// `LD HL,SP+e`, increments), an access there within `STACK_REACH` is to work RAM and made
    /// in place without testing the address (`stack_access`): compiled C keeps its locals and
    /// arguments on the stack.
    stack_in_wram: bool,
    sp_offset: Option<i32>,
    hl_offset: Option<i32>,
}

/// The test that lets a segment of a block run (`Translator::fill_segment_checks`).
struct SegmentCheck {
    /// The test's block, and the segment's first.
    check: cranelift_codegen::ir::Block,
    segment: cranelift_codegen::ir::Block,
    /// Where the block goes when the segment may not run: `None` to return (after a polling
    /// loop, whose callback left the CPU and the context as they are there), or a block that
    /// stores them first (`split_segment`).
    leave: Option<cranelift_codegen::ir::Block>,
}

/// A polling loop in a block's code (`Translator::polling_loop_at`).
struct PollingLoop {
    /// The position after its `JR`.
    end: usize,
    /// The `LDH`'s register (0x41 STAT or 0x44 LY), the test's opcode and operand, the `JR`'s
    /// opcode.
    register: u8,
    test: u8,
    operand: u8,
    jump: u8,
}

/// The callbacks' signatures.
struct Signatures {
    read: Signature,
    write: Signature,
    poll: Signature,
}

impl<'a, 'c> Translator<'a, 'c> {
    fn new(
        mut b: FunctionBuilder<'a>,
        pointer: cranelift_codegen::ir::Type,
        signatures: Signatures,
        code: &'c [u8],
        half: u16,
        start_pos: usize,
    ) -> Self {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let context = b.block_params(entry)[0];
        let flags = MemFlagsData::trusted();
        let cpu = b.ins().load(
            pointer,
            flags,
            context,
            offset_of!(BlockContext, cpu) as i32,
        );
        let start = b.ins().load(
            types::I64,
            flags,
            context,
            offset_of!(BlockContext, cycles) as i32,
        );
        let wram = b.ins().load(
            pointer,
            flags,
            context,
            offset_of!(BlockContext, wram) as i32,
        );
        let hram = b.ins().load(
            pointer,
            flags,
            context,
            offset_of!(BlockContext, hram) as i32,
        );
        let read_fn = b.ins().iconst(pointer, read_callback as *const () as i64);
        let write_fn = b.ins().iconst(pointer, write_callback as *const () as i64);
        let poll_fn = b.ins().iconst(pointer, poll_callback as *const () as i64);
        let read_sig = b.import_signature(signatures.read);
        let write_sig = b.import_signature(signatures.write);
        let poll_sig = b.import_signature(signatures.poll);
        let regs: [Variable; 9] = std::array::from_fn(|_| b.declare_var(types::I32));
        for (slot, var) in regs.iter().enumerate() {
            let value = if slot == SP {
                b.ins()
                    .uload16(types::I32, flags, cpu, offset_of!(Cpu, sp) as i32)
            } else {
                b.ins()
                    .uload8(types::I32, flags, cpu, REGISTER_OFFSETS[slot] as i32)
            };
            b.def_var(*var, value);
        }
        Translator {
            b,
            context,
            cpu,
            start,
            read_fn,
            write_fn,
            poll_fn,
            wram,
            hram,
            pointer,
            read_sig,
            write_sig,
            poll_sig,
            regs,
            written: 0,
            code,
            pos: start_pos,
            half,
            t: 0,
            instr_start: 0,
            opcode: 0,
            last_start: 0,
            look: None,
            segment_check: None,
            segment_checks: Vec::new(),
            segment_t: 0,
            segment_instructions: 0,
            first_last_start: None,
            in_ram: false,
            code_start: start_pos,
            high_water: start_pos,
            returns: Vec::new(),
            stack_in_wram: false,
            sp_offset: None,
            hl_offset: None,
        }
    }

    // ---- registers and constants ----

    fn get(&mut self, slot: usize) -> Value {
        self.b.use_var(self.regs[slot])
    }
    /// Sets a register; SP's or HL's known offset from the block's starting SP is forgotten
    /// (the instructions that keep it set it again after this).
    fn set(&mut self, slot: usize, value: Value) {
        self.b.def_var(self.regs[slot], value);
        self.written |= 1 << slot;
        match slot {
            SP => self.sp_offset = None,
            H | L => self.hl_offset = None,
            _ => {}
        }
    }
    fn konst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(types::I32, v)
    }
    fn pc(&self) -> u16 {
        self.half | self.pos as u16
    }
    /// Goes on translating at `target` if it is in this bank's half; false if not.
    fn follow(&mut self, target: u16) -> bool {
        if self.in_ram || target & 0xC000 != self.half {
            return false;
        }
        self.pos = (target & 0x3FFF) as usize;
        true
    }
    fn pair(&mut self, index: u8) -> Value {
        let (hi, lo) = match index & 3 {
            0 => (B, C),
            1 => (D, E),
            2 => (H, L),
            _ => return self.get(SP),
        };
        let hi = self.get(hi);
        let lo = self.get(lo);
        let hi = self.b.ins().ishl_imm_s(hi, 8);
        self.b.ins().bor(hi, lo)
    }
    /// `value` must be 0..=0xFFFF.
    fn set_pair(&mut self, index: u8, value: Value) {
        let (hi, lo) = match index & 3 {
            0 => (B, C),
            1 => (D, E),
            2 => (H, L),
            _ => return self.set(SP, value),
        };
        let high = self.b.ins().ushr_imm_s(value, 8);
        let low = self.b.ins().band_imm_s(value, 0xFF);
        self.set(hi, high);
        self.set(lo, low);
    }
    fn hl(&mut self) -> Value {
        self.pair(2)
    }
    fn mask16(&mut self, v: Value) -> Value {
        self.b.ins().band_imm_s(v, 0xFFFF)
    }
    fn mask8(&mut self, v: Value) -> Value {
        self.b.ins().band_imm_s(v, 0xFF)
    }
    /// 0/1 of `F`'s flag `mask`.
    fn flag(&mut self, mask: u8) -> Value {
        let f = self.get(F);
        let shift = mask.trailing_zeros() as i64;
        let bit = self.b.ins().ushr_imm_s(f, shift);
        self.b.ins().band_imm_s(bit, 1)
    }
    /// A 0/1 value of a comparison.
    fn test(&mut self, cc: IntCC, x: Value, y: i64) -> Value {
        let c = self.b.ins().icmp_imm_s(cc, x, y);
        self.b.ins().uextend(types::I32, c)
    }
    fn is_zero(&mut self, x: Value) -> Bit {
        Bit::Of(self.test(IntCC::Equal, x, 0))
    }
    fn set_flags(&mut self, z: Bit, n: Bit, h: Bit, c: Bit) {
        let mut known = 0i64;
        let mut parts = Vec::new();
        for (bit, shift) in [(z, 7), (n, 6), (h, 5), (c, 4)] {
            match bit {
                Bit::Known(true) => known |= 1 << shift,
                Bit::Known(false) => {}
                Bit::Of(v) => parts.push(self.b.ins().ishl_imm_s(v, shift)),
            }
        }
        let mut f = self.konst(known);
        for part in parts {
            f = self.b.ins().bor(f, part);
        }
        self.set(F, f);
    }
    fn keep(&mut self, mask: u8) -> Bit {
        Bit::Of(self.flag(mask))
    }

    // ---- time and the bus ----

    /// One M-cycle with no access (an idle or increment-unit cycle, or a fetch: the operands are
    /// read at compile time, from the ROM the CPU fetches them from).
    fn tick(&mut self) {
        self.t += 4;
    }
    fn fetch(&mut self) -> Option<u8> {
        let byte = *self.code.get(self.pos)?;
        self.pos += 1;
        self.high_water = self.high_water.max(self.pos);
        self.tick();
        Some(byte)
    }
    fn at(&mut self, t: u64) -> Value {
        self.b.ins().iadd_imm_s(self.start, t as i64)
    }
    fn note_look(&mut self, flag: Value) {
        self.look = Some(match self.look {
            Some(earlier) => self.b.ins().bor(earlier, flag),
            None => flag,
        });
    }
    /// Where an access to `addr` goes: work RAM or its echo, high RAM, or the bus (`None`),
    /// as `Bus::read`/`Bus::write` decide (no OAM DMA can be under way in a block).
    fn in_place_region(&mut self, addr: Value, region: Region) -> Value {
        let (lo, len) = match region {
            Region::Wram => (0xC000, 0x3E00),
            Region::Hram => (0xFF80, 0x7F),
        };
        let relative = self.b.ins().iadd_imm_s(addr, -lo);
        let inside = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, relative, len);
        match self.look {
            // After an access that asked for a look (an I/O write may have rescheduled), the
            // rest of the instruction's accesses take the bus's tested path, as a plain step's do.
            Some(look) => {
                let quiet = self.b.ins().icmp_imm_s(IntCC::Equal, look, 0);
                self.b.ins().band(inside, quiet)
            }
            None => inside,
        }
    }
    fn in_place_address(&mut self, addr: Value, region: Region) -> Value {
        let (base, mask) = match region {
            Region::Wram => (self.wram, 0x1FFF),
            Region::Hram => (self.hram, 0x7F),
        };
        let index = self.b.ins().band_imm_s(addr, mask);
        let index = self.b.ins().uextend(self.pointer, index);
        self.b.ins().iadd(base, index)
    }
    /// The access itself, once `addr` is known to be in `region`: a store of `value`, or a load
    /// when `None`. Returns (the value loaded, if a load; whether a store landed in this block's
    /// own code, if it is a block in work RAM storing there: `writes_own_code`).
    fn in_place(
        &mut self,
        addr: Value,
        region: Region,
        value: Option<Value>,
    ) -> (Option<Value>, Option<Value>) {
        let flags = MemFlagsData::trusted();
        let at = self.in_place_address(addr, region);
        match value {
            Some(v) => {
                self.b.ins().istore8(flags, v, at, 0);
                let own_code =
                    (self.in_ram && region == Region::Wram).then(|| self.writes_own_code(addr));
                (None, own_code)
            }
            None => (Some(self.b.ins().uload8(types::I32, flags, at, 0)), None),
        }
    }
    /// An access: in place when `addr` is in work or high RAM, else through the bus. `value`
    /// is written, or read when `None`; returns the value read.
    fn access(&mut self, addr: Value, value: Option<Value>) -> Value {
        let wram_block = self.b.create_block();
        let not_wram = self.b.create_block();
        let hram_block = self.b.create_block();
        let slow = self.b.create_block();
        let merge = self.b.create_block();
        let result = self.b.append_block_param(merge, types::I32);
        let look = self.b.append_block_param(merge, types::I32);
        let zero = self.konst(0);
        let in_wram = self.in_place_region(addr, Region::Wram);
        self.b.ins().brif(in_wram, wram_block, &[], not_wram, &[]);
        for (block, region) in [(wram_block, Region::Wram), (hram_block, Region::Hram)] {
            if region == Region::Hram {
                self.b.switch_to_block(not_wram);
                let in_hram = self.in_place_region(addr, Region::Hram);
                self.b.ins().brif(in_hram, hram_block, &[], slow, &[]);
            }
            self.b.switch_to_block(block);
            let (read, look) = self.in_place(addr, region, value);
            let (read, look) = (read.unwrap_or(zero), look.unwrap_or(zero));
            self.b
                .ins()
                .jump(merge, &[BlockArg::Value(read), BlockArg::Value(look)]);
        }
        self.b.switch_to_block(slow);
        let at = self.at(self.t);
        let start = self.at(self.instr_start);
        let opcode = self.konst(self.opcode as i64);
        let (read, asked) = match value {
            Some(v) => {
                let call = self.b.ins().call_indirect(
                    self.write_sig,
                    self.write_fn,
                    &[self.context, addr, v, at, start, opcode],
                );
                (zero, self.b.inst_results(call)[0])
            }
            None => {
                let call = self.b.ins().call_indirect(
                    self.read_sig,
                    self.read_fn,
                    &[self.context, addr, at, start, opcode],
                );
                let answer = self.b.inst_results(call)[0];
                let asked = self.b.ins().ushr_imm_s(answer, 8);
                (self.b.ins().band_imm_s(answer, 0xFF), asked)
            }
        };
        self.b
            .ins()
            .jump(merge, &[BlockArg::Value(read), BlockArg::Value(asked)]);
        self.b.switch_to_block(merge);
        self.note_look(look);
        result
    }
    /// 1 if a write in place to work RAM at `addr` (or its echo) lands in this block's own bytes
    /// (a block in work RAM: from its start to `BlockContext::code_end`), else 0.
    fn writes_own_code(&mut self, addr: Value) -> Value {
        let flags = MemFlagsData::trusted();
        let index = self.b.ins().band_imm_s(addr, 0x1FFF);
        let index = self.b.ins().uextend(types::I64, index);
        let from_start = self.b.ins().iadd_imm_s(index, -(self.code_start as i64));
        let code_end = self.b.ins().load(
            types::I64,
            flags,
            self.context,
            offset_of!(BlockContext, code_end) as i32,
        );
        let length = self.b.ins().iadd_imm_s(code_end, -(self.code_start as i64));
        let inside = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThan, from_start, length);
        self.b.ins().uextend(types::I32, inside)
    }
    fn read(&mut self, addr: Value) -> Value {
        self.tick();
        self.access(addr, None)
    }
    /// `read` of `addr`, which is the block's starting SP plus `offset` when that is known.
    fn read_stack(&mut self, addr: Value, offset: Option<i32>) -> Value {
        self.tick();
        self.stack_access(addr, None, offset)
    }
    fn write_stack(&mut self, addr: Value, value: Value, offset: Option<i32>) {
        self.tick();
        self.stack_access(addr, Some(value), offset);
    }
    /// `access`, in place in work RAM without testing `addr` when it is the block's starting SP
    /// plus a known `offset` within `STACK_REACH` (so in work RAM: `STACK_WINDOW`), and no access
    /// of this instruction may have asked for a look (after one that did, the rest take the
    /// tested path: `in_place_region`).
    fn stack_access(&mut self, addr: Value, value: Option<Value>, offset: Option<i32>) -> Value {
        let known = self.stack_in_wram
            && self.look.is_none()
            && offset.is_some_and(|o| (-STACK_REACH..=STACK_REACH).contains(&o));
        if !known {
            return self.access(addr, value);
        }
        let (read, look) = self.in_place(addr, Region::Wram, value);
        if let Some(look) = look {
            self.note_look(look);
        }
        read.unwrap_or_else(|| self.konst(0))
    }
    /// `read` of a constant address; in place when it is an LCD register that only the CPU
    /// changes (`Bus::jit_lcd_register_read`), noting PyBoy's moment of the access as the bus
    /// would: 2048's tile routine reads LCDC twice a tile.
    fn read_constant(&mut self, addr: u16) -> Value {
        self.tick();
        let elapsed = self.t - self.instr_start;
        let place = Bus::jit_lcd_register_read(addr, self.opcode, elapsed);
        match place {
            Some(place) if self.look.is_none() => {
                let flags = MemFlagsData::trusted();
                let bus = self.b.ins().load(
                    self.pointer,
                    flags,
                    self.context,
                    offset_of!(BlockContext, bus) as i32,
                );
                let value = self
                    .b
                    .ins()
                    .uload8(types::I32, flags, bus, place.value_at as i32);
                let access_at = self.at(self.instr_start + place.access_after_start);
                self.b
                    .ins()
                    .store(flags, access_at, bus, place.access_noted_at as i32);
                value
            }
            _ => {
                let addr = self.konst(addr as i64);
                self.access(addr, None)
            }
        }
    }
    fn write(&mut self, addr: Value, value: Value) {
        self.tick();
        self.access(addr, Some(value));
    }
    fn read_r(&mut self, field: u8) -> Value {
        match r8(field) {
            Some(slot) => self.get(slot),
            None => {
                let hl = self.hl();
                self.read_stack(hl, self.hl_offset)
            }
        }
    }
    fn write_r(&mut self, field: u8, value: Value) {
        match r8(field) {
            Some(slot) => self.set(slot, value),
            None => {
                let hl = self.hl();
                self.write_stack(hl, value, self.hl_offset)
            }
        }
    }
    fn push16(&mut self, value: Value) {
        let offset = self.sp_offset;
        let moved = |by: i32| offset.map(|o| o + by);
        let sp = self.get(SP);
        let sp = self.b.ins().iadd_imm_s(sp, -1);
        let sp = self.mask16(sp);
        self.set(SP, sp);
        let high = self.b.ins().ushr_imm_s(value, 8);
        self.write_stack(sp, high, moved(-1));
        let sp = self.b.ins().iadd_imm_s(sp, -1);
        let sp = self.mask16(sp);
        self.set(SP, sp);
        let low = self.mask8(value);
        self.write_stack(sp, low, moved(-2));
        self.sp_offset = moved(-2);
    }
    fn pop16(&mut self) -> Value {
        let offset = self.sp_offset;
        let moved = |by: i32| offset.map(|o| o + by);
        let sp = self.get(SP);
        let low = self.read_stack(sp, offset);
        let sp = self.b.ins().iadd_imm_s(sp, 1);
        let sp = self.mask16(sp);
        let high = self.read_stack(sp, moved(1));
        let sp = self.b.ins().iadd_imm_s(sp, 1);
        let sp = self.mask16(sp);
        self.set(SP, sp);
        self.sp_offset = moved(2);
        let high = self.b.ins().ishl_imm_s(high, 8);
        self.b.ins().bor(high, low)
    }

    // ---- exits ----

    /// Stores the registers and leaves the block with PC `pc` after `self.t` T-cycles.
    fn exit(&mut self, pc: Value) {
        let flags = MemFlagsData::trusted();
        self.store_written();
        self.b
            .ins()
            .istore16(flags, pc, self.cpu, offset_of!(Cpu, pc) as i32);
        if self.segment_instructions > 0 || self.first_last_start.is_none() {
            let cycles = self.at(self.t);
            let start = self.at(self.instr_start);
            let opcode = self.b.ins().iconst(types::I64, self.opcode as i64);
            for (value, field) in [
                (cycles, offset_of!(BlockContext, cycles)),
                (start, offset_of!(BlockContext, instr_start)),
                (opcode, offset_of!(BlockContext, opcode)),
            ] {
                self.b.ins().store(flags, value, self.context, field as i32);
            }
        }
        // Else nothing ran since a polling loop, whose callback left the context as the loop did.
        self.b.ins().return_(&[]);
    }
    /// Stores the registers written so far into the `Cpu`.
    fn store_written(&mut self) {
        let flags = MemFlagsData::trusted();
        for (slot, &offset) in REGISTER_OFFSETS.iter().enumerate() {
            if self.written & (1 << slot) != 0 {
                let value = self.get(slot);
                self.b.ins().istore8(flags, value, self.cpu, offset as i32);
            }
        }
        if self.written & (1 << SP) != 0 {
            let value = self.get(SP);
            self.b
                .ins()
                .istore16(flags, value, self.cpu, offset_of!(Cpu, sp) as i32);
        }
    }
    fn exit_to(&mut self, pc: u16) {
        let pc = self.konst(pc as i64);
        self.exit(pc);
    }
    /// A branch taken when `condition` (0/1): its path (`taken`, which exits) is translated
    /// with the time and registers as they are now, then the block goes on where it is not taken.
    fn side_exit(&mut self, condition: Value, taken: impl FnOnce(&mut Self)) {
        let taken_block = self.b.create_block();
        let go_on = self.b.create_block();
        self.b.ins().brif(condition, taken_block, &[], go_on, &[]);
        self.b.switch_to_block(taken_block);
        let (t, written, look) = (self.t, self.written, self.look);
        let (sp_offset, hl_offset) = (self.sp_offset, self.hl_offset);
        taken(self);
        (self.t, self.written, self.look) = (t, written, look);
        (self.sp_offset, self.hl_offset) = (sp_offset, hl_offset);
        self.b.switch_to_block(go_on);
    }
    /// After an instruction: leave if one of its accesses asked the frame loop to look.
    fn end_instruction(&mut self) {
        if let Some(look) = self.look.take() {
            let pc = self.pc();
            self.side_exit(look, |s| s.exit_to(pc));
        }
    }
    fn condition(&mut self, cc: u8) -> Value {
        let (mask, when_set) = match cc & 3 {
            0 => (FLAG_Z, false),
            1 => (FLAG_Z, true),
            2 => (FLAG_C, false),
            _ => (FLAG_C, true),
        };
        let bit = self.flag(mask);
        if when_set {
            bit
        } else {
            self.b.ins().bxor_imm_s(bit, 1)
        }
    }

    // ---- the instructions ----

    /// Translates instructions until the block ends; how many were translated.
    fn translate(&mut self) -> usize {
        let count = self.translate_segments();
        self.end_segment();
        self.fill_segment_checks();
        count
    }

    fn translate_segments(&mut self) -> usize {
        let mut count = 0;
        loop {
            let before = (
                self.pos,
                self.t,
                self.instr_start,
                self.opcode,
                self.last_start,
            );
            let opcode = match self.code.get(self.pos) {
                Some(&opcode) => opcode,
                None => break,
            };
            if count > 0 && self.segment_instructions > 0 {
                if let Some(polling_loop) = self.polling_loop_at(opcode) {
                    self.poll(polling_loop);
                    continue;
                }
            }
            if !self.supported(opcode, count == 0) {
                break;
            }
            if self.segment_instructions > 0 && self.t - self.segment_t >= SEGMENT_CYCLES {
                self.split_segment();
            }
            self.instr_start = self.t;
            self.opcode = opcode;
            self.last_start = self.t;
            self.fetch();
            // Counted from its start: its exits store the time (`exit`).
            self.segment_instructions += 1;
            match self.instruction(opcode) {
                Step::Next => {
                    count += 1;
                    self.end_instruction();
                    let max = if self.in_ram {
                        MAX_INSTRUCTIONS_IN_RAM
                    } else {
                        MAX_INSTRUCTIONS
                    };
                    if count == max {
                        let pc = self.pc();
                        self.exit_to(pc);
                        return count;
                    }
                }
                Step::Ended => return count + 1,
                Step::OutOfCode => {
                    // The instruction runs past the bank: leave it to the interpreter.
                    self.segment_instructions -= 1;
                    (
                        self.pos,
                        self.t,
                        self.instr_start,
                        self.opcode,
                        self.last_start,
                    ) = before;
                    break;
                }
            }
        }
        if count > 0 {
            // The previous instruction is the last one: exit before this one.
            let pc = self.pc();
            self.exit_to(pc);
        }
        count
    }

    /// If a polling loop starts at `self.pos` (`LDH A,(STAT)` or `LDH A,(LY)`, one test of A:
    /// `AND n`, `CP n` or `BIT b,A`, then `JR cc` back to the LDH: the loops
    /// `Cpu::skip_register_poll` passes over): its shape.
    fn polling_loop_at(&self, opcode: u8) -> Option<PollingLoop> {
        let bytes = self.code.get(self.pos..self.pos + 6)?;
        let polls = opcode == 0xF0
            && matches!(bytes[1], 0x41 | 0x44)
            && closes_polling_loop(bytes[2], bytes[3], bytes[4], bytes[5]);
        polls.then_some(PollingLoop {
            end: self.pos + 6,
            register: bytes[1],
            test: bytes[2],
            operand: bytes[3],
            jump: bytes[4],
        })
    }

    /// A polling loop, run as the interpreter's plain steps run it (`poll_callback`, with their
    /// passes over rounds) from the block: the block goes on after it, its time counted from the
    /// bus cycle where the loop ended, if the rest of the block starts before the frame loop's next
    /// look; else it leaves there. It leaves at once if the loop did not end before that look.
    fn poll(&mut self, polling_loop: PollingLoop) {
        let PollingLoop {
            end: loop_end,
            register,
            test,
            operand,
            jump,
        } = polling_loop;
        let flags = MemFlagsData::trusted();
        self.end_segment();
        if self.first_last_start.is_none() {
            self.first_last_start = Some(self.last_start);
        }
        // The callback reads and writes the registers in the `Cpu`.
        self.store_written();
        self.written = 0;
        let pc = self.konst(self.pc() as i64);
        let shape = self.konst(i64::from_le_bytes([
            register, test, operand, jump, 0, 0, 0, 0,
        ]));
        let at = self.at(self.t);
        let start = self.at(self.instr_start);
        let opcode = self.konst(self.opcode as i64);
        let call = self.b.ins().call_indirect(
            self.poll_sig,
            self.poll_fn,
            &[self.context, pc, shape, at, start, opcode],
        );
        let status = self.b.inst_results(call)[0];
        let finished = self.b.create_block();
        let left = self.b.create_block();
        let finished_flag = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, status, POLL_FINISHED as i64);
        self.b.ins().brif(finished_flag, finished, &[], left, &[]);
        self.b.switch_to_block(left);
        self.b.ins().return_(&[]);
        self.b.switch_to_block(finished);
        // The loop changes only A and F (LDH, the test, the jump).
        for slot in [A, F] {
            let value =
                self.b
                    .ins()
                    .uload8(types::I32, flags, self.cpu, REGISTER_OFFSETS[slot] as i32);
            self.b.def_var(self.regs[slot], value);
        }
        self.start = self.b.ins().load(
            types::I64,
            flags,
            self.context,
            offset_of!(BlockContext, cycles) as i32,
        );
        let check = self.b.create_block();
        let segment = self.b.create_block();
        self.b.ins().jump(check, &[]);
        self.b.switch_to_block(segment);
        self.segment_check = Some(SegmentCheck {
            check,
            segment,
            leave: None,
        });
        self.pos = loop_end;
        self.high_water = self.high_water.max(loop_end);
        self.t = 0;
        self.instr_start = 0;
        self.last_start = 0;
        self.segment_instructions = 0;
        self.segment_t = 0;
        self.look = None;
    }

    /// Ends the current segment before the next instruction: the rest of the block runs only if
    /// its next segment's last instruction starts before the frame loop's next look; else the
    /// block leaves here, as after any instruction. So a block whose end would come after that
    /// look runs as far as it may, where a test at its start would let none of it run.
    fn split_segment(&mut self) {
        self.end_segment();
        if self.first_last_start.is_none() {
            self.first_last_start = Some(self.last_start);
        }
        let check = self.b.create_block();
        let segment = self.b.create_block();
        let leave = self.b.create_block();
        self.b.ins().jump(check, &[]);
        self.b.switch_to_block(leave);
        let pc = self.pc();
        self.exit_to(pc);
        self.b.switch_to_block(segment);
        self.segment_check = Some(SegmentCheck {
            check,
            segment,
            leave: Some(leave),
        });
        self.segment_t = self.t;
    }

    /// Notes the test that lets the current segment run, if it is not the block's first.
    fn end_segment(&mut self) {
        if let Some(check) = self.segment_check.take() {
            self.segment_checks
                .push((check, self.start, self.last_start));
        }
    }

    /// Fills in the segments' tests (every block of the function is filled by now): a segment's
    /// last instruction must start before the frame loop's next look, else the block leaves at
    /// the segment's start.
    fn fill_segment_checks(&mut self) {
        let flags = MemFlagsData::trusted();
        for (segment_check, start, last_start) in std::mem::take(&mut self.segment_checks) {
            let SegmentCheck {
                check,
                segment,
                leave,
            } = segment_check;
            self.b.switch_to_block(check);
            let attention_at = self.b.ins().load(
                types::I64,
                flags,
                self.context,
                offset_of!(BlockContext, attention_at) as i32,
            );
            let last = self.b.ins().iadd_imm_s(start, last_start as i64);
            let fits = self
                .b
                .ins()
                .icmp(IntCC::UnsignedLessThan, last, attention_at);
            if let Some(leave) = leave {
                self.b.ins().brif(fits, segment, &[], leave, &[]);
                continue;
            }
            let leave = self.b.create_block();
            self.b.ins().brif(fits, segment, &[], leave, &[]);
            self.b.switch_to_block(leave);
            self.b.ins().return_(&[]);
        }
    }

    /// Whether the instruction at `self.pos` (opcode `opcode`) is translated; the others end the
    /// block before them.
    fn supported(&self, opcode: u8, first: bool) -> bool {
        let operand = self.code.get(self.pos + 1).copied();
        match opcode {
            // They change the CPU's mode, which plain steps never do.
            0x10 | 0x76 | 0xF3 | 0xFB | 0xD9 => false,
            0xD3 | 0xDB | 0xDD | 0xE3 | 0xE4 | 0xEB | 0xEC | 0xED | 0xF4 | 0xFC | 0xFD => false,
            // The interpreter passes over the polling loops these open (`skip_register_poll`):
            // no block starts with one (a loop inside a block is run by `poll`).
            0xF0 => operand.is_some() && !(first && matches!(operand, Some(0x41) | Some(0x44))),
            // JR NZ / JR NC back 3 to 5 bytes: perhaps a delay loop (`skip_delay_loop`).
            0x20 | 0x30 => !matches!(operand, Some(0xFB..=0xFD) | None),
            _ => true,
        }
    }

    fn instruction(&mut self, op: u8) -> Step {
        match self.instruction_inner(op) {
            Some(step) => step,
            None => Step::OutOfCode,
        }
    }

    fn instruction_inner(&mut self, op: u8) -> Option<Step> {
        match op {
            0x00 => {}
            0x40..=0x7F => {
                let v = self.read_r(op);
                self.write_r(op >> 3, v);
            }
            0x80..=0xBF => {
                let v = self.read_r(op);
                self.alu(op >> 3, v);
            }
            0xC6 | 0xCE | 0xD6 | 0xDE | 0xE6 | 0xEE | 0xF6 | 0xFE => {
                let n = self.fetch()?;
                let v = self.konst(n as i64);
                self.alu(op >> 3, v);
            }
            0x06 | 0x0E | 0x16 | 0x1E | 0x26 | 0x2E | 0x36 | 0x3E => {
                let n = self.fetch()?;
                let v = self.konst(n as i64);
                self.write_r(op >> 3, v);
            }
            0x04 | 0x0C | 0x14 | 0x1C | 0x24 | 0x2C | 0x34 | 0x3C => {
                let v = self.read_r(op >> 3);
                let r = self.b.ins().iadd_imm_s(v, 1);
                let r = self.mask8(r);
                let z = self.is_zero(r);
                let low = self.b.ins().band_imm_s(v, 0xF);
                let h = Bit::Of(self.test(IntCC::Equal, low, 0xF));
                let c = self.keep(FLAG_C);
                self.set_flags(z, Bit::Known(false), h, c);
                self.write_r(op >> 3, r);
            }
            0x05 | 0x0D | 0x15 | 0x1D | 0x25 | 0x2D | 0x35 | 0x3D => {
                let v = self.read_r(op >> 3);
                let r = self.b.ins().iadd_imm_s(v, -1);
                let r = self.mask8(r);
                let z = self.is_zero(r);
                let low = self.b.ins().band_imm_s(v, 0xF);
                let h = Bit::Of(self.test(IntCC::Equal, low, 0));
                let c = self.keep(FLAG_C);
                self.set_flags(z, Bit::Known(true), h, c);
                self.write_r(op >> 3, r);
            }
            0x01 | 0x11 | 0x21 | 0x31 => {
                let lo = self.fetch()? as i64;
                let hi = self.fetch()? as i64;
                let v = self.konst(hi << 8 | lo);
                self.set_pair(op >> 4, v);
            }
            0x03 | 0x13 | 0x23 | 0x33 | 0x0B | 0x1B | 0x2B | 0x3B => {
                let by = if op & 0x08 == 0 { 1 } else { -1 };
                let (sp_offset, hl_offset) = (self.sp_offset, self.hl_offset);
                let v = self.pair(op >> 4);
                let r = self.b.ins().iadd_imm_s(v, by as i64);
                let r = self.mask16(r);
                self.set_pair(op >> 4, r);
                match op >> 4 {
                    2 => self.hl_offset = hl_offset.map(|o| o + by),
                    3 => self.sp_offset = sp_offset.map(|o| o + by),
                    _ => {}
                }
                self.tick();
            }
            0x09 | 0x19 | 0x29 | 0x39 => {
                let hl = self.hl();
                let v = self.pair(op >> 4);
                let sum = self.b.ins().iadd(hl, v);
                let hl_low = self.b.ins().band_imm_s(hl, 0xFFF);
                let v_low = self.b.ins().band_imm_s(v, 0xFFF);
                let low_sum = self.b.ins().iadd(hl_low, v_low);
                let h = Bit::Of(self.test(IntCC::UnsignedGreaterThan, low_sum, 0xFFF));
                let c = Bit::Of(self.test(IntCC::UnsignedGreaterThan, sum, 0xFFFF));
                let z = self.keep(FLAG_Z);
                self.set_flags(z, Bit::Known(false), h, c);
                let sum = self.mask16(sum);
                self.set_pair(2, sum);
                self.tick();
            }
            0x02 | 0x12 => {
                let addr = self.pair(op >> 4);
                let a = self.get(A);
                self.write(addr, a);
            }
            0x22 | 0x32 => {
                let by = if op == 0x22 { 1 } else { -1 };
                let hl_offset = self.hl_offset;
                let hl = self.hl();
                let a = self.get(A);
                self.write_stack(hl, a, hl_offset);
                let r = self.b.ins().iadd_imm_s(hl, by as i64);
                let r = self.mask16(r);
                self.set_pair(2, r);
                self.hl_offset = hl_offset.map(|o| o + by);
            }
            0x0A | 0x1A => {
                let addr = self.pair(op >> 4);
                let v = self.read(addr);
                self.set(A, v);
            }
            0x2A | 0x3A => {
                let by = if op == 0x2A { 1 } else { -1 };
                let hl_offset = self.hl_offset;
                let hl = self.hl();
                let v = self.read_stack(hl, hl_offset);
                self.set(A, v);
                let r = self.b.ins().iadd_imm_s(hl, by as i64);
                let r = self.mask16(r);
                self.set_pair(2, r);
                self.hl_offset = hl_offset.map(|o| o + by);
            }
            0x08 => {
                let lo = self.fetch()? as i64;
                let hi = self.fetch()? as i64;
                let addr = hi << 8 | lo;
                let sp = self.get(SP);
                let low = self.mask8(sp);
                let high = self.b.ins().ushr_imm_s(sp, 8);
                let first = self.konst(addr);
                self.write(first, low);
                let second = self.konst((addr + 1) & 0xFFFF);
                self.write(second, high);
            }
            0x07 | 0x0F | 0x17 | 0x1F => {
                let a = self.get(A);
                let (r, c) = self.rotate(op >> 3, a);
                self.set_flags(Bit::Known(false), Bit::Known(false), Bit::Known(false), c);
                self.set(A, r);
            }
            0x27 => self.daa(),
            0x2F => {
                let a = self.get(A);
                let r = self.b.ins().bxor_imm_s(a, 0xFF);
                self.set(A, r);
                let f = self.get(F);
                let f = self.b.ins().bor_imm_s(f, (FLAG_N | FLAG_H) as i64);
                self.set(F, f);
            }
            0x37 => {
                let f = self.get(F);
                let f = self.b.ins().band_imm_s(f, FLAG_Z as i64);
                let f = self.b.ins().bor_imm_s(f, FLAG_C as i64);
                self.set(F, f);
            }
            0x3F => {
                let f = self.get(F);
                let f = self.b.ins().band_imm_s(f, (FLAG_Z | FLAG_C) as i64);
                let f = self.b.ins().bxor_imm_s(f, FLAG_C as i64);
                self.set(F, f);
            }
            0x18 => {
                let offset = self.fetch()? as i8;
                let target = self.pc().wrapping_add(offset as u16);
                self.tick();
                return Some(self.jump(target));
            }
            0x20 | 0x28 | 0x30 | 0x38 => {
                let offset = self.fetch()? as i8;
                let target = self.pc().wrapping_add(offset as u16);
                let taken = self.condition(op >> 3);
                self.side_exit(taken, |s| {
                    s.tick();
                    s.exit_to(target);
                });
            }
            0xC9 => {
                let pc = self.pop16();
                self.tick();
                return Some(self.return_to(pc));
            }
            0xC0 | 0xC8 | 0xD0 | 0xD8 => {
                self.tick();
                let taken = self.condition(op >> 3);
                self.side_exit(taken, |s| {
                    let pc = s.pop16();
                    s.tick();
                    s.exit(pc);
                });
            }
            0xC3 => {
                let lo = self.fetch()? as u16;
                let hi = self.fetch()? as u16;
                self.tick();
                return Some(self.jump(hi << 8 | lo));
            }
            0xC2 | 0xCA | 0xD2 | 0xDA => {
                let lo = self.fetch()? as u16;
                let hi = self.fetch()? as u16;
                let taken = self.condition(op >> 3);
                self.side_exit(taken, |s| {
                    s.tick();
                    s.exit_to(hi << 8 | lo);
                });
            }
            0xE9 => {
                // Also how code that pops its return address returns (2048's VRAM writer: POP
                // HL, INC SP past its argument, JP (HL)).
                let hl = self.hl();
                return Some(self.return_to(hl));
            }
            0xCD => {
                let lo = self.fetch()? as u16;
                let hi = self.fetch()? as u16;
                let ret = self.pc();
                self.tick();
                let ret_value = self.konst(ret as i64);
                self.push16(ret_value);
                return Some(self.call(hi << 8 | lo, ret));
            }
            0xC4 | 0xCC | 0xD4 | 0xDC => {
                let lo = self.fetch()? as u16;
                let hi = self.fetch()? as u16;
                let ret = self.pc();
                let taken = self.condition(op >> 3);
                self.side_exit(taken, |s| {
                    s.tick();
                    let ret = s.konst(ret as i64);
                    s.push16(ret);
                    s.exit_to(hi << 8 | lo);
                });
            }
            0xC7 | 0xCF | 0xD7 | 0xDF | 0xE7 | 0xEF | 0xF7 | 0xFF => {
                let ret = self.pc();
                self.tick();
                let ret_value = self.konst(ret as i64);
                self.push16(ret_value);
                return Some(self.call((op & 0x38) as u16, ret));
            }
            0xC5 | 0xD5 | 0xE5 | 0xF5 => {
                let v = if op == 0xF5 {
                    let a = self.get(A);
                    let a = self.b.ins().ishl_imm_s(a, 8);
                    let f = self.get(F);
                    self.b.ins().bor(a, f)
                } else {
                    self.pair(op >> 4)
                };
                self.tick();
                self.push16(v);
            }
            0xC1 | 0xD1 | 0xE1 | 0xF1 => {
                let v = self.pop16();
                if op == 0xF1 {
                    let a = self.b.ins().ushr_imm_s(v, 8);
                    let f = self.b.ins().band_imm_s(v, 0xF0);
                    self.set(A, a);
                    self.set(F, f);
                } else {
                    self.set_pair(op >> 4, v);
                }
            }
            0xCB => {
                let cb = self.fetch()?;
                self.cb(cb);
            }
            0xE0 => {
                let n = self.fetch()?;
                let addr = self.konst(0xFF00 | n as i64);
                let a = self.get(A);
                self.write(addr, a);
            }
            0xF0 => {
                let n = self.fetch()?;
                let v = self.read_constant(0xFF00 | n as u16);
                self.set(A, v);
            }
            0xE2 | 0xF2 => {
                let c = self.get(C);
                let addr = self.b.ins().bor_imm_s(c, 0xFF00);
                if op == 0xE2 {
                    let a = self.get(A);
                    self.write(addr, a);
                } else {
                    let v = self.read(addr);
                    self.set(A, v);
                }
            }
            0xEA | 0xFA => {
                let lo = self.fetch()? as i64;
                let hi = self.fetch()? as i64;
                if op == 0xEA {
                    let addr = self.konst(hi << 8 | lo);
                    let a = self.get(A);
                    self.write(addr, a);
                } else {
                    let v = self.read_constant((hi << 8 | lo) as u16);
                    self.set(A, v);
                }
            }
            0xE8 | 0xF8 => {
                let offset = self.fetch()? as i8 as i16 as u16;
                let sp = self.get(SP);
                let sp_low = self.b.ins().band_imm_s(sp, 0xF);
                let half = self.b.ins().iadd_imm_s(sp_low, (offset & 0xF) as i64);
                let h = Bit::Of(self.test(IntCC::UnsignedGreaterThan, half, 0xF));
                let sp_byte = self.mask8(sp);
                let low = self.b.ins().iadd_imm_s(sp_byte, (offset & 0xFF) as i64);
                let c = Bit::Of(self.test(IntCC::UnsignedGreaterThan, low, 0xFF));
                self.set_flags(Bit::Known(false), Bit::Known(false), h, c);
                let r = self.b.ins().iadd_imm_s(sp, offset as i64);
                let r = self.mask16(r);
                let moved = self.sp_offset.map(|o| o + offset as i16 as i32);
                if op == 0xE8 {
                    self.set(SP, r);
                    self.sp_offset = moved;
                    self.tick();
                    self.tick();
                } else {
                    self.set_pair(2, r);
                    self.hl_offset = moved;
                    self.tick();
                }
            }
            0xF9 => {
                let hl = self.hl();
                self.set(SP, hl);
                self.sp_offset = self.hl_offset;
                self.tick();
            }
            _ => unreachable!("opcode {op:02X} is not translated (`supported`)"),
        }
        Some(Step::Next)
    }

    /// A call to `target` that will return to `ret`: followed as a jump, its return address
    /// noted if it is.
    fn call(&mut self, target: u16, ret: u16) -> Step {
        let step = self.jump(target);
        if let Step::Next = step {
            self.returns.push(ret);
        }
        step
    }

    /// A jump to the PC `target` computes (a return, or `JP (HL)`): if a call was followed in
    /// this block, the block goes on at its return address when `target` is that address (the
    /// same instructions the frame loop would run next from there), and leaves for `target`
    /// otherwise; without one, it leaves.
    fn return_to(&mut self, target: Value) -> Step {
        let Some(ret) = self.returns.pop() else {
            self.exit(target);
            return Step::Ended;
        };
        let elsewhere = self.b.ins().icmp_imm_s(IntCC::NotEqual, target, ret as i64);
        self.side_exit(elsewhere, |s| s.exit(target));
        if self.follow(ret) {
            Step::Next
        } else {
            self.exit_to(ret);
            Step::Ended
        }
    }

    /// An unconditional transfer to a constant address: translation goes on there if it can,
    /// else the block ends.
    fn jump(&mut self, target: u16) -> Step {
        if self.follow(target) {
            Step::Next
        } else {
            self.exit_to(target);
            Step::Ended
        }
    }

    fn alu(&mut self, op: u8, v: Value) {
        let a = self.get(A);
        match op & 7 {
            0 | 1 | 2 | 3 | 7 => {
                let carry = if op & 7 == 1 || op & 7 == 3 {
                    self.flag(FLAG_C)
                } else {
                    self.konst(0)
                };
                let subtract = matches!(op & 7, 2 | 3 | 7);
                let a_low = self.b.ins().band_imm_s(a, 0xF);
                let v_low = self.b.ins().band_imm_s(v, 0xF);
                let (full, half) = if subtract {
                    let d = self.b.ins().isub(a, v);
                    let d = self.b.ins().isub(d, carry);
                    let hd = self.b.ins().isub(a_low, v_low);
                    let hd = self.b.ins().isub(hd, carry);
                    (d, hd)
                } else {
                    let s = self.b.ins().iadd(a, v);
                    let s = self.b.ins().iadd(s, carry);
                    let hs = self.b.ins().iadd(a_low, v_low);
                    let hs = self.b.ins().iadd(hs, carry);
                    (s, hs)
                };
                let r = self.mask8(full);
                let z = self.is_zero(r);
                let (h, c) = if subtract {
                    (
                        self.test(IntCC::SignedLessThan, half, 0),
                        self.test(IntCC::SignedLessThan, full, 0),
                    )
                } else {
                    (
                        self.test(IntCC::UnsignedGreaterThan, half, 0xF),
                        self.test(IntCC::UnsignedGreaterThan, full, 0xFF),
                    )
                };
                self.set_flags(z, Bit::Known(subtract), Bit::Of(h), Bit::Of(c));
                if op & 7 != 7 {
                    self.set(A, r);
                }
            }
            4 => {
                let r = self.b.ins().band(a, v);
                let z = self.is_zero(r);
                self.set_flags(z, Bit::Known(false), Bit::Known(true), Bit::Known(false));
                self.set(A, r);
            }
            5 | 6 => {
                let r = if op & 7 == 5 {
                    self.b.ins().bxor(a, v)
                } else {
                    self.b.ins().bor(a, v)
                };
                let z = self.is_zero(r);
                self.set_flags(z, Bit::Known(false), Bit::Known(false), Bit::Known(false));
                self.set(A, r);
            }
            _ => unreachable!(),
        }
    }

    /// The rotate/shift group (`Cpu::rotate`): the result and the carry out.
    fn rotate(&mut self, op: u8, v: Value) -> (Value, Bit) {
        let top = self.b.ins().ushr_imm_s(v, 7);
        let bottom = self.b.ins().band_imm_s(v, 1);
        let left = self.b.ins().ishl_imm_s(v, 1);
        let left = self.mask8(left);
        let right = self.b.ins().ushr_imm_s(v, 1);
        match op & 7 {
            0 => (self.b.ins().bor(left, top), Bit::Of(top)),
            1 => {
                let wrapped = self.b.ins().ishl_imm_s(bottom, 7);
                (self.b.ins().bor(right, wrapped), Bit::Of(bottom))
            }
            2 => {
                let carry = self.flag(FLAG_C);
                (self.b.ins().bor(left, carry), Bit::Of(top))
            }
            3 => {
                let carry = self.flag(FLAG_C);
                let carry = self.b.ins().ishl_imm_s(carry, 7);
                (self.b.ins().bor(right, carry), Bit::Of(bottom))
            }
            4 => (left, Bit::Of(top)),
            5 => {
                let sign = self.b.ins().band_imm_s(v, 0x80);
                (self.b.ins().bor(right, sign), Bit::Of(bottom))
            }
            6 => {
                let high = self.b.ins().ishl_imm_s(v, 4);
                let high = self.mask8(high);
                let low = self.b.ins().ushr_imm_s(v, 4);
                (self.b.ins().bor(high, low), Bit::Known(false))
            }
            _ => (right, Bit::Of(bottom)),
        }
    }

    fn cb(&mut self, op: u8) {
        let field = op & 7;
        let bit = (op >> 3) & 7;
        match op >> 6 {
            0 => {
                let v = self.read_r(field);
                let (r, c) = self.rotate(op >> 3, v);
                let z = self.is_zero(r);
                self.set_flags(z, Bit::Known(false), Bit::Known(false), c);
                self.write_r(field, r);
            }
            1 => {
                let v = self.read_r(field);
                let masked = self.b.ins().band_imm_s(v, 1 << bit);
                let z = self.is_zero(masked);
                let c = self.keep(FLAG_C);
                self.set_flags(z, Bit::Known(false), Bit::Known(true), c);
            }
            2 => {
                let v = self.read_r(field);
                let r = self.b.ins().band_imm_s(v, !(1i64 << bit) & 0xFF);
                self.write_r(field, r);
            }
            _ => {
                let v = self.read_r(field);
                let r = self.b.ins().bor_imm_s(v, 1 << bit);
                self.write_r(field, r);
            }
        }
    }

    /// DAA as `Cpu::execute_op` has it, both directions computed and the one N asks for kept.
    fn daa(&mut self) {
        let a = self.get(A);
        let carry = self.flag(FLAG_C);
        let half = self.flag(FLAG_H);
        let n = self.flag(FLAG_N);
        // After an addition.
        let above = self.test(IntCC::UnsignedGreaterThan, a, 0x99);
        let add_carry = self.b.ins().bor(carry, above);
        let plus60 = self.b.ins().iadd_imm_s(a, 0x60);
        let plus60 = self.mask8(plus60);
        let added = self.b.ins().select(add_carry, plus60, a);
        let low = self.b.ins().band_imm_s(added, 0xF);
        let low_above = self.test(IntCC::UnsignedGreaterThan, low, 9);
        let fix_low = self.b.ins().bor(half, low_above);
        let plus6 = self.b.ins().iadd_imm_s(added, 6);
        let plus6 = self.mask8(plus6);
        let added = self.b.ins().select(fix_low, plus6, added);
        // After a subtraction.
        let minus60 = self.b.ins().iadd_imm_s(a, -0x60);
        let minus60 = self.mask8(minus60);
        let subtracted = self.b.ins().select(carry, minus60, a);
        let minus6 = self.b.ins().iadd_imm_s(subtracted, -6);
        let minus6 = self.mask8(minus6);
        let subtracted = self.b.ins().select(half, minus6, subtracted);
        let r = self.b.ins().select(n, subtracted, added);
        let c = self.b.ins().select(n, carry, add_carry);
        let z = self.is_zero(r);
        self.set_flags(z, Bit::Of(n), Bit::Known(false), Bit::Of(c));
        self.set(A, r);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Region {
    Wram,
    Hram,
}

enum Step {
    /// The instruction falls through to the next one.
    Next,
    /// It always leaves the block (an unconditional control transfer).
    Ended,
    /// Its bytes run past the end of the bank.
    OutOfCode,
}
