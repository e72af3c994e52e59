//! Compiled blocks: runs of the PyBoy-compatible timing's plain steps translated to machine code.
//!
//! Between two looks of the frame loop (`Bus::attention_due`) the CPU runs plain steps, whose
//! only effects are on its registers, the clock and the bus accesses they make. A block is the
//! instructions from one ROM address on, following jumps and calls to constant addresses in the
//! same bank (and a followed call's return, while it returns to its call: checked as it runs), up
//! to a branch taken or `translate::MAX_INSTRUCTIONS`, translated with Cranelift
//! (from crates.io) into one function: the registers live in machine registers, operands are
//! constants, work and high RAM are read and written in place, every other access calls the bus
//! (`Bus::jit_read`/`jit_write`) at the bus cycle the interpreter would make it, and the time of
//! each instruction is added at compile time. So a block leaves the machine exactly as the same
//! plain steps do; the unit tests (`tests`) check it against the interpreter and the SM83 vectors,
//! and L3 compares the envs with PyBoy.
//!
//! A block's instructions run only where each starts before the frame loop's next look (as each
//! plain step would): it is cut into segments of some 64 T-cycles, each tested before it runs,
//! and it leaves before a segment whose last instruction would start after that look. It ends
//! after any instruction whose access made the bus ask for a look (an I/O write, a unit's
//! catch-up raising an interrupt or starting a frame). What the plain step does beyond a plain
//! instruction stays with the interpreter: instructions that change the CPU's mode (HALT, STOP,
//! EI, DI, RETI, the locking opcodes), the wait loops it passes over (`cpu::wait_loops`: the
//! delay loops' backward `JR`, and the polling loops' `LDH A,(STAT)` and `LDH A,(LY)` where a
//! block would start with one), and code outside ROM and work RAM.
//! Code in work RAM (0xC000-0xDFFF; blargg's cpu_instrs runs 94% of its instructions there) can
//! be rewritten at any time, so a block compiled from it (`RamBlock`: no jump followed, its bytes
//! one range) keeps the bytes it was compiled from and runs only while work RAM still holds them,
//! and it leaves after an instruction whose write lands in its own bytes; an address whose code
//! keeps changing is left to the interpreter after `MAX_COMPILES_IN_RAM` blocks.
//! A polling loop inside a block (2048 waits for the PPU before each VRAM write, some 60 times a
//! frame) is run from the block by `poll_callback` as the interpreter's plain steps run it (each
//! round's accesses and time, its passes over rounds, the frame loop's looks), and the block goes
//! on from the loop's end with its time counted from there, if the rest of it still starts
//! before the next look. A block is compiled the 16th time its address is reached and shared by
//! every emulator of the same ROM in the process (a `GameBoyVec` compiles each block once; blocks
//! of work RAM are shared by address and bytes).

#[cfg(test)]
mod tests;
mod translate;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

use crate::bus::Bus;
use crate::cpu::Cpu;

/// What a compiled block receives. The block reads `cycles` (the bus cycle at its first
/// instruction's start) and leaves in it the bus cycle after its last instruction, whose start and
/// opcode it leaves in `instr_start` and `opcode`.
#[repr(C)]
pub(crate) struct BlockContext {
    cpu: *mut Cpu,
    bus: *mut Bus,
    /// The bus's work RAM and high RAM, which blocks read and write in place.
    wram: *mut u8,
    hram: *mut u8,
    cycles: u64,
    instr_start: u64,
    opcode: u64,
    /// The frame loop's next look when the block started (it does not move during the block
    /// unless an access asks for a look, which ends the block, or a polling loop's callback
    /// makes the look that sets it).
    attention_at: u64,
    /// A block of code in work RAM: the end (an index of work RAM, exclusive) of the bytes it was
    /// compiled from, which a write of its own ends it at (`translate::compile_ram_block`).
    code_end: u64,
}

type BlockFn = unsafe extern "C" fn(*mut BlockContext);

