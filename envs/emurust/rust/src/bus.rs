//! The memory map and the clock.
//!
//! Every CPU bus cycle adds 4 T-cycles to `cycles`; the other units run lazily. Each one is
//! brought up to the current cycle ("synced") right before the CPU touches it, and all of them
//! are synced when bus time reaches `next_event`: the earliest moment any unit can raise an
//! interrupt or change what the CPU could observe (PPU stage boundary, timer overflow, serial
//! transfer end, or a deadline set by the frame loop). This gives the same results as stepping
//! every unit on every M-cycle, at a fraction of the cost; `tests/lazy_equals_stepped.rs`-style
//! unit checks (timer) and the timing test ROMs guard that equivalence.

use crate::apu::Apu;
use crate::cartridge::Cartridge;
use crate::cpu::CpuBus;
use crate::dma::OamDma;
use crate::interrupts;
use crate::joypad::Joypad;
use crate::ppu::{OamBugAccess, Ppu};
use crate::serial::Serial;
use crate::state::{StateError, StateReader, StateWriter};
use crate::timer::Timer;

mod jit_access;
mod plain_step;
pub use plain_step::PlainStep;

/// System counter bit whose falling edge steps the APU frame sequencer (DIV bit 4).
const FRAME_SEQUENCER_PERIOD: u64 = 1 << 13;

/// The largest cycle count a state may hold: 2**60 T-cycles is some 8,700 years at 4.19 MHz, and
/// leaves room for any run from it (2**32 - 1 frames of at most 70,224 cycles each) without the
/// 64-bit count wrapping, which would end every later frame after one instruction.
pub const MAX_STATE_CYCLES: u64 = 1 << 60;

pub struct Bus {
    /// Never replaced once the bus is made: `memory` holds a copy of its ROM, which fetches
    /// index without a bounds check (`Bus::cartridge` reads it from outside the crate).
    pub(crate) cartridge: Cartridge,
    pub ppu: Ppu,
    pub timer: Timer,
    pub joypad: Joypad,
    pub serial: Serial,
    pub apu: Apu,
    pub dma: OamDma,
    /// Work RAM (`WRAM_SIZE` bytes) followed by a copy of the ROM image (from `ROM_COPY_AT`):
    /// one buffer, so that a fetch window over either is an index range of it and a fetch one
    /// indexed load. The ROM never changes after loading, so the copy stays the cartridge's.
    memory: Box<[u8]>,
    pub hram: [u8; 0x7F],
    pub interrupt_enable: u8,
    pub interrupt_flags: u8,
    /// T-cycles since power-on (always a multiple of 4).
    pub cycles: u64,
    /// Earliest bus cycle at which the lazily-run units must be synced.
    next_event: u64,
    /// A cycle the owner wants `run_until_event` to stop at (e.g. the end of a frame's budget).
    pub deadline: u64,
    ppu_synced: u64,
    timer_synced: u64,
    /// PyBoy mode: the timer as it stood before the last timer event brought it up to date, the
    /// bus cycle it stood at then (`u64::MAX`: none, or a timer or IF write, an interrupt taken
    /// or a state loaded since) and IF's timer bit then. A timer access whose PyBoy moment the event had passed (PyBoy's moments
    /// come before ours in the same instruction) replays the timer from here
    /// (`pyboy_timer_at`).
    timer_before_event: Timer,
    timer_before_event_at: u64,
    timer_flag_before_event: u8,
    /// Verification switch: make every PPU stage boundary an event (the results must not change).
    pub eager_ppu: bool,
    /// Let the CPU pass over the rounds of a wait loop (polling STAT or LY, or counting down) that
    /// cannot change anything but its registers and the clock (`cpu::wait_loops`); a
    /// verification switch like `eager_ppu` (the results must not change), on by default.
    pub skip_wait_loops: bool,
    /// T-cycles passed over that way by this emulator (a diagnostic, not machine state).
    pub wait_cycles_skipped: u64,
    /// Polling loops run from inside compiled blocks (`crate::jit`; a diagnostic).
    pub polls_in_blocks: u64,
    /// Let the frame loop run instructions as `PlainStep`s between its looks (`attention_at`);
    /// off, every instruction takes the CPU's general step. A verification switch like
    /// `eager_ppu` (the results must not change), on by default.
    pub plain_steps: bool,
    /// Instructions the frame loop ran through the CPU's general step (a diagnostic: with
    /// `plain_steps` on, only each frame's first, those near an event, and those the CPU's state
    /// asks for: halted, after EI, taking an interrupt).
    pub general_steps: u64,
    /// Bus cycles at which the PPU / timer next need to run (u64::MAX: not before an access).
    ppu_event: u64,
    timer_event: u64,
    /// Bus cycles [start, end) during which OAM DMA owns one of the buses: CPU accesses below
    /// 0xFF00 then take the slow path `read_during_dma`/`write_during_dma` (see dma.rs).
    dma_busy: (u64, u64),
    /// `dma_busy.1 - dma_busy.0` (0 when the window is empty).
    dma_busy_len: u64,
    /// PyBoy 2.8.1 compatibility (configuration): I/O reads of LY/STAT and DIV see the value at
    /// the moment PyBoy reads them (see `pyboy_read_offsets`).
    pub pyboy: bool,
    /// PyBoy mode: bus cycle at the end of the current instruction's opcode fetch, its first
    /// M-cycle (PyBoy samples the LCD and the timer for its data read at offsets after the
    /// instruction's start, see `pyboy_read_offsets`). Stored as it is at the fetch, the one
    /// store per instruction this mode costs.
    pyboy_fetch_end: u64,
    /// PyBoy mode: the current instruction's opcode (its read and write offsets are looked up
    /// only on the rare reads and writes that need them), and where PyBoy's LCD clock restarted
    /// from 0 when the LCD was last switched off (see `pyboy_write_offset`).
    pyboy_opcode: u8,
    pyboy_lcd_off_at: u64,
    /// PyBoy mode: PyBoy's moment of the last CPU access to 0xFF40-0xFF4B, at which PyBoy
    /// ticks its LCD (pyboy/core/mb.py:571-572, 821-822; see `GameBoy::pyboy_ends_frame_one_step_later`).
    pyboy_lcd_access_at: u64,
    /// Where opcode and operand fetches can read memory directly: addresses `lo..lo + len` (a
    /// ROM half or a work-RAM mirror) map to index `base + (addr - lo)` of `memory`, and
    /// `base + len <= memory.len()`. Empty (`len` 0) until a fetch outside it opens one (`fetch_slow`), and closed by
    /// whatever could change what those addresses read: a write to the bank registers, a DMA
    /// transfer, a state load.
    fetch_window: FetchWindow,
    /// The frame loop's next look at whether to stop: the deadline, or 0 once the PPU has
    /// started a frame (set where the PPU runs or is written, so the loop tests one number).
    frame_check_at: u64,
    /// The frame loop's next look at anything but the next instruction (`attention_due`): at
    /// most `frame_check_at`, at least `PLAIN_STEP_CYCLES` before the next event, and 0 after
    /// whatever may have made the CPU's plain step wrong: an I/O write, or HALT, EI, RETI or a
    /// lock-up (`CpuBus::request_attention`). The loop then tests one number per instruction
    /// instead of the frame's end, the CPU's flags and IME & IE & IF, and the plain step's
    /// M-cycles need not test for events (`PlainStep`). Events, and with them interrupt requests
    /// and frame starts, only happen in the general steps taken near them, after which the loop
    /// always looks again; the other places that zero it (a reschedule, a read that raised a
    /// request, a new deadline) keep that true should a unit ever act outside its events.
    attention_at: u64,
}