/// One compiled block.
struct Block {
    run: BlockFn,
    /// T-cycles from the block's start to the start of its last instruction before its first
    /// polling loop (on the path that takes no branch): the block may run when that moment is
    /// before the frame loop's next look (the block tests its later parts itself).
    last_start: u64,
    /// Compiled for SP in `translate::STACK_WINDOW` (where it was when the block was compiled:
    /// the stack was in work RAM), and runs only with SP there; otherwise the interpreter runs
    /// its code.
    stack_in_wram: bool,
}

/// Table entries: not compiled yet, nothing to compile there (the first instruction is one the
/// interpreter keeps), or the address of a `Block`.
const UNTRIED: usize = 0;
const NO_BLOCK: usize = 1;

/// A block is compiled the time its address is reached this many times: code that runs once
/// or twice (start-up, a menu) costs less to interpret than to compile.
const RUNS_BEFORE_COMPILING: u8 = 16;

/// Work RAM's size: code there (0xC000-0xDFFF) may be compiled too (`RamBlock`).
const WRAM_SIZE: usize = 0x2000;

/// Blocks compiled at one address of work RAM at most: code there that keeps being rewritten
/// (a test ROM writing the instruction under test) is left to the interpreter.
const MAX_COMPILES_IN_RAM: u8 = 8;

/// A block of code in work RAM, and the bytes it was compiled from (`wram[start..end]`): it only
/// runs while work RAM still holds them, as code there can be rewritten at any time (by the
/// program, or by loading a state).
struct RamBlock {
    block: Block,
    bytes: Box<[u8]>,
    end: usize,
}

impl RamBlock {
    /// Whether work RAM holds this block's bytes from `index` on (where it was compiled).
    fn is_in(&self, wram: &[u8], index: usize) -> bool {
        wram.get(index..self.end) == Some(&self.bytes[..])
    }
}

/// The blocks of one ROM image.
struct SharedCode {
    rom: Box<[u8]>,
    /// By offset in the ROM image: `UNTRIED`, `NO_BLOCK` or a pointer to a block owned by
    /// `compiler` (written once, under its lock, after the block is finalised).
    table: Box<[AtomicUsize]>,
    /// By offset: how often an untried address was reached (a heuristic: emulators on other
    /// threads may lose each other's counts).
    reached: Box<[AtomicU8]>,
    /// Code in work RAM, by index (address 0xC000 + index): `UNTRIED`, `NO_BLOCK` or a pointer to
    /// a `RamBlock` owned by `compiler` (replaced, not freed, when the code there changed); how
    /// often the index was reached since (untried, or with other bytes than its block's); and how
    /// many blocks were compiled there.
    ram_table: Box<[AtomicUsize]>,
    ram_reached: Box<[AtomicU8]>,
    ram_compiled: Box<[AtomicU8]>,
    compiler: Mutex<Compiler>,
}

struct Compiler {
    module: Option<JITModule>,
    /// Boxed: the table points at them, so they must not move when the vector grows.
    #[allow(clippy::vec_box)]
    blocks: Vec<Box<Block>>,
    #[allow(clippy::vec_box)]
    ram_blocks: Vec<Box<RamBlock>>,
    /// Set when Cranelift cannot be used on this host (no executable memory, an unsupported
    /// ISA) or panicked: every block is then left to the interpreter.
    unavailable: bool,
    /// Tests: the next compilation panics, as a bug in Cranelift would.
    #[cfg(test)]
    panic_next: bool,
}

// SAFETY: a `JITModule` holds raw pointers into the executable memory it owns; nothing in it is
// tied to the thread that made it, and the `Compiler` is only ever used under its `Mutex`.
unsafe impl Send for Compiler {}

impl Drop for Compiler {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the compiler is dropped with its `SharedCode`, once no `Jit` refers to it,
            // so no block can be running or be called again, and the table that pointed at the
            // blocks is dropped with it.
            unsafe { module.free_memory() };
        }
    }
}

/// The ROMs with blocks in this process, so that emulators of the same ROM share them, and the
/// last few ROMs' blocks kept after their emulators are gone (a run that makes emulators one
/// after the other, as a benchmark or a test suite does, compiles each block once).
static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    live: Vec::new(),
    recent: VecDeque::new(),
});

struct Registry {
    live: Vec<Weak<SharedCode>>,
    recent: VecDeque<Arc<SharedCode>>,
}

const RECENT_ROMS_KEPT: usize = 4;

/// An emulator's handle on the compiled blocks of its ROM.
pub struct Jit {
    shared: Arc<SharedCode>,
    /// Blocks this emulator ran, and how many of them from work RAM (diagnostics, not machine
    /// state).
    pub blocks_run: u64,
    pub ram_blocks_run: u64,
}

impl Jit {
    pub fn for_rom(rom: &[u8]) -> Self {
        let mut registry = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
        registry.live.retain(|weak| weak.strong_count() > 0);
        let found = registry
            .live
            .iter()
            .filter_map(Weak::upgrade)
            .find(|shared| *shared.rom == *rom);
        let shared = found.unwrap_or_else(|| {
            let shared = Arc::new(SharedCode {
                rom: rom.into(),
                table: (0..rom.len()).map(|_| AtomicUsize::new(UNTRIED)).collect(),
                reached: (0..rom.len()).map(|_| AtomicU8::new(0)).collect(),
                ram_table: (0..WRAM_SIZE).map(|_| AtomicUsize::new(UNTRIED)).collect(),
                ram_reached: (0..WRAM_SIZE).map(|_| AtomicU8::new(0)).collect(),
                ram_compiled: (0..WRAM_SIZE).map(|_| AtomicU8::new(0)).collect(),
                compiler: Mutex::new(Compiler::new()),
            });
            registry.live.push(Arc::downgrade(&shared));
            shared
        });
        if !registry
            .recent
            .iter()
            .any(|kept| Arc::ptr_eq(kept, &shared))
        {
            if registry.recent.len() == RECENT_ROMS_KEPT {
                registry.recent.pop_front();
            }
            registry.recent.push_back(Arc::clone(&shared));
        }
        Jit {
            shared,
            blocks_run: 0,
            ram_blocks_run: 0,
        }
    }

    /// Runs the block at the CPU's PC if there is one and it may run now (see the module's
    /// comment), then the blocks after it for as long as the frame loop would come straight back
    /// here (no look due, the next one may run); returns whether one ran. The caller has checked
    /// that a plain step may run now. Not inlined: the interpreter's frame loop keeps its
    /// registers for its own steps.
    #[inline(never)]
    pub fn try_run(&mut self, cpu: &mut Cpu, bus: &mut Bus) -> bool {
        let mut ran = false;
        loop {
            let (block, code_end) = if cpu.pc < 0x8000 {
                let Some(offset) = bus.jit_code_offset(cpu.pc) else {
                    return ran;
                };
                let Some(block) = self.block_at(offset, cpu.sp) else {
                    return ran;
                };
                (block, 0)
            } else {
                let Some(index) = bus.jit_ram_index(cpu.pc) else {
                    return ran;
                };
                let Some(ram_block) = self.ram_block_at(bus.jit_wram(), index, cpu.sp) else {
                    return ran;
                };
                (&ram_block.block, ram_block.end as u64)
            };
            let start = bus.cycles;
            let attention_at = bus.jit_attention_at();
            if start + block.last_start >= attention_at
                || block.stack_in_wram && !translate::STACK_WINDOW.contains(&cpu.sp)
            {
                return ran;
            }
            let run = block.run;
            let (wram, hram) = bus.jit_memory();
            let mut context = BlockContext {
                cpu: &mut *cpu,
                bus: &mut *bus,
                wram,
                hram,
                cycles: start,
                instr_start: start,
                opcode: 0,
                attention_at,
                code_end,
            };
            // SAFETY: `run` was compiled by `translate` for the code at this ROM offset, which the
            // CPU fetches at its PC now (`jit_code_offset`), or for the bytes work RAM holds now
            // from the PC on (`ram_block_at` compared them). It reads and writes the `Cpu` fields
            // at their `offset_of!` offsets and otherwise only calls `read_callback`,
            // `write_callback` and `poll_callback` (before which it has stored its registers into
            // the `Cpu`, reloading after it those the loop changes) with this context, whose
            // pointers come from the exclusive borrows
            // above (not used again until it returns); it reads and writes work and high RAM
            // through `wram` and `hram` only where `Bus::read`/`Bus::write` would
            // (`translate::Translator::access`), at indices below 0x2000 and 0x80, and through
            // `bus` reads a `u8` and writes a `u64`, fields of those types at the `Bus` offsets
            // that `Bus::jit_lcd_register_read` gives (`Translator::read_constant`). Its code
            // stays mapped while `self.shared` lives.
            unsafe { run(&mut context) };
            bus.jit_block_ran(context.cycles, context.instr_start, context.opcode as u8);
            self.blocks_run += 1;
            self.ram_blocks_run += (code_end != 0) as u64;
            ran = true;
            if bus.attention_due() {
                return true;
            }
        }
    }