/// The longest instruction (CALL), in T-cycles: a plain step that starts this far before the
/// next event cannot reach it.
const PLAIN_STEP_CYCLES: u64 = 24;

/// Work RAM's size, and where the ROM copy starts in `Bus::memory`.
const WRAM_SIZE: usize = 0x2000;
const ROM_COPY_AT: usize = WRAM_SIZE;

#[derive(Clone, Copy, Default)]
struct FetchWindow {
    lo: u16,
    len: u32,
    base: usize,
}

/// When PyBoy 2.8.1 samples the LCD and the timer for an instruction's data read, in T-cycles
/// after the instruction starts (read from PyBoy's opcode implementations: it adds an opcode's
/// cycles in one or two lumps around the access and ticks the LCD at an extra "memory access
/// offset" for a few opcodes). Our reads happen at the end of the M-cycle that does them, `elapsed`
/// T-cycles after the instruction starts; that tells the two reads of POP and RET apart.
fn pyboy_read_offsets(opcode: u8, elapsed: u64) -> (u64, u64) {
    match opcode {
        0xF0 => (4, 4),        // LDH A,(n)
        0xFA => (8, 8),        // LD A,(nn)
        0xF2 => (0, 0),        // LD A,(C)
        0x1A | 0x7E => (4, 0), // LD A,(DE) / LD A,(HL): the LCD one M-cycle later
        0xCB => (4, 4),        // CB-prefixed (HL) operand
        // POP: PyBoy reads the low byte at 0 and the high byte at 4 (ours at 8 and 12).
        0xC1 | 0xD1 | 0xE1 | 0xF1 => {
            let offset = elapsed.saturating_sub(8);
            (offset, offset)
        }
        // RET and RETI read at 4 and 8 (ours at 8 and 12); a taken RET cc at 8 and 12 (ours at
        // 12 and 16).
        0xC9 | 0xD9 | 0xC0 | 0xC8 | 0xD0 | 0xD8 => {
            let offset = elapsed.saturating_sub(4);
            (offset, offset)
        }
        _ => (0, 0), // LD r,(HL), ALU (HL), INC/DEC (HL), LD A,(BC)/(HL+)/(HL-)
    }
}

/// When PyBoy 2.8.1 makes an instruction's data write, in T-cycles after the instruction starts
/// (pyboy/core/opcodes.py adds the cycles before the access: `LD (nn),A` 8, `LDH (n),A`,
/// `LD (HL),n` and `INC/DEC (HL)` 4, CB-prefixed `(HL)` 8; the stack writes of PUSH and RST at 8
/// and 12, of a CALL at 16 and 20, each 4 before ours; the other stores, `LD (nn),SP`'s two
/// included, 0). `elapsed` is ours, as for reads.
/// A write to LCDC that switches the LCD off resets PyBoy's LCD clock at that moment
/// (pyboy/core/mb.py:821-826 ticks the LCD at the CPU's cycle counter, then lcd.py:124-132 zeroes
/// the clock), and its frames while the LCD stays off are counted from there (lcd.py:416-420).
fn pyboy_write_offset(opcode: u8, elapsed: u64) -> u64 {
    match opcode {
        0xEA => 8,
        0xE0 | 0x34 | 0x35 | 0x36 => 4,
        0xCB => 8,
        // PUSH, RST, CALL and a taken CALL cc
        0xC5 | 0xD5 | 0xE5 | 0xF5 | 0xC7 | 0xCF | 0xD7 | 0xDF | 0xE7 | 0xEF | 0xF7 | 0xFF
        | 0xCD | 0xC4 | 0xCC | 0xD4 | 0xDC => elapsed.saturating_sub(4),
        _ => 0,
    }
}

impl Bus {
    pub fn new(cartridge: Cartridge) -> Self {
        let memory = [&[0; WRAM_SIZE][..], cartridge.rom()]
            .concat()
            .into_boxed_slice();
        let mut bus = Bus {
            cartridge,
            ppu: Ppu::new(),
            timer: Timer::new(),
            joypad: Joypad::default(),
            serial: Serial::default(),
            apu: Apu::new(),
            dma: OamDma::default(),
            memory,
            hram: [0; 0x7F],
            interrupt_enable: 0,
            interrupt_flags: 0xE1,
            cycles: 0,
            next_event: 0,
            deadline: u64::MAX,
            ppu_synced: 0,
            timer_synced: 0,
            timer_before_event: Timer::new(),
            timer_before_event_at: u64::MAX,
            timer_flag_before_event: 0,
            eager_ppu: false,
            skip_wait_loops: true,
            wait_cycles_skipped: 0,
            polls_in_blocks: 0,
            plain_steps: true,
            general_steps: 0,
            ppu_event: 0,
            timer_event: 0,
            dma_busy: (0, 0),
            dma_busy_len: 0,
            pyboy: false,
            pyboy_fetch_end: 4,
            pyboy_opcode: 0,
            pyboy_lcd_off_at: 0,
            pyboy_lcd_access_at: 0,
            fetch_window: FetchWindow::default(),
            frame_check_at: u64::MAX,
            attention_at: 0,
        };
        bus.reschedule();
        bus
    }

    /// One M-cycle of bus time.
    #[inline(always)]
    fn tick(&mut self) {
        self.cycles += 4;
        if self.cycles >= self.next_event {
            self.handle_events();
        }
    }

    /// Runs the units whose event is due; the others catch up when next touched.
    #[inline(never)]
    fn handle_events(&mut self) {
        if self.dma.is_active() {
            self.sync_dma();
        }
        if self.dma_busy_len != 0 && self.cycles >= self.dma_busy.1 {
            self.set_dma_busy((0, 0));
        }
        if self.cycles >= self.ppu_event {
            self.sync_ppu();
        }
        if self.cycles >= self.timer_event {
            if self.pyboy {
                self.timer_before_event = self.timer.clone();
                self.timer_before_event_at = self.timer_synced;
                self.timer_flag_before_event = self.interrupt_flags & interrupts::TIMER;
            }
            self.sync_timer();
        }
        self.serial.sync(self.cycles, &mut self.interrupt_flags);
        self.reschedule();
    }