    /// The compiler of the ROM's blocks (tests).
    #[cfg(test)]
    fn compiler(&self) -> std::sync::MutexGuard<'_, Compiler> {
        self.shared.compiler.lock().unwrap()
    }

    /// Whether two handles share their blocks (tests).
    #[cfg(test)]
    pub(crate) fn shares_blocks_with(&self, other: &Jit) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The block at `offset`, compiled the 16th time it is reached untried (SP is `sp` then).
    #[inline(always)]
    fn block_at(&self, offset: usize, sp: u16) -> Option<&Block> {
        match self.shared.table[offset].load(Ordering::Acquire) {
            UNTRIED => {
                let reached = &self.shared.reached[offset];
                let times = reached.load(Ordering::Relaxed);
                if times < RUNS_BEFORE_COMPILING {
                    reached.store(times + 1, Ordering::Relaxed);
                    return None;
                }
                self.compile(offset, sp)
            }
            NO_BLOCK => None,
            // SAFETY: a pointer stored in the table is to a boxed block in `compiler.blocks`,
            // which are never removed while the `SharedCode` (kept alive by `self`) lives.
            address => Some(unsafe { &*(address as *const Block) }),
        }
    }

    /// The block of the code in work RAM at `index` (address 0xC000 + index), if one was
    /// compiled from the bytes `wram` holds there now; compiles one the 16th time the index is
    /// reached untried or with other bytes.
    #[inline(always)]
    fn ram_block_at(&self, wram: &[u8], index: usize, sp: u16) -> Option<&RamBlock> {
        let shared = &*self.shared;
        match shared.ram_table[index].load(Ordering::Acquire) {
            NO_BLOCK => None,
            entry => {
                if entry != UNTRIED {
                    // SAFETY: a pointer stored in the table is to a boxed block in
                    // `compiler.ram_blocks`, never removed while the `SharedCode` lives.
                    let ram_block = unsafe { &*(entry as *const RamBlock) };
                    if ram_block.is_in(wram, index) {
                        return Some(ram_block);
                    }
                }
                let reached = &shared.ram_reached[index];
                let times = reached.load(Ordering::Relaxed);
                if times < RUNS_BEFORE_COMPILING {
                    reached.store(times + 1, Ordering::Relaxed);
                    return None;
                }
                self.compile_in_ram(wram, index, sp)
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn compile_in_ram(&self, wram: &[u8], index: usize, sp: u16) -> Option<&RamBlock> {
        let shared = &*self.shared;
        let mut compiler = shared.compiler.lock().unwrap_or_else(|e| e.into_inner());
        shared.ram_reached[index].store(0, Ordering::Relaxed);
        let entry = shared.ram_table[index].load(Ordering::Acquire);
        if entry == NO_BLOCK {
            return None;
        }
        if entry != UNTRIED {
            // SAFETY: as in `ram_block_at`.
            let ram_block = unsafe { &*(entry as *const RamBlock) };
            if ram_block.is_in(wram, index) {
                // Another emulator of this ROM compiled these bytes meanwhile.
                return Some(ram_block);
            }
        }
        let compiled = &shared.ram_compiled[index];
        let address = if compiled.load(Ordering::Relaxed) >= MAX_COMPILES_IN_RAM {
            NO_BLOCK
        } else {
            compiled.store(compiled.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            // As in `compile`: a panic inside Cranelift leaves the code to the interpreter.
            let made = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compiler.compile_in_ram(wram, index, sp)
            }));
            made.unwrap_or_else(|_| {
                compiler.unavailable = true;
                NO_BLOCK
            })
        };
        if address == NO_BLOCK {
            // Nothing to compile there (or no more): the bytes of the last block are gone anyway.
            shared.ram_table[index].store(NO_BLOCK, Ordering::Release);
            return None;
        }
        shared.ram_table[index].store(address, Ordering::Release);
        drop(compiler);
        // SAFETY: as in `ram_block_at`.
        Some(unsafe { &*(address as *const RamBlock) })
    }

    #[cold]
    #[inline(never)]
    fn compile(&self, offset: usize, sp: u16) -> Option<&Block> {
        let shared = &*self.shared;
        let mut compiler = shared.compiler.lock().unwrap_or_else(|e| e.into_inner());
        // Another emulator of this ROM may have compiled it meanwhile.
        let entry = shared.table[offset].load(Ordering::Acquire);
        let address = if entry != UNTRIED {
            entry
        } else {
            // A panic inside Cranelift (a bug there) must not reach the emulator's caller: the
            // code is left to the interpreter, this block and every later one (the module may be
            // half updated).
            let compiled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compiler.compile(&shared.rom, offset, sp)
            }));
            let address = compiled.unwrap_or_else(|_| {
                compiler.unavailable = true;
                NO_BLOCK
            });
            shared.table[offset].store(address, Ordering::Release);
            address
        };
        drop(compiler);
        if address == NO_BLOCK {
            None
        } else {
            // SAFETY: as in `block_at`.
            Some(unsafe { &*(address as *const Block) })
        }
    }
}

impl Compiler {
    /// A compiler with no blocks (Cranelift is set up with the first).
    fn new() -> Self {
        Compiler {
            module: None,
            blocks: Vec::new(),
            ram_blocks: Vec::new(),
            unavailable: false,
            #[cfg(test)]
            panic_next: false,
        }
    }

    /// Cranelift's module, made with the first block; `None` where blocks cannot be compiled
    /// (no executable memory, an unsupported ISA, an earlier panic). `_block` names the block
    /// about to be compiled (tests inject a panic here).
    fn module(&mut self, _block: &str) -> Option<&mut JITModule> {
        if self.unavailable {
            return None;
        }
        #[cfg(test)]
        if std::mem::take(&mut self.panic_next) {
            panic!("a panic injected into the compilation of {_block}");
        }
        if self.module.is_none() {
            match new_module() {
                Some(module) => self.module = Some(module),
                None => {
                    self.unavailable = true;
                    return None;
                }
            }
        }
        self.module.as_mut()
    }

    /// Compiles the block at `offset` of `rom`, for the stack in work RAM if SP (`sp`) is in
    /// `translate::STACK_WINDOW`; its table entry.
    fn compile(&mut self, rom: &[u8], offset: usize, sp: u16) -> usize {
        let name = format!("block_{offset:x}");
        let Some(module) = self.module(&name) else {
            return NO_BLOCK;
        };
        let stack_in_wram = translate::STACK_WINDOW.contains(&sp);
        let Some((run, last_start)) =
            translate::compile_block(module, &name, rom, offset, stack_in_wram)
        else {
            return NO_BLOCK;
        };
        let block = Box::new(Block {
            run,
            last_start,
            stack_in_wram,
        });
        let address = &*block as *const Block as usize;
        self.blocks.push(block);
        address
    }

    /// Compiles the block of the code in work RAM at `index` as `wram` holds it now (for the
    /// stack in work RAM as `compile`); its table entry.
    fn compile_in_ram(&mut self, wram: &[u8], index: usize, sp: u16) -> usize {
        // The same index may be compiled again (other bytes): every function needs its own name.
        let name = format!("ram_{:x}_{}", 0xC000 + index, self.ram_blocks.len());
        let Some(module) = self.module(&name) else {
            return NO_BLOCK;
        };
        let stack_in_wram = translate::STACK_WINDOW.contains(&sp);
        let Some((run, last_start, end)) =
            translate::compile_ram_block(module, &name, wram, index, stack_in_wram)
        else {
            return NO_BLOCK;
        };
        let ram_block = Box::new(RamBlock {
            block: Block {
                run,
                last_start,
                stack_in_wram,
            },
            bytes: wram[index..end].into(),
            end,
        });
        let address = &*ram_block as *const RamBlock as usize;
        self.ram_blocks.push(ram_block);
        address
    }
}