    /// Brings every unit to the current cycle and computes the next event.
    #[inline(never)]
    pub fn sync_all(&mut self) {
        self.attention_at = 0;
        self.sync_dma();
        self.sync_ppu();
        self.sync_timer();
        self.serial.sync(self.cycles, &mut self.interrupt_flags);
        self.reschedule();
    }

    fn reschedule(&mut self) {
        self.attention_at = 0; // the next event may now be nearer
        let mut next = self.deadline;
        // While OAM DMA runs, every PPU stage is an event (OAM scans must see the bytes copied by
        // then); otherwise only the stages that can raise an interrupt or end a frame are (PyBoy
        // mode too: its lagged LY/STAT reads look up a history that catch-up records as well).
        let every_stage = self.eager_ppu || self.dma.is_active();
        let ppu_dots = self.ppu.dots_until_next_event(every_stage);
        self.ppu_event = if ppu_dots == u32::MAX {
            u64::MAX
        } else {
            self.ppu_synced + ppu_dots as u64
        };
        next = next.min(self.ppu_event);
        self.timer_event = match self.timer.m_cycles_until_interrupt() {
            Some(m) => self.timer_synced + 4 * m,
            None => u64::MAX,
        };
        next = next.min(self.timer_event);
        if self.dma.is_active() {
            // Copy the last bytes when the transfer ends: after that the CPU may overwrite the source.
            next = next.min(self.dma.busy_window().1);
        }
        if let Some(end) = self.serial.next_event() {
            next = next.min(end);
        }
        // Never in the past: an event due now is handled at the next M-cycle boundary.
        self.next_event = next.max(self.cycles + 1);
    }

    fn sync_ppu(&mut self) {
        let elapsed = self.cycles - self.ppu_synced;
        if elapsed > 0 {
            self.ppu_synced = self.cycles;
            self.ppu.tick(elapsed as u32, &mut self.interrupt_flags);
            self.note_frame_start();
        }
    }

    /// Brings the timer (and the APU frame sequencer, which counts DIV edges) to now.
    fn sync_timer(&mut self) {
        self.sync_timer_to(self.cycles);
    }

    /// Brings the timer (and the APU's frame sequencer it clocks) up to bus cycle `at`, which
    /// must not be before where it stands.
    fn sync_timer_to(&mut self, at: u64) {
        let elapsed = at - self.timer_synced;
        if elapsed == 0 {
            return;
        }
        self.timer_synced = at;
        // The sequencer's steps: DIV's falling edges, or PyBoy's own count (`PyBoySequencer`).
        let counter = self
            .timer
            .counter
            .wrapping_add(self.apu.pyboy_sequencer.phase) as u64;
        let sequencer_steps =
            (counter + elapsed) / FRAME_SEQUENCER_PERIOD - counter / FRAME_SEQUENCER_PERIOD;
        self.apu.frame_sequencer_steps(sequencer_steps);
        self.timer.advance(elapsed / 4, &mut self.interrupt_flags);
    }

    /// Copies the OAM DMA bytes that are due by now (PPU must be synced after this, not before).
    fn sync_dma(&mut self) {
        loop {
            if let Some((source, index, count)) = self.dma.due_run(self.cycles) {
                if source >= 0xC000 {
                    // Work RAM (and its echo): one copy. A run stays inside the page it started
                    // in (at most 0xA0 bytes from a page start), so inside work RAM.
                    let start = (source & 0x1FFF) as usize;
                    self.ppu
                        .dma_write_oam_run(index, &self.memory[start..start + count]);
                } else {
                    for i in 0..count {
                        let value = self.dma_source_read(source.wrapping_add(i as u16));
                        self.ppu.dma_write_oam(index + i, value);
                    }
                }
            } else if let Some((source, index)) = self.dma.next_due(self.cycles) {
                let value = self.dma_source_read(source);
                self.ppu.dma_write_oam(index, value);
            } else {
                return;
            }
        }
    }