fn new_module() -> Option<JITModule> {
    let mut flags = settings::builder();
    // Optimised: on 2048 in play a 480-frame call took 6.3-6.4 ms against 6.6 with "none"
    // (`examples/speed.rs --bench-play`), for a first call (the compiling) of 1.2 s against 0.85.
    flags.set("opt_level", "speed").ok()?;
    // The blocks are generated, not written: checking each function's IR only costs time.
    flags.set("enable_verifier", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    flags.set("use_colocated_libcalls", "false").ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    Some(JITModule::new(JITBuilder::with_isa(
        isa,
        default_libcall_names(),
    )))
}

/// A block's data read (see `Bus::jit_read`): the value, and bit 8 set if the frame loop must
/// look before the next instruction.
extern "C" fn read_callback(
    context: *mut BlockContext,
    addr: u32,
    at: u64,
    instr_start: u64,
    opcode: u32,
) -> u32 {
    // SAFETY: blocks pass the context `Jit::try_run` gave them, whose `bus` points to the bus it
    // borrowed exclusively for the call; no other reference to that bus is in use meanwhile.
    let bus = unsafe { &mut *(*context).bus };
    let (value, look) = bus.jit_read(at, instr_start, opcode as u8, addr as u16);
    value as u32 | (look as u32) << 8
}

/// A block's write (see `Bus::jit_write`): 1 if the frame loop must look before the next
/// instruction.
extern "C" fn write_callback(
    context: *mut BlockContext,
    addr: u32,
    value: u32,
    at: u64,
    instr_start: u64,
    opcode: u32,
) -> u32 {
    // SAFETY: as in `read_callback`.
    let bus = unsafe { &mut *(*context).bus };
    bus.jit_write(at, instr_start, opcode as u8, addr as u16, value as u8) as u32
}

/// `poll_callback`'s answers: the loop ended and the block may go on, or the block must leave.
const POLL_FINISHED: u32 = 0;
const POLL_LEFT: u32 = 1;

/// A polling loop inside a block (`translate::Translator::poll`), at `pc`, of the shape `shape`
/// (the `LDH`'s register, the test's opcode and operand and the `JR`'s opcode, bytes 0-3), from
/// bus cycle `at` (the previous instruction started at `instr_start` with `opcode`): runs it as
/// the interpreter's plain steps would while the frame loop would (`Bus::jit_run_poll`), and
/// leaves the context as a block that ended there would. `POLL_FINISHED` if the loop ended and
/// the frame loop need not look yet; else the block must leave (the CPU's PC is where it stopped).
extern "C" fn poll_callback(
    context: *mut BlockContext,
    pc: u32,
    shape: u32,
    at: u64,
    instr_start: u64,
    opcode: u32,
) -> u32 {
    // SAFETY: as in `read_callback`; the block stored its registers into this `Cpu` before the
    // call and reloads those the loop changes after it, so no other reference to it is in use.
    let context = unsafe { &mut *context };
    let (cpu, bus) = unsafe { (&mut *context.cpu, &mut *context.bus) };
    bus.jit_block_ran(at, instr_start, opcode as u8);
    cpu.pc = pc as u16;
    let [register, test, operand, jump] = shape.to_le_bytes();
    let finished = bus.jit_run_poll(cpu, register, test, operand, jump);
    (context.cycles, context.instr_start, context.opcode) = bus.jit_last_instruction();
    // The loop's looks may have set the next one further on.
    context.attention_at = bus.jit_attention_at();
    if finished {
        POLL_FINISHED
    } else {
        POLL_LEFT
    }
}

/// Declares and compiles one function in `module`, returning its finalised code.
fn define(
    module: &mut JITModule,
    name: &str,
    ctx: &mut cranelift_codegen::Context,
) -> Option<*const u8> {
    let id = module
        .declare_function(name, Linkage::Local, &ctx.func.signature)
        .ok()?;
    module.define_function(id, ctx).ok()?;
    module.clear_context(ctx);
    module.finalize_definitions().ok()?;
    Some(module.get_finalized_function(id))
}