    #[inline]
    fn dma_source_read(&self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x7FFF => self.cartridge.read_rom(addr),
            0x8000..=0x9FFF => self.ppu.vram()[(addr - 0x8000) as usize],
            0xA000..=0xBFFF => self.cartridge.read_ram(addr),
            // 0xE000 and up reach work RAM through the echo wiring.
            _ => self.memory[(addr & 0x1FFF) as usize],
        }
    }

    /// What the CPU reads at `addr` now.
    #[inline(always)]
    pub fn read(&mut self, addr: u16) -> u8 {
        if addr < 0xFF00 {
            if self.in_dma_window() {
                return self.read_during_dma(addr);
            }
            if addr < 0x8000 {
                return self.cartridge.read_rom(addr);
            }
            if (0xC000..0xFE00).contains(&addr) {
                return self.memory[(addr & 0x1FFF) as usize];
            }
        } else if addr >= 0xFF80 && addr != 0xFFFF {
            return self.hram[(addr & 0x7F) as usize];
        }
        self.read_slow(addr)
    }

    /// `dma_busy.0 <= cycles < dma_busy.1`, in one comparison, after a test of the empty window
    /// that every access outside a transfer stops at (`handle_events` empties it once it is over).
    #[inline(always)]
    fn in_dma_window(&self) -> bool {
        self.dma_busy_len != 0 && self.cycles.wrapping_sub(self.dma_busy.0) < self.dma_busy_len
    }

    fn set_dma_busy(&mut self, window: (u64, u64)) {
        // While a transfer may own a bus, fetches take the checked path.
        self.fetch_window.len = 0;
        self.dma_busy = window;
        self.dma_busy_len = window.1.saturating_sub(window.0);
    }

    #[inline]
    fn dma_conflicts(&self, addr: u16) -> bool {
        crate::dma::is_vram_bus(addr) == crate::dma::is_vram_bus(self.dma.bus_address(self.cycles))
    }

    /// A CPU read below 0xFF00 while OAM DMA owns a bus (DMG): OAM reads 0xFF, the DMA's bus
    /// yields the byte the DMA is moving now, the other bus works as usual.
    #[cold]
    fn read_during_dma(&mut self, addr: u16) -> u8 {
        if addr >= 0xFE00 {
            return 0xFF;
        }
        if self.dma_conflicts(addr) {
            self.sync_dma();
            return self.dma_source_read(self.dma.bus_address(self.cycles));
        }
        match addr {
            0x0000..=0x7FFF => self.cartridge.read_rom(addr),
            0xC000..=0xFDFF => self.memory[(addr & 0x1FFF) as usize],
            _ => self.read_slow(addr),
        }
    }

    /// A CPU write below 0xFF00 while OAM DMA owns a bus: lost on OAM and on the DMA's bus.
    #[cold]
    fn write_during_dma(&mut self, addr: u16, value: u8) {
        if addr >= 0xFE00 || self.dma_conflicts(addr) {
            return;
        }
        match addr {
            0xC000..=0xFDFF => self.memory[(addr & 0x1FFF) as usize] = value,
            _ => self.write_slow(addr, value),
        }
    }

    /// `read_io`, noting an interrupt request that a unit's catch-up raised on the way (none
    /// does before its event today; see `attention_at`).
    #[inline(never)]
    fn read_slow(&mut self, addr: u16) -> u8 {
        let requests = self.interrupt_flags;
        let value = self.read_io(addr);
        if self.interrupt_flags != requests {
            self.attention_at = 0;
        }
        value
    }

    #[inline(always)]
    fn read_io(&mut self, addr: u16) -> u8 {
        match addr {
            0x8000..=0x9FFF => {
                self.sync_ppu();
                if !self.pyboy {
                    self.ppu.read_vram(addr)
                } else if self.pyboy_blocks_access(false, false) {
                    0xFF
                } else {
                    self.ppu.vram()[(addr - 0x8000) as usize]
                }
            }
            0xA000..=0xBFFF => {
                self.cartridge.sync_clock(self.cycles);
                self.cartridge.read_ram(addr)
            }
            0xFE00..=0xFE9F => {
                self.sync_dma();
                self.sync_ppu();
                self.oam_bug(OamBugAccess::Read);
                if self.dma.blocks_oam(self.cycles) {
                    0xFF
                } else if !self.pyboy {
                    self.ppu.read_oam(addr)
                } else if self.pyboy_blocks_access(true, false) {
                    0xFF
                } else {
                    self.ppu.oam()[(addr - 0xFE00) as usize]
                }
            }
            0xFEA0..=0xFEFF => {
                self.oam_bug(OamBugAccess::Read);
                0x00
            }
            0xFF00 => self.joypad.read(),
            0xFF01 | 0xFF02 => {
                self.serial.sync(self.cycles, &mut self.interrupt_flags);
                self.serial.read(addr, self.cycles)
            }
            0xFF04..=0xFF07 => {
                if self.pyboy && addr == 0xFF05 {
                    // PyBoy brings its timer up to its own moment of the read; when ours has not
                    // run past it, so does ours, so that a write later in the instruction (INC
                    // (HL) and the CB operations on (HL) write TIMA back) can land at PyBoy's
                    // moment of that write too (see the write side).
                    let at = self.pyboy_read_at(self.pyboy_read_offsets().1);
                    if self.sync_timer_to_access(at) == at {
                        return self.timer.read(addr);
                    }
                    if let Some((timer, _)) = self.pyboy_timer_at(at) {
                        return timer.read(addr);
                    }
                }
                self.sync_timer();
                if self.pyboy && addr == 0xFF04 {
                    let lag = self.pyboy_lag(self.pyboy_read_offsets().1);
                    return (self.timer.counter.wrapping_sub(lag as u16) >> 8) as u8;
                }
                if self.pyboy && addr == 0xFF05 {
                    let lag = self.pyboy_lag(self.pyboy_read_offsets().1);
                    return self.timer.tima_ago(lag);
                }
                self.timer.read(addr)
            }
            0xFF0F => self.interrupt_flags | 0xE0,
            0xFF10..=0xFF3F => {
                if self.pyboy {
                    // PyBoy reads at its own moment, its APU brought up to it.
                    let at = self.pyboy_read_at(self.pyboy_read_offsets().1);
                    self.sync_timer_to_access(at);
                } else {
                    self.sync_timer();
                }
                self.apu.read(addr, self.cycles)
            }
            0xFF40..=0xFF4B if self.pyboy => {
                let lag = self.pyboy_lag(self.pyboy_read_offsets().0);
                // Compiled blocks read the registers only the CPU changes in place, noting this
                // moment as `jit_lcd_register_read` says.
                self.pyboy_lcd_access_at = self.cycles - lag;
                match addr {
                    0xFF46 => self.dma.register,
                    0xFF41 | 0xFF44 => {
                        self.sync_ppu();
                        self.ppu.read_register_ago(addr, lag)
                    }
                    _ => self.ppu.read_register(addr),
                }
            }
            0xFF46 => self.dma.register,
            0xFF41 | 0xFF44 => {
                self.sync_ppu();
                self.ppu.read_register(addr)
            }
            // Only the CPU changes these (LCDC, the scroll and window positions, LYC, the
            // palettes): the PPU need not catch up to read them.
            0xFF40..=0xFF4B => self.ppu.read_register(addr),
            0xFFFF => self.interrupt_enable,
            _ => 0xFF,
        }
    }

    /// An instruction-stream read outside the fetch window: the usual read, then a window opened
    /// on the region holding `addr` if it is plain memory and no DMA transfer is pending.
    #[inline(never)]
    fn fetch_slow(&mut self, addr: u16) -> u8 {
        let value = self.read(addr);
        if self.dma_busy_len == 0 {
            self.fetch_window = match addr {
                0x0000..=0x7FFF => FetchWindow {
                    lo: addr & 0x4000,
                    len: 0x4000,
                    base: ROM_COPY_AT + self.cartridge.bank_offset(addr),
                },
                0xC000..=0xDFFF => FetchWindow {
                    lo: 0xC000,
                    len: 0x2000,
                    base: 0,
                },
                0xE000..=0xFDFF => FetchWindow {
                    lo: 0xE000,
                    len: 0x1E00,
                    base: 0,
                },
                _ => FetchWindow::default(),
            };
        }
        value
    }

    /// PyBoy mode: the cycle from which PyBoy counts frames since the LCD was last switched off.
    pub fn pyboy_lcd_off_at(&self) -> u64 {
        self.pyboy_lcd_off_at
    }

    /// PyBoy mode: PyBoy's moment of the last CPU access to 0xFF40-0xFF4B.
    pub fn pyboy_lcd_access_at(&self) -> u64 {
        self.pyboy_lcd_access_at
    }

    /// PyBoy mode, at the end of the first frame after the LCD was switched on: the bus cycle at
    /// which PyBoy first looked at that frame's end (`Ppu::take_pyboy_stretch_look`).
    pub fn take_pyboy_stretch_look(&mut self) -> Option<u64> {
        let look = self.ppu.take_pyboy_stretch_look()?;
        // The PPU's clock stands at `ppu_synced`, and both count the same T-cycles.
        Some(self.ppu_synced - (self.ppu.pyboy_elapsed() - look))
    }

    /// PyBoy mode: the bus cycle at which the current instruction started.
    pub fn pyboy_instr_start(&self) -> u64 {
        self.pyboy_fetch_end.saturating_sub(4)
    }

    /// PyBoy mode: PyBoy's moment of the current instruction's data write (made now), at which
    /// its units see the write: the instruction's start plus the cycles it adds before the access.
    fn pyboy_write_at(&self) -> u64 {
        let start = self.pyboy_instr_start();
        start + pyboy_write_offset(self.pyboy_opcode, self.cycles - start)
    }

    /// PyBoy mode: `pyboy_read_offsets` for the read made now.
    fn pyboy_read_offsets(&self) -> (u64, u64) {
        pyboy_read_offsets(self.pyboy_opcode, self.cycles - self.pyboy_instr_start())
    }

    /// PyBoy mode: for the three opcodes whose data access PyBoy times with its "memory access
    /// offset" (LD (DE),A, LD A,(DE), LD A,(HL): pyboy/core/opcodes.py sets it to 4 around the
    /// access), how long before now PyBoy makes it (its LCD then sees the access 4 T-cycles into
    /// the instruction; ours comes at the end of the second M-cycle). `None` for every other
    /// access, which PyBoy lets through VRAM and OAM whatever the LCD does (`Ppu::pyboy_blocks`).
    fn pyboy_lcd_access_ago(&self) -> Option<u64> {
        matches!(self.pyboy_opcode, 0x12 | 0x1A | 0x7E).then(|| self.pyboy_lag(4))
    }

    /// PyBoy mode: whether PyBoy refuses this access to OAM (else VRAM), a write (else a read).
    fn pyboy_blocks_access(&self, oam: bool, write: bool) -> bool {
        self.pyboy_lcd_access_ago()
            .is_some_and(|ago| self.ppu.pyboy_blocks(oam, write, ago))
    }

    /// PyBoy mode: PyBoy's moment of this instruction's read, `offset` T-cycles after its start.
    fn pyboy_read_at(&self, offset: u64) -> u64 {
        self.cycles - self.pyboy_lag(offset)
    }

    /// Brings the timer (and the APU's frame sequencer it clocks) up to `at`, PyBoy's moment of
    /// an access, in the PyBoy mode when the timer has not already run past it (an event was
    /// handled in this instruction), and otherwise (and in the hardware timing) up to now;
    /// returns the moment it stands at.
    fn sync_timer_to_access(&mut self, at: u64) -> u64 {
        if self.pyboy && self.timer_synced <= at && at < self.cycles {
            self.sync_timer_to(at);
            at
        } else {
            self.sync_timer();
            self.cycles
        }
    }

    /// PyBoy mode: the timer, and IF's timer bit, as they were at `at`, a moment the timer has
    /// already run past, replayed from before the timer event that took it there; `None` when
    /// that event came after `at` is not known (none kept, or a timer or IF write since).
    fn pyboy_timer_at(&self, at: u64) -> Option<(Timer, u8)> {
        if !(self.timer_before_event_at <= at && at < self.timer_synced) {
            return None;
        }
        let mut timer = self.timer_before_event.clone();
        let mut flags = self.timer_flag_before_event;
        timer.advance((at - self.timer_before_event_at) / 4, &mut flags);
        Some((timer, flags & interrupts::TIMER))
    }

    /// PyBoy mode: how many T-cycles before now PyBoy makes this instruction's read.
    fn pyboy_lag(&self, offset: u64) -> u64 {
        (self.cycles - self.pyboy_instr_start()).saturating_sub(offset)
    }

    /// What a CPU write to `addr` does now.
    #[inline(always)]
    pub fn write(&mut self, addr: u16, value: u8) {
        if addr < 0xFF00 {
            if self.in_dma_window() {
                return self.write_during_dma(addr, value);
            }
            if (0xC000..0xFE00).contains(&addr) {
                self.memory[(addr & 0x1FFF) as usize] = value;
                return;
            }
        } else if addr >= 0xFF80 && addr != 0xFFFF {
            self.hram[(addr & 0x7F) as usize] = value;
            return;
        }
        self.write_slow(addr, value)
    }

    /// An increment-unit cycle on `addr` (INC/DEC rr, the pointer of LD A,(HL+) and the like,
    /// PUSH/POP's SP): on 0xFE00-0xFEFF it triggers the OAM corruption bug like an access.
    #[inline(always)]
    fn idu_oam_bug(&mut self, addr: u16, access: OamBugAccess) {
        if addr >> 8 == 0xFE {
            self.oam_bug(access);
        }
    }

    /// The DMG's OAM corruption bug for an access, or an increment-unit cycle, at 0xFE00-0xFEFF
    /// now (`ppu::oam_bug`). PyBoy does not emulate it, so its compatible mode leaves OAM alone.
    #[inline(never)]
    fn oam_bug(&mut self, access: OamBugAccess) {
        if self.pyboy {
            return;
        }
        self.sync_ppu();
        self.ppu.oam_bug(access);
    }

    #[inline(never)]
    fn write_slow(&mut self, addr: u16, value: u8) {
        if let 0x8000..=0x9FFF = addr {
            // Video RAM schedules nothing: the frame loop need only look when the PPU's catch-up
            // raised an interrupt (or started a frame, `note_frame_start`), as after a read
            // (`read_slow`). Games write it between their polls of STAT, hundreds of times a
            // frame, and a block (`crate::jit`) runs on after it.
            let requests = self.interrupt_flags;
            self.sync_ppu();
            if !self.pyboy {
                self.ppu.write_vram(addr, value)
            } else if !self.pyboy_blocks_access(false, true) {
                self.ppu.store_vram(addr, value)
            }
            if self.interrupt_flags != requests {
                self.attention_at = 0;
            }
            return;
        }
        // Writes here can request or enable an interrupt, start DMA or end a frame.
        self.attention_at = 0;
        match addr {
            0x0000..=0x7FFF => {
                self.cartridge.sync_clock(self.cycles);
                self.cartridge.write_rom(addr, value);
                self.fetch_window.len = 0; // the banks may have moved
            }
            0xA000..=0xBFFF => {
                self.cartridge.sync_clock(self.cycles);
                self.cartridge.write_ram(addr, value)
            }
            0xFE00..=0xFE9F => {
                self.sync_dma();
                self.sync_ppu();
                self.oam_bug(OamBugAccess::Write);
                if self.dma.blocks_oam(self.cycles) {
                    // The transfer owns OAM: the write is lost.
                } else if !self.pyboy {
                    self.ppu.write_oam(addr, value)
                } else if !self.pyboy_blocks_access(true, true) {
                    self.ppu.store_oam(addr, value)
                }
            }
            0xFEA0..=0xFEFF => self.oam_bug(OamBugAccess::Write),
            0xFF00 => self.joypad.write(value, &mut self.interrupt_flags),
            0xFF01 | 0xFF02 => {
                self.serial.sync(self.cycles, &mut self.interrupt_flags);
                self.sync_timer();
                // PyBoy starts its transfer's count at its own moment of the write.
                let at = if self.pyboy {
                    self.pyboy_write_at()
                } else {
                    self.cycles
                };
                self.serial.write(addr, value, at, self.timer.counter);
                self.reschedule();
            }
            0xFF04..=0xFF07 => {
                // PyBoy brings its timer up to its own moment of the write and writes there; the
                // timer then runs on to now. When the timer already ran past that moment (an
                // event was handled in this instruction), the write is replayed from before the
                // event where it can be (`pyboy_timer_at`), and lands now where it cannot (a DIV
                // write, or no timer kept).
                let at = self.pyboy_write_at();
                let synced_to = self.sync_timer_to_access(at);
                if self.pyboy && synced_to != at && addr != 0xFF04 {
                    if let Some((mut timer, mut flag)) = self.pyboy_timer_at(at) {
                        // Replayed: the write at PyBoy's moment, then on to now (TIMA, TMA and
                        // TAC leave the system counter, and with it the APU's steps, as they were).
                        timer.write(addr, value);
                        timer.advance((self.cycles - at) / 4, &mut flag);
                        self.timer = timer;
                        self.interrupt_flags = self.interrupt_flags & !interrupts::TIMER | flag;
                        self.timer_before_event_at = u64::MAX;
                        self.reschedule();
                        return;
                    }
                }
                self.timer_before_event_at = u64::MAX;
                if addr == 0xFF04 {
                    if self.timer.counter as u64 & (FRAME_SEQUENCER_PERIOD / 2) != 0 {
                        self.apu.frame_sequencer_steps(1); // resetting DIV makes bit 12 fall
                        if self.pyboy {
                            self.apu.pyboy_sequencer.after_div_write = true;
                        }
                    }
                    // PyBoy's sequencer count starts again here too, in step with DIV from now on.
                    self.apu.pyboy_sequencer.phase = 0;
                    self.serial.sync(self.cycles, &mut self.interrupt_flags);
                    self.serial.counter_reset(self.cycles, self.timer.counter);
                }
                self.timer.write(addr, value);
                self.sync_timer();
                self.reschedule();
            }
            0xFF0F => {
                self.interrupt_flags = value | 0xE0;
                self.timer_before_event_at = u64::MAX;
            }
            0xFF10..=0xFF3F if self.pyboy => {
                // PyBoy brings its APU up to its own moment of the write and writes there.
                let at = self.pyboy_write_at();
                let synced_to = self.sync_timer_to_access(at);
                let powering_on = addr == 0xFF26 && value & 0x80 != 0 && !self.apu.powered();
                self.apu.write(addr, value, self.cycles);
                if powering_on && self.apu.registers_emulated {
                    let counter_at = self
                        .timer
                        .counter
                        .wrapping_sub(synced_to.saturating_sub(at) as u16);
                    self.apu.pyboy_powered_on(counter_at);
                }
                if addr == 0xFF14 {
                    self.apu.pyboy_sequencer.after_div_write = false;
                }
            }
            0xFF10..=0xFF3F => {
                self.sync_timer();
                self.apu.write(addr, value, self.cycles)
            }
            0xFF46 => {
                if self.pyboy {
                    self.pyboy_lcd_access_at = self.pyboy_write_at();
                }
                self.sync_dma();
                self.sync_ppu();
                self.dma.request(value, self.cycles);
                self.set_dma_busy(self.dma.busy_window());
                // The PPU must now run stage by stage and the transfer's end become an event.
                self.reschedule();
            }
            0xFF40..=0xFF4B => {
                self.sync_ppu();
                if self.pyboy {
                    self.pyboy_lcd_access_at = self.pyboy_write_at();
                }
                if self.pyboy && addr == 0xFF40 && self.ppu.lcd_is_on() && value & 0x80 == 0 {
                    self.pyboy_lcd_off_at = self.pyboy_write_at();
                }
                self.ppu
                    .write_register(addr, value, &mut self.interrupt_flags);
                self.note_frame_start();
                self.reschedule();
            }
            0xFFFF => self.interrupt_enable = value,
            _ => {}
        }
    }

    /// A debugger's view of memory (after `sync_all`): VRAM and OAM as stored, whatever the PPU is
    /// doing, and no side effects.
    pub fn peek(&self, addr: u16) -> u8 {
        match addr {
            0x0000..=0x7FFF => self.cartridge.read_rom(addr),
            0x8000..=0x9FFF => self.ppu.vram()[(addr - 0x8000) as usize],
            0xA000..=0xBFFF => self.cartridge.read_ram(addr),
            0xC000..=0xFDFF => self.memory[(addr & 0x1FFF) as usize],
            0xFE00..=0xFE9F => self.ppu.oam()[(addr - 0xFE00) as usize],
            0xFEA0..=0xFEFF => 0x00,
            0xFF00 => self.joypad.read(),
            0xFF01 | 0xFF02 => self.serial.read(addr, self.cycles),
            0xFF04..=0xFF07 => self.timer.read(addr),
            0xFF0F => self.interrupt_flags | 0xE0,
            // PyBoy mode: what PyBoy's memory API reads there while channel 3 plays. It brings
            // its APU up to date at each sound register it reads, and a second update at the
            // same moment closes wave RAM (pyboy/core/sound.py `tick` clears `wave_access`), so
            // wave RAM read after the sound registers, as a whole-state read does, gives 0xFF.
            0xFF30..=0xFF3F if self.pyboy && self.apu.wave_playing() => 0xFF,
            0xFF10..=0xFF3F => self.apu.read(addr, self.cycles),
            0xFF46 => self.dma.register,
            0xFF40..=0xFF4B => self.ppu.read_register(addr),
            0xFF80..=0xFFFE => self.hram[(addr - 0xFF80) as usize],
            0xFFFF => self.interrupt_enable,
            _ => 0xFF,
        }
    }

    /// Starts the clocks elsewhere than the DMG boot ROM leaves them (see `gameboy::PowerOn`).
    pub fn set_power_on_clock(&mut self, cycles: u64, system_counter: u16) {
        self.cycles = cycles;
        self.ppu_synced = cycles;
        self.timer_synced = cycles;
        self.timer.counter = system_counter;
        self.reschedule();
    }

    /// Sets the deadline and makes sure the scheduler will stop there.
    pub fn set_deadline(&mut self, deadline: u64) {
        self.deadline = deadline;
        self.frame_check_at = deadline;
        self.attention_at = 0;
        self.note_frame_start();
        self.reschedule();
    }

    fn note_frame_start(&mut self) {
        if self.ppu.frame_started() {
            self.frame_check_at = 0;
            self.attention_at = 0;
        }
    }

    pub fn cartridge(&self) -> &Cartridge {
        &self.cartridge
    }

    /// Whether the frame loop must look at more than the next instruction now: the frame's end
    /// (`frame_check_due`), the CPU's state (`Cpu::needs_slow_step`), or a near event.
    #[inline(always)]
    pub fn attention_due(&self) -> bool {
        self.cycles >= self.attention_at
    }

    /// Whether the next instruction may run as a `PlainStep` (no event due before it ends); if
    /// so, the frame loop need not look again until `attention_at`.
    #[inline(always)]
    pub fn plain_steps_from_here(&mut self) -> bool {
        if !self.plain_steps {
            return false;
        }
        let until = self.next_event.saturating_sub(PLAIN_STEP_CYCLES);
        self.attention_at = self.frame_check_at.min(until);
        self.cycles < until
    }

    /// Whether the frame loop must look at the PPU's frame start and the deadline now: false
    /// while neither can have happened since `set_deadline`.
    #[inline(always)]
    pub fn frame_check_due(&self) -> bool {
        self.cycles >= self.frame_check_at
    }

    pub fn save(&mut self, w: &mut StateWriter) {
        self.sync_all();
        self.cartridge.save(w);
        self.ppu.save(w);
        self.timer.save(w);
        self.joypad.save(w);
        self.serial.save(w);
        self.apu.save(w);
        self.dma.save(w);
        w.bytes(&self.memory[..WRAM_SIZE]);
        w.bytes(&self.hram);
        w.u8(self.interrupt_enable);
        w.u8(self.interrupt_flags);
        w.u64(self.cycles);
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        self.fetch_window.len = 0;
        self.cartridge.load(r)?;
        self.ppu.load(r)?;
        self.timer.load(r)?;
        self.joypad.load(r)?;
        self.serial.load(r)?;
        self.apu.load(r)?;
        self.dma.load(r)?;
        r.bytes_into(&mut self.memory[..WRAM_SIZE])?;
        r.bytes_into(&mut self.hram)?;
        self.interrupt_enable = r.u8()?;
        self.interrupt_flags = r.u8()? | 0xE0;
        self.cycles = r.u64()?;
        if !self.cycles.is_multiple_of(4) {
            return Err(StateError(
                "bus cycle count is not a whole number of M-cycles".into(),
            ));
        }
        if self.cycles > MAX_STATE_CYCLES {
            return Err(StateError(format!(
                "bus cycle count {} is past {MAX_STATE_CYCLES} (some 8,700 years of emulated time)",
                self.cycles
            )));
        }
        self.ppu_synced = self.cycles;
        self.timer_synced = self.cycles;
        self.timer_before_event_at = u64::MAX;
        self.set_dma_busy(self.dma.busy_window());
        self.deadline = u64::MAX;
        self.reschedule();
        Ok(())
    }
}

impl CpuBus for Bus {
    #[inline(always)]
    fn read_cycle(&mut self, addr: u16) -> u8 {
        self.tick();
        self.read(addr)
    }
    /// `read_cycle` for the instruction stream: inside the fetch window, one index.
    #[inline(always)]
    fn fetch_cycle(&mut self, addr: u16) -> u8 {
        self.tick();
        self.fetch(addr)
    }
    #[inline(always)]
    fn write_cycle(&mut self, addr: u16, value: u8) {
        self.tick();
        self.write(addr, value);
    }
    #[inline(always)]
    fn idle_cycle(&mut self) {
        self.tick();
    }
    #[inline(always)]
    fn idu_cycle(&mut self, addr: u16) {
        self.tick();
        self.idu_oam_bug(addr, OamBugAccess::Write);
    }
    #[inline(always)]
    fn read_idu_cycle(&mut self, addr: u16) -> u8 {
        self.tick();
        // The increment's own part; the read then adds a read's (`read_io`).
        self.idu_oam_bug(addr, OamBugAccess::ReadIncrease);
        self.read(addr)
    }
    fn pyboy_untimed_write(&mut self, addr: u16, value: u8) {
        self.write(addr, value);
    }
    #[inline(always)]
    fn request_attention(&mut self) {
        self.attention_at = 0;
    }
    /// HALT with nothing pending: nothing can change until the next event, so jump to it.
    fn halt_cycle(&mut self) {
        let target = (self.next_event + 3) & !3;
        if target > self.cycles + 4 {
            self.cycles = target - 4;
        }
        self.tick();
    }
    fn halt_fetch_cycle(&mut self, addr: u16) -> u8 {
        self.halt_cycle();
        self.read(addr)
    }
    #[inline(always)]
    fn pending_interrupts(&self) -> u8 {
        self.interrupt_enable & self.interrupt_flags & 0x1F
    }
    fn acknowledge_interrupt(&mut self, mask: u8) {
        self.interrupt_flags &= !mask;
        self.timer_before_event_at = u64::MAX;
    }
    fn stop(&mut self) {
        self.write_slow(0xFF04, 0);
    }
    fn requested_interrupts(&self) -> u8 {
        self.interrupt_flags & 0x1F
    }
    fn enabled_interrupts(&self) -> u8 {
        self.interrupt_enable
    }
    fn pyboy_chunk_ended(&mut self) -> bool {
        self.sync_ppu();
        self.sync_timer();
        // With the LCD off PyBoy's frames end every 70224 cycles (the frame deadline).
        let frame_end = !self.ppu.lcd_is_on()
            && self.deadline <= self.cycles
            && self.deadline + 4 > self.cycles;
        self.ppu.pyboy_transition_within(4) || self.timer.overflowed_or_reloaded() || frame_end
    }
    fn peek_code(&self, addr: u16) -> Option<u8> {
        match addr {
            0x0000..=0x7FFF => Some(self.cartridge.read_rom(addr)),
            0xC000..=0xFDFF => Some(self.memory[(addr & 0x1FFF) as usize]),
            0xFF80..=0xFFFE => Some(self.hram[(addr & 0x7F) as usize]),
            _ => None,
        }
    }
    /// Until the next event (a unit due to act, or the deadline) or the frame loop's next stop,
    /// less one cycle, so that no bus cycle in between would have done anything but count. Only
    /// with no interrupt pending (none can be raised before then: that takes an event), and
    /// without OAM DMA unless the loop is in high RAM (below 0xFF00 the CPU would read the DMA's
    /// bus, not the code; the transfer itself is copied lazily by time, like the PPU's work).
    fn quiet_cycles(&self, code_at: u16) -> u64 {
        if !self.skip_wait_loops
            || self.pending_interrupts() != 0
            || (self.dma.is_active() || self.dma_busy_len != 0) && code_at < 0xFF80
        {
            return 0;
        }
        self.next_event
            .min(self.frame_check_at)
            .saturating_sub(self.cycles + 1)
    }
    /// Also while the loop's reads still see the register as it is now: before the PPU's next
    /// stage boundary (where STAT's mode and LY=LYC bits and LY change, whether or not that is
    /// an event), which in the PyBoy timing a read sees only from its lag after it (PyBoy reads
    /// at its own moment of the instruction, `read_register_ago`); and only if the register
    /// reads now what the CPU just read (in the PyBoy timing a read can see an earlier value;
    /// later rounds read the current one). The loop's reads come at the ends of its rounds (the
    /// LDH's last M-cycle), so rounds that end before the change is seen read the same value.
    fn poll_quiet_cycles(&self, code_at: u16, addr: u16, value: u8) -> u64 {
        if self.ppu_synced != self.cycles || self.ppu.read_register(addr) != value {
            return 0;
        }
        let quiet = self.quiet_cycles(code_at);
        let lag = if self.pyboy {
            self.pyboy_lag(self.pyboy_read_offsets().0)
        } else {
            0
        };
        match self.ppu.dots_until_next_event(true) {
            u32::MAX => quiet,
            dots => {
                quiet.min((self.ppu_synced + dots as u64 + lag).saturating_sub(self.cycles + 1))
            }
        }
    }
    fn skip_wait_cycles(&mut self, cycles: u64) {
        self.cycles += cycles;
        // The current instruction (the loop's LDH or JR) is the one that many rounds later.
        self.pyboy_fetch_end += cycles;
        self.wait_cycles_skipped += cycles;
    }
    #[inline]
    fn pyboy_opcode_fetched(&mut self, opcode: u8) {
        self.pyboy_fetch_end = self.cycles;
        self.pyboy_opcode = opcode;
    }
}

impl Bus {
    /// An instruction-stream byte, after its M-cycle's tick: inside the fetch window, one index.
    #[inline(always)]
    fn fetch(&mut self, addr: u16) -> u8 {
        let window = self.fetch_window;
        let offset = addr.wrapping_sub(window.lo) as u32;
        if offset < window.len {
            let index = window.base + offset as usize;
            debug_assert!(index < self.memory.len());
            // SAFETY: `offset < window.len` and every window has `base + len <= memory.len()`
            // (`fetch_slow`: work RAM at 0 with at most `WRAM_SIZE` bytes; a ROM half at
            // `ROM_COPY_AT` plus a `Cartridge::bank_offset`, which is at most the ROM's length
            // less 0x4000, with 0x4000 bytes; the ROM is the one copied into `memory`, since the
            // crate never replaces `cartridge`), so `index` is in bounds.
            return unsafe { *self.memory.get_unchecked(index) };
        }
        self.fetch_slow(addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dma_conflicts_only_on_its_own_bus() {
        let mut bus = bus_with_rom(vec![0u8; 0x8000]); // ROM only
        for i in 0..0xA0u16 {
            bus.memory[(0x0100 + i) as usize] = i as u8;
        }
        bus.ppu.write_register(0xFF40, 0, &mut 0); // LCD off: VRAM free
        bus.write_cycle(0xFF46, 0xC1); // M=0
        assert_eq!(
            bus.read_cycle(0xD000),
            0x00,
            "M=1: setup cycle, no conflict yet"
        );
        bus.idle_cycle(); // M=2: byte 0
        bus.idle_cycle(); // M=3: byte 1
        assert_eq!(
            bus.read_cycle(0xD000),
            2,
            "external bus reads the byte DMA moves (M=4: byte 2)"
        );
        bus.write_cycle(0xC000, 0x55);
        assert_eq!(bus.memory[0], 0, "writes on the DMA's bus are lost");
        bus.write_cycle(0x8000, 0x66);
        assert_eq!(bus.read_cycle(0x8000), 0x66, "the VRAM bus stays usable");
        assert_eq!(bus.read_cycle(0xFE00), 0xFF, "OAM is locked");
        bus.write_cycle(0xFF80, 0x12);
        assert_eq!(bus.read_cycle(0xFF80), 0x12, "HRAM stays usable");
    }

    /// A bus with `rom` (its header checksum filled in).
    fn bus_with_rom(mut rom: Vec<u8>) -> Bus {
        rom[0x14D] = crate::cartridge::header_checksum(&rom);
        Bus::new(Cartridge::from_rom(rom).unwrap())
    }

    #[test]
    fn fetches_follow_a_bank_switch_made_from_the_switched_half() {
        // MBC1, 4 banks; every byte of bank n reads 0x10 + n.
        let mut rom: Vec<u8> = (0..0x10000).map(|i| 0x10 + (i / 0x4000) as u8).collect();
        rom[0x147] = 0x01;
        rom[0x148] = 0x01;
        let mut bus = bus_with_rom(rom);
        assert_eq!(bus.fetch_cycle(0x4000), 0x11);
        assert_eq!(bus.fetch_cycle(0x4001), 0x11);
        // Code running at 0x4002 selects bank 3 and fetches on.
        bus.write_cycle(0x2000, 3);
        assert_eq!(bus.fetch_cycle(0x4002), 0x13);
        assert_eq!(bus.fetch_cycle(0x0000), 0x10);
        bus.write_cycle(0x2000, 2);
        assert_eq!(bus.fetch_cycle(0x7FFF), 0x12);
        assert_eq!(bus.read_cycle(0x7FFF), 0x12);
        // A state saved in bank 2, loaded while bank 1 is being fetched from.
        let mut w = crate::state::StateWriter::new();
        bus.save(&mut w);
        let state = w.finish();
        bus.write_cycle(0x2000, 1);
        assert_eq!(bus.fetch_cycle(0x4000), 0x11);
        let mut r = crate::state::StateReader::new(&state).unwrap();
        bus.load(&mut r).unwrap();
        assert_eq!(
            bus.fetch_cycle(0x4001),
            0x12,
            "fetched from the loaded bank"
        );
    }

    #[test]
    fn fetches_during_dma_see_the_bus_conflict() {
        let mut bus = bus_with_rom(vec![0u8; 0x8000]);
        for i in 0..0xA0u16 {
            bus.memory[(0x0100 + i) as usize] = i as u8;
        }
        bus.memory[0x1000] = 0xAB;
        bus.ppu.write_register(0xFF40, 0, &mut 0);
        assert_eq!(bus.fetch_cycle(0xD000), 0xAB, "work RAM fetched as usual");
        bus.write_cycle(0xFF46, 0xC1); // M=0
        assert_eq!(bus.fetch_cycle(0xD000), 0xAB, "M=1: setup cycle");
        bus.idle_cycle(); // M=2: byte 0
        bus.idle_cycle(); // M=3: byte 1
        assert_eq!(
            bus.fetch_cycle(0xD000),
            2,
            "an opcode fetch on the DMA's bus reads the byte DMA moves (M=4: byte 2)"
        );
        for _ in 0..0xA0 {
            bus.idle_cycle();
        }
        assert_eq!(
            bus.fetch_cycle(0xD000),
            0xAB,
            "work RAM again after the transfer"
        );
    }
}
