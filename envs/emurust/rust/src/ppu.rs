//! DMG picture processing unit: LCD timing, STAT/VBlank interrupts, VRAM/OAM access rules and a
//! scanline renderer.
//!
//! # Timing model
//!
//! A frame is 154 lines of 456 dots (70224 dots). Lines 0-143 run mode 2 (OAM scan, 80 dots),
//! mode 3 (drawing) and mode 0 (HBlank) for the rest of the line; lines 144-153 are mode 1.
//! The unit is event driven: `tick` only adds to a dot counter and does real work when the
//! counter crosses the next mode boundary, so the per-M-cycle cost is a compare and a branch.
//!
//! Mode 3 length (decided when mode 3 starts, from the registers and the OAM scan at that time):
//! `172 + SCX % 8`, plus 6 dots when the window is shown on the line, plus for every object
//! selected on the line with OAM X in 0..=167, in drawing order: 6 dots, plus the fetch-alignment
//! wait `max(0, 5 - p)` where `p` is the position (0..=7) of the object's leftmost pixel inside the
//! BG or window tile it falls on (counted from the first, partly discarded tile), only for the
//! first object that lands on a given tile: ten objects at X = 0 cost 11 + 9 x 6 dots, not
//! 10 x 11. Of the objects' total, mode 0 shows 3 dots less (`SPRITE_PENALTY_OVERLAP`): fitted to
//! mooneye intr_2_mode0_timing_sprites, whose 105 object layouts all pass with it (without it the
//! first, one object at X=0, already fails); the sprite-free tests fix the base. The result lies
//! in 172..=292 dots.
//!
//! Other timing details:
//! * LY shows the next line from 4 dots before a visible line ends; in those 4 dots the LY=LYC
//!   flag reads false, OAM reads are blocked (the next OAM scan has it) but writes pass; the flag
//!   is re-evaluated when the line starts. VRAM reads are blocked from 4 dots before STAT shows
//!   mode 3, writes only from mode 3; OAM writes pass in the last M-cycle of the OAM scan
//!   (mooneye lcdon_timing, lcdon_write_timing).
//! * Line 153 quirk: LY reads 153 for the first 4 dots of line 153 and 0 afterwards, so LYC=0
//!   matches from line 153 dot 4 through line 0 (one rising edge, not two).
//! * Entering line 144 raises VBLANK and, on DMG, also pulses the mode-2 ("OAM") STAT source for
//!   4 dots, so STAT bit 5 alone gives an interrupt at LY=144 too.
//! * The STAT interrupt is requested on rising edges of one internal line (OR of the enabled
//!   sources), which gives the hardware's "STAT IRQ blocking".
//! * DMG STAT-write bug: a write to STAT acts as if 0xFF were written for one cycle first, so a
//!   write while any source is active (modes 0/1/2 or LY=LYC) can request a STAT interrupt.
//! * LCD off (LCDC bit 7 clear): LY=0, mode 0, the line/dot counters reset, no interrupts, VRAM
//!   and OAM are free, and the visible screen is blank (shade 0) while off. The LY=LYC flag keeps
//!   its last value while the LCD is off, and so does its part of the STAT line, so switching the
//!   LCD on with the flag still true gives no interrupt (mooneye stat_lyc_onoff).
//! * LCD on: line 0 starts at dot 0 without an OAM scan period: STAT reports mode 0 for the first
//!   80 dots (which is not a mode-0 interrupt source, and OAM is accessible), then mode 3 as usual.
//!   The first frame after enabling is not displayed: at its VBlank the visible screen is set
//!   blank instead (the frame still counts as completed).
//! * Power-on state (as at PC=0x100 after the DMG boot ROM): line 153, dot 400, i.e. LY reads 0,
//!   STAT reads 0x85 (mode 1, LY=LYC); the first full frame starts 56 dots later.
//!
//! # Rendering
//!
//! Line LY is rendered when its mode 3 ends (on entering mode 0), from the register values at that
//! moment and the objects picked by that line's OAM scan (first 10 in OAM order whose Y range
//! covers the line, X ignored). Objects: smaller X wins, ties by lower OAM index; the winning
//! opaque object pixel decides alone (if it has BG-over-OBJ and the BG color is 1-3, the BG shows,
//! even where a lower-priority object would have been in front). With LCDC bit 0 clear (DMG) the
//! background and window are color 0 (mapped through BGP) and objects still draw. The window's
//! internal line counter advances only on lines where the window was drawn (Y condition latched
//! when LY == WY at a line start, cleared at VBlank; LCDC bit 5 set; WX <= 166).
//! Not emulated: mid-line register changes (the line uses end-of-mode-3 values), WX=0 fine-scroll
//! shift, the WX=166 DMG glitch, the window-disable pixel insertion glitch, OAM corruption bug.
//!
//! Frames are drawn into a back buffer and copied to the visible buffer on entering VBlank.

use crate::interrupts::{STAT, VBLANK};
use crate::state::{StateError, StateReader, StateWriter};

mod oam_bug;
pub use oam_bug::OamBugAccess;

/// Bit i (from the left, bit 7 first) of a byte spread into byte i of a u64: one bit plane of
/// a tile row as eight pixels.
const SPREAD_BITS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut v = 0;
    while v < 256 {
        let mut bit = 0;
        while bit < 8 {
            if v & (0x80 >> bit) != 0 {
                table[v] |= 1u64 << (8 * bit);
            }
            bit += 1;
        }
        v += 1;
    }
    table
};

/// The eight color numbers (0..=3) of a tile row, leftmost first.
#[inline]
fn tile_row_colors(lo: u8, hi: u8) -> [u8; 8] {
    (SPREAD_BITS[lo as usize] | SPREAD_BITS[hi as usize] << 1).to_le_bytes()
}

/// `Ppu::shade_lut` for background palette `bgp`.
fn shade_lut(bgp: u8) -> [u32; 256] {
    let mut lut = [0u32; 256];
    for (index, entry) in lut.iter_mut().enumerate() {
        let (lo, hi) = (index & 0x0F, index >> 4);
        let mut shades = [0u8; 4];
        for (pixel, shade) in shades.iter_mut().enumerate() {
            let bit = 3 - pixel;
            let color = ((lo >> bit) & 1) | (((hi >> bit) & 1) << 1);
            *shade = (bgp >> (2 * color)) & 3;
        }
        *entry = u32::from_le_bytes(shades);
    }
    lut
}

pub const SCREEN_WIDTH: usize = 160;
pub const SCREEN_HEIGHT: usize = 144;

/// `Ppu::bg_row_palette` of a tile row written since it was last drawn.
const ROW_STALE: u16 = 0x100;
const SCREEN_PIXELS: usize = SCREEN_WIDTH * SCREEN_HEIGHT;

const DOTS_PER_LINE: u32 = 456;
const LAST_LINE: u8 = 153;
/// PyBoy's first frame after the LCD is switched on has a line 0 eight dots short, and PyBoy
/// stretches its line 153 by as much to keep the frame 70224 dots long (pyboy/core/lcd.py:289-292).
const PYBOY_FIRST_FRAME_STRETCH_DOTS: u32 = 8;
const VBLANK_LINE: u8 = 144;
const OAM_SCAN_DOTS: u32 = 80;
const MODE3_BASE_DOTS: u32 = 172;
/// Dots of the objects' fetch penalty that mode 0's start does not show (see the module docs).
const SPRITE_PENALTY_OVERLAP: u32 = 3;
/// Dot of line 153 from which LY reads 0.
const LINE153_LY_RESET_DOT: u32 = 4;
/// Length of the mode-2 STAT source pulse when entering line 144.
const VBLANK_OAM_PULSE_DOTS: u32 = 4;
/// Where the boot ROM leaves the PPU at PC=0x100.
const BOOT_LINE: u8 = 153;
const BOOT_DOT: u32 = 400;

const MAX_LINE_SPRITES: usize = 10;

// LCDC bits.
const LCDC_BG_ENABLE: u8 = 0x01;
const LCDC_OBJ_ENABLE: u8 = 0x02;
const LCDC_OBJ_TALL: u8 = 0x04;
const LCDC_BG_MAP: u8 = 0x08;
const LCDC_TILE_DATA: u8 = 0x10;
const LCDC_WIN_ENABLE: u8 = 0x20;
const LCDC_WIN_MAP: u8 = 0x40;
const LCDC_ON: u8 = 0x80;

// STAT interrupt sources, at the positions of their STAT enable bits.
const SRC_HBLANK: u8 = 0x08;
const SRC_VBLANK: u8 = 0x10;
const SRC_OAM: u8 = 0x20;
const SRC_LYC: u8 = 0x40;
const STAT_ENABLE_MASK: u8 = 0x78;

// Object attribute bits.
const ATTR_BEHIND_BG: u8 = 0x80;
const ATTR_Y_FLIP: u8 = 0x40;
const ATTR_X_FLIP: u8 = 0x20;
const ATTR_PALETTE: u8 = 0x10;

/// Tag written at the start of the PPU's part of a save state.
const STATE_TAG: u32 = 0x3155_5050; // "PPU1"

/// What the PPU waits for next; each stage ends at `next_event` dots into the line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stage {
    /// Mode 2 (or mode 0 on the first line after LCD enable) until dot 80.
    OamScan = 0,
    /// Mode 3 until `80 + mode 3 length`.
    Drawing = 1,
    /// Mode 0 until the end of the line.
    HBlank = 2,
    /// Line 144, dots 0..4: the mode-2 STAT source pulse.
    VBlankStart = 3,
    /// Line 153, dots 0..4: LY still reads 153.
    Line153Start = 4,
    /// Mode 1 until the end of the line.
    VBlank = 5,
    /// Last 4 dots of lines 0..=142: LY already shows the next line.
    LineEnd = 6,
}

impl Stage {
    fn from_u8(v: u8) -> Option<Stage> {
        Some(match v {
            0 => Stage::OamScan,
            1 => Stage::Drawing,
            2 => Stage::HBlank,
            3 => Stage::VBlankStart,
            4 => Stage::Line153Start,
            5 => Stage::VBlank,
            6 => Stage::LineEnd,
            _ => return None,
        })
    }
}

/// An object picked by the OAM scan for the current line.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
struct LineSprite {
    y: u8,
    x: u8,
    tile: u8,
    attr: u8,
    index: u8,
}

/// Everything a background line drawn as shades depends on: the map row (its VRAM offset), the
/// row within its tiles, SCX, BGP, the tile addressing (LCDC.4's index flip), and how many times
/// that map row and that tile-row position had been written when it was drawn (so any VRAM write
/// that could change the line changes its key).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct BgLineKey {
    map_row: u16,
    tile_row: u8,
    scx: u8,
    bgp: u8,
    index_flip: u8,
    map_row_version: u64,
    tile_row_version: u64,
}

/// A background line (before the window and objects) as shades, and what it was drawn from.
#[derive(Clone, Copy)]
struct BgLine {
    key: BgLineKey,
    shades: [u8; SCREEN_WIDTH],
}

#[derive(Clone)]
pub struct Ppu {
    /// Written only through `store_vram` (and `vram_mut` in tests), which keeps `bg_row_shades`
    /// in step.
    vram: [u8; 0x2000],
    /// Written only through `store_oam` and the DMA's writes, which keep `line_objects` in step.
    oam: [u8; 0xA0],

    lcdc: u8,
    /// STAT bits 3-6 (interrupt enables).
    stat_enable: u8,
    scy: u8,
    scx: u8,
    lyc: u8,
    bgp: u8,
    obp0: u8,
    obp1: u8,
    wy: u8,
    wx: u8,

    /// Internal line counter, 0..=153.
    line: u8,
    /// The value LY reads (differs from `line` in line 153 and while the LCD is off).
    ly: u8,
    /// Dots into the current line.
    dot: u32,
    /// Dot at which the current stage ends.
    next_event: u32,
    stage: Stage,
    /// Mode reported in STAT bits 0-1.
    mode: u8,
    /// Active mode-based STAT sources (SRC_HBLANK/SRC_VBLANK/SRC_OAM).
    mode_sources: u8,
    /// LY=LYC flag (STAT bit 2).
    lyc_match: bool,
    /// Level of the internal STAT interrupt line.
    stat_line: bool,

    /// Objects found by the OAM scan for this line, in drawing priority order (X, then OAM index).
    sprites: [LineSprite; MAX_LINE_SPRITES],
    sprite_count: u8,
    /// For every line, the objects whose rows cover it (bit i: OAM entry i), as the OAM scan
    /// would find them in `oam` with objects `line_objects_height` tall; 0 there: not built since
    /// OAM last changed. Derived from `oam` and LCDC (not machine state): OAM changes about once a
    /// frame, when a game copies its objects in, while every line scans it.
    line_objects: [u64; 256],
    line_objects_height: u16,

    /// Window internal line counter.
    window_line: u8,
    /// Window Y condition (LY == WY seen at a line start this frame).
    wy_triggered: bool,
    /// The current frame is the first after LCD enable and must not be shown.
    skip_frame: bool,
    frame_completed: bool,
    /// Line 0 has started (LY wrapped from 153): the frame loop's boundary, as PyBoy's.
    frame_started: bool,
    frame_count: u64,
    /// PyBoy 2.8.1 compatibility timing (configuration; see `set_pyboy_timing`).
    pyboy: bool,
    /// PyBoy mode: dots ticked so far, and the last few changes of what STAT (mode, LY=LYC) and
    /// LY read: (time, STAT bits 0-2 before, LY before), newest at `history_next - 1`.
    elapsed: u64,
    history: [(u64, u8, u8); 4],
    history_next: usize,
    /// PyBoy mode: this is the first frame after the LCD was switched on (PyBoy runs it 4 dots
    /// early from line 0 dot 76, 8 dots early from VBlank, and stretches line 153 to realign).
    pyboy_first_frame: bool,
    /// PyBoy mode: `elapsed` at the last stage change that is also a transition of PyBoy's LCD
    /// (one of its scheduler's event times; see `pyboy_transition_within`).
    pyboy_transition_at: u64,
    /// PyBoy mode: `elapsed` at PyBoy's first look at the end of line 153 in its first frame after
    /// the LCD was switched on, where it stretches the line; kept until the frame loop takes it
    /// at the frame's end (`take_pyboy_stretch_look`), dropped when the LCD is switched off or on.
    /// Not in save states: one saved in the 8 dots between the look and the frame's end loses it,
    /// and that frame then ends as if the look had been at a boundary of its own.
    pyboy_stretch_look: Option<u64>,
    /// Draw lines (configuration, not machine state: with it off the screen keeps its last frame
    /// and everything else runs the same).
    render: bool,

    back: Box<[u8; SCREEN_PIXELS]>,
    /// Shades of four pixels (one byte each, leftmost first) indexed by a tile row's low-plane
    /// nibble | high-plane nibble << 4, under palette `shade_lut_palette` (0x100: none yet).
    /// Derived from BGP, so not part of the saved state.
    shade_lut: [u32; 256],
    shade_lut_palette: u16,
    /// Background and window tile rows drawn as shades: entry `offset / 2` holds the row at tile
    /// data offset `offset` (below 0x1800) under palette `bg_row_palette[offset / 2]`, or
    /// `ROW_STALE` there when it has not been drawn since that row was written. A cache (not
    /// machine state): most frames draw the same few tiles under the same palette.
    bg_row_shades: [u64; 0x1000],
    bg_row_palette: [u16; 0x1000],
    /// Background lines drawn as shades, one slot per screen line, each with its `BgLineKey`: a
    /// line drawn from the same map row, registers and VRAM as the one in its slot is copied,
    /// not drawn (static screens redraw the same lines every frame). A cache, not state; slots
    /// start with a key no line has (map row 0).
    bg_lines: Box<[BgLine; SCREEN_HEIGHT]>,
    /// Write counts of the 64 tile map rows (both maps) and of the 8 tile-data row positions (a
    /// write to row r of any tile counts for r), which `BgLineKey` records.
    map_row_versions: [u64; 64],
    tile_row_versions: [u64; 8],
    /// Inline, never reallocated: Python holds zero-copy views of it (see python.rs).
    front: [u8; SCREEN_PIXELS],
}

impl Default for Ppu {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Ppu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ppu")
            .field("lcdc", &format_args!("{:#04x}", self.lcdc))
            .field("stat", &format_args!("{:#04x}", self.read_register(0xFF41)))
            .field("ly", &self.ly)
            .field("line", &self.line)
            .field("dot", &self.dot)
            .field("stage", &self.stage)
            .field("frame_count", &self.frame_count)
            .finish_non_exhaustive()
    }
}

fn blank_screen() -> Box<[u8; SCREEN_PIXELS]> {
    vec![0u8; SCREEN_PIXELS]
        .into_boxed_slice()
        .try_into()
        .expect("screen size")
}

impl Ppu {
    /// State right after the DMG boot ROM hands over (PC=0x100).
    pub fn new() -> Self {
        let mut ppu = Ppu {
            vram: [0; 0x2000],
            oam: [0; 0xA0],
            lcdc: 0x91,
            stat_enable: 0,
            scy: 0,
            scx: 0,
            lyc: 0,
            bgp: 0xFC,
            obp0: 0xFF,
            obp1: 0xFF,
            wy: 0,
            wx: 0,
            line: BOOT_LINE,
            ly: 0,
            dot: BOOT_DOT,
            next_event: DOTS_PER_LINE,
            stage: Stage::VBlank,
            mode: 1,
            mode_sources: SRC_VBLANK,
            lyc_match: true,
            stat_line: false,
            sprites: [LineSprite::default(); MAX_LINE_SPRITES],
            sprite_count: 0,
            line_objects: [0; 256],
            line_objects_height: 0,
            window_line: 0,
            wy_triggered: false,
            skip_frame: false,
            frame_completed: false,
            frame_started: false,
            frame_count: 0,
            pyboy: false,
            elapsed: 0,
            history: [(0, 0, 0); 4],
            history_next: 0,
            pyboy_first_frame: false,
            pyboy_transition_at: 0,
            pyboy_stretch_look: None,
            render: true,
            back: blank_screen(),
            shade_lut: [0; 256],
            shade_lut_palette: 0x100,
            bg_row_shades: [0; 0x1000],
            bg_row_palette: [ROW_STALE; 0x1000],
            bg_lines: Box::new(
                [BgLine {
                    key: BgLineKey::default(),
                    shades: [0; SCREEN_WIDTH],
                }; SCREEN_HEIGHT],
            ),
            map_row_versions: [0; 64],
            tile_row_versions: [0; 8],
            front: [0; SCREEN_PIXELS],
        };
        ppu.lyc_match = ppu.ly == ppu.lyc;
        ppu
    }

    #[inline]
    fn lcd_on(&self) -> bool {
        self.lcdc & LCDC_ON != 0
    }

    /// Advance `dots` T-cycles; requests VBLANK/STAT by OR-ing bits into `interrupt_flags`.
    #[inline]
    pub fn tick(&mut self, dots: u32, interrupt_flags: &mut u8) {
        if self.pyboy {
            self.elapsed += dots as u64;
        }
        if self.lcdc & LCDC_ON == 0 {
            return;
        }
        self.dot += dots;
        while self.dot >= self.next_event {
            if self.stage == Stage::LineEnd
                && self.dot >= 3 * DOTS_PER_LINE
                && self.can_skip_lines()
            {
                if self.stat_enable == 0 {
                    self.run_whole_lines_without_stat();
                } else {
                    self.run_whole_line_unrendered(interrupt_flags);
                }
                continue;
            }
            if self.pyboy {
                let at = self.elapsed - (self.dot - self.next_event) as u64;
                self.record_history(at);
                // PyBoy's LCD has no transition at our mode-2 pulse of line 144, nor 4 dots before
                // the end of line 143 (it enters VBlank at the line's end; pyboy/core/lcd.py:376-378),
                // except in its first frame (lcd.py:360-366).
                let pyboy_transition = match self.stage {
                    Stage::VBlankStart => false,
                    Stage::HBlank => self.line != VBLANK_LINE - 1 || self.pyboy_first_frame,
                    _ => true,
                };
                if pyboy_transition {
                    self.pyboy_transition_at = at;
                }
                if self.pyboy_stretching_line_153() {
                    self.pyboy_stretch_look = Some(at);
                }
            }
            self.advance_stage(interrupt_flags);
        }
    }

    /// Whether a catch-up may run the next line in one go (`run_whole_line_unrendered`): nothing
    /// is drawn, and the line is a plain visible one (not line 0, which starts a frame, nor 143,
    /// whose end enters VBlank, nor one of PyBoy's first frame, whose lines have other lengths).
    #[inline]
    fn can_skip_lines(&self) -> bool {
        !self.render && !self.pyboy_first_frame && (1..VBLANK_LINE - 1).contains(&(self.line + 1))
    }

    /// From the end of a line, runs the next line whole, as its four stages would run it without
    /// drawing, when at least the line after it also ends within this catch-up. Its OAM scan and
    /// mode 3 length only place its stages within the line, and the PyBoy history and
    /// transition time that those places would be recorded in are rewritten by that next line's
    /// four stages before anything can read them; so neither is computed. Every STAT update is
    /// made, in order.
    fn run_whole_line_unrendered(&mut self, iflags: &mut u8) {
        // LineEnd: the next line starts (`start_line` for a visible line other than 0).
        self.dot -= DOTS_PER_LINE;
        self.line += 1;
        let line = self.line;
        if self.wy == line {
            self.wy_triggered = true;
        }
        self.ly = line;
        self.mode = 2;
        self.mode_sources = SRC_OAM;
        self.lyc_match = self.ly == self.lyc;
        self.update_stat(iflags);
        // OamScan -> Drawing.
        self.mode = 3;
        self.mode_sources = 0;
        self.update_stat(iflags);
        // Drawing -> HBlank, not drawing: the window's line counter still counts.
        if self.window_visible() {
            self.window_line = self.window_line.wrapping_add(1);
        }
        self.mode = 0;
        self.mode_sources = SRC_HBLANK;
        self.update_stat(iflags);
        // HBlank -> LineEnd: LY shows the next line 4 dots early.
        self.ly = line + 1;
        self.lyc_match = self.pyboy && self.ly == self.lyc;
        self.update_stat(iflags);
        self.stage = Stage::LineEnd;
        self.next_event = DOTS_PER_LINE;
    }

    /// `run_whole_line_unrendered` with no STAT source enabled, for every line it may run now:
    /// the STAT line then stays low whatever the modes, so only the line, the WY latch and the
    /// window's line counter move from line to line, and the rest is set once as the last line's
    /// end leaves it.
    fn run_whole_lines_without_stat(&mut self) {
        loop {
            self.dot -= DOTS_PER_LINE;
            self.line += 1;
            if self.wy == self.line {
                self.wy_triggered = true;
            }
            if self.window_visible() {
                self.window_line = self.window_line.wrapping_add(1);
            }
            if self.dot < 3 * DOTS_PER_LINE || !self.can_skip_lines() {
                break;
            }
        }
        self.ly = self.line + 1;
        self.mode = 0;
        self.mode_sources = SRC_HBLANK;
        self.lyc_match = self.pyboy && self.ly == self.lyc;
        self.stat_line = false; // the LCD is on here (`tick` stops earlier when it is off)
        self.stage = Stage::LineEnd;
        self.next_event = DOTS_PER_LINE;
    }

    /// PyBoy mode: whether PyBoy's LCD changed state in the last `dots` dots (at most `dots - 1`
    /// ago), i.e. one of the times where PyBoy's scheduler ends a chunk (pyboy/core/mb.py:409-424
    /// runs the CPU up to the nearest of the LCD's, the timer's, ... next events).
    pub fn pyboy_transition_within(&self, dots: u64) -> bool {
        self.lcd_on() && self.elapsed - self.pyboy_transition_at < dots
    }

    /// Whether the stage now ending is line 153's usual end in PyBoy's first frame after the LCD
    /// was switched on, which PyBoy stretches instead (pyboy/core/lcd.py:289-292).
    fn pyboy_stretching_line_153(&self) -> bool {
        self.pyboy_first_frame && self.line == LAST_LINE && self.next_event == DOTS_PER_LINE
    }

    /// PyBoy mode, at the end of the first frame after the LCD was switched on: when (in
    /// `elapsed` dots) PyBoy first looked at that frame's end. PyBoy ends it in two looks at its
    /// LCD clock (pyboy/core/lcd.py:289-297): its first tick at or after line 153's usual end
    /// stretches the line by `PYBOY_FIRST_FRAME_STRETCH_DOTS`, and only a later tick, at or after
    /// the stretched end, ends the frame (see `GameBoy::pyboy_ends_frame_one_step_later`).
    pub fn take_pyboy_stretch_look(&mut self) -> Option<u64> {
        self.pyboy_stretch_look.take()
    }

    /// PyBoy mode: dots ticked so far (the clock of `take_pyboy_stretch_look`).
    pub fn pyboy_elapsed(&self) -> u64 {
        self.elapsed
    }

    /// PyBoy mode: remembers what STAT/LY read before a change at time `at` (in `elapsed` dots).
    fn record_history(&mut self, at: u64) {
        let stat = self.read_register(0xFF41) & 7;
        self.history[self.history_next] = (at, stat, self.ly);
        self.history_next = (self.history_next + 1) % self.history.len();
    }

    /// A register as it read `ago` dots before now (PyBoy mode; STAT's mode/LY=LYC bits and LY
    /// only, over the last few changes; other registers and bits as they are now).
    pub fn read_register_ago(&self, addr: u16, ago: u64) -> u8 {
        let now = self.read_register(addr);
        if ago == 0 || !(addr == 0xFF41 || addr == 0xFF44) {
            return now;
        }
        let t = self.elapsed.saturating_sub(ago);
        let (mut stat, mut ly) = (now & 7, self.ly);
        let n = self.history.len();
        for i in 1..=n {
            let (at, s, l) = self.history[(self.history_next + n - i) % n];
            if at <= t {
                break;
            }
            (stat, ly) = (s, l);
        }
        if addr == 0xFF44 {
            ly
        } else {
            (now & !7) | stat
        }
    }

    /// Handles the event that ends the current stage (the dot counter has reached `next_event`).
    fn advance_stage(&mut self, iflags: &mut u8) {
        match self.stage {
            Stage::OamScan => {
                self.oam_scan();
                self.mode = 3;
                self.mode_sources = 0;
                self.stage = Stage::Drawing;
                self.next_event = OAM_SCAN_DOTS + self.mode3_length();
                self.update_stat(iflags);
            }
            Stage::Drawing => {
                if self.render {
                    self.render_line();
                } else if self.window_visible() {
                    // Not drawing, but the window's line counter is machine state.
                    self.window_line = self.window_line.wrapping_add(1);
                }
                self.mode = 0;
                self.mode_sources = SRC_HBLANK;
                self.stage = Stage::HBlank;
                self.next_event = DOTS_PER_LINE - 4;
                self.update_stat(iflags);
            }
            Stage::HBlank => {
                if self.pyboy && self.pyboy_first_frame && self.line == VBLANK_LINE - 1 {
                    // PyBoy's first frame: VBlank starts right away, 8 dots early (its line 153
                    // is longer by as much).
                    self.dot = self.dot + 4 - DOTS_PER_LINE;
                    self.line = VBLANK_LINE;
                    self.start_line(iflags);
                    return;
                }
                if self.pyboy && self.line == VBLANK_LINE - 1 {
                    // PyBoy runs line 143's HBlank to the line's end and only then makes LY 144
                    // (pyboy/core/lcd.py:376-378, then its mode-1 branch); the other lines' LY
                    // changes 4 dots early there too.
                    self.stage = Stage::LineEnd;
                    self.next_event = DOTS_PER_LINE;
                    return;
                }
                self.ly = self.line + 1;
                if self.pyboy {
                    // PyBoy compares LY with LYC when LY changes (first frame: clears the flag).
                    self.lyc_match = !self.pyboy_first_frame && self.ly == self.lyc;
                    self.update_stat(iflags);
                } else {
                    // While LY already shows the next line, the comparison reads false until
                    // that line starts (mooneye lcdon_timing: STAT at the last dots of a line).
                    self.lyc_match = false;
                    self.update_stat(iflags);
                }
                self.stage = Stage::LineEnd;
                self.next_event = DOTS_PER_LINE;
            }
            Stage::VBlankStart => {
                self.mode_sources = SRC_VBLANK;
                self.stage = Stage::VBlank;
                self.next_event = DOTS_PER_LINE;
                self.update_stat(iflags);
            }
            Stage::Line153Start => {
                self.ly = 0;
                self.lyc_match = self.ly == self.lyc;
                self.stage = Stage::VBlank;
                self.next_event = DOTS_PER_LINE;
                self.update_stat(iflags);
            }
            Stage::LineEnd | Stage::VBlank => {
                if self.pyboy_stretching_line_153() {
                    // The end of the line is one of PyBoy's LCD transitions, and an event here,
                    // so that the look happens where PyBoy's does (`take_pyboy_stretch_look`).
                    self.next_event += PYBOY_FIRST_FRAME_STRETCH_DOTS;
                    return;
                }
                // Lines end at DOTS_PER_LINE; in PyBoy mode line 153 of the first frame later.
                self.dot -= self.next_event;
                self.line = if self.line == LAST_LINE {
                    0
                } else {
                    self.line + 1
                };
                self.start_line(iflags);
            }
        }
    }

    /// Enters dot 0 of `self.line` (LCD running normally).
    fn start_line(&mut self, iflags: &mut u8) {
        let line = self.line;
        if line < VBLANK_LINE {
            if line == 0 {
                self.pyboy_first_frame = false;
                self.window_line = 0;
                self.wy_triggered = false;
                self.frame_started = true;
            }
            if self.wy == line {
                self.wy_triggered = true;
            }
            self.ly = line;
            self.mode = 2;
            self.mode_sources = SRC_OAM;
            self.stage = Stage::OamScan;
            self.next_event = OAM_SCAN_DOTS;
        } else if line == VBLANK_LINE {
            self.ly = line;
            self.mode = 1;
            // DMG: the mode-2 source also fires when entering VBlank.
            self.mode_sources = SRC_VBLANK | SRC_OAM;
            self.stage = Stage::VBlankStart;
            self.next_event = VBLANK_OAM_PULSE_DOTS;
            self.wy_triggered = false;
            *iflags |= VBLANK;
            self.finish_frame();
        } else if line == LAST_LINE && self.pyboy {
            // PyBoy: LY reads 153 for the whole line.
            self.ly = line;
            self.mode = 1;
            self.mode_sources = SRC_VBLANK;
            self.stage = Stage::VBlank;
            self.next_event = DOTS_PER_LINE;
        } else if line == LAST_LINE {
            self.ly = line;
            self.mode = 1;
            self.mode_sources = SRC_VBLANK;
            self.stage = Stage::Line153Start;
            self.next_event = LINE153_LY_RESET_DOT;
        } else {
            self.ly = line;
            self.mode = 1;
            self.mode_sources = SRC_VBLANK;
            self.stage = Stage::VBlank;
            self.next_event = DOTS_PER_LINE;
        }
        self.lyc_match = self.ly == self.lyc;
        self.update_stat(iflags);
    }

    /// VBlank entry: publish the frame drawn into the back buffer.
    fn finish_frame(&mut self) {
        if self.skip_frame {
            self.skip_frame = false;
            self.front.fill(0);
        } else if self.render {
            self.front.copy_from_slice(&self.back[..]);
        }
        self.frame_completed = true;
        self.frame_count += 1;
    }

    #[inline]
    fn stat_sources(&self) -> u8 {
        self.mode_sources | if self.lyc_match { SRC_LYC } else { 0 }
    }

    /// Re-evaluates the STAT line and requests the interrupt on a rising edge.
    fn update_stat(&mut self, iflags: &mut u8) {
        if !self.lcd_on() {
            // The STAT line holds its level while the PPU is off (mooneye stat_lyc_onoff).
            return;
        }
        let level = self.stat_sources() & self.stat_enable != 0;
        if level && !self.stat_line {
            *iflags |= STAT;
        }
        self.stat_line = level;
    }

    fn turn_lcd_off(&mut self) {
        // PyBoy ends a frame when the LCD is switched off or on; the frame loop follows it.
        self.frame_started = true;
        self.pyboy_stretch_look = None;
        self.line = 0;
        self.ly = 0;
        self.dot = 0;
        self.mode = 0;
        self.mode_sources = 0;
        self.stage = Stage::OamScan;
        self.next_event = OAM_SCAN_DOTS;
        // The mode sources drop; the LY=LYC flag keeps its value while the comparison clock is
        // stopped, and so does its part of the STAT line: switching the LCD on with the flag still
        // true raises no new interrupt (mooneye stat_lyc_onoff).
        self.stat_line = self.stat_sources() & self.stat_enable != 0;
        self.sprite_count = 0;
        self.window_line = 0;
        self.wy_triggered = false;
        self.front.fill(0);
    }

    fn turn_lcd_on(&mut self, iflags: &mut u8) {
        self.frame_started = true;
        self.pyboy_stretch_look = None;
        self.line = 0;
        self.ly = 0;
        self.dot = 0;
        // First line after enabling: no OAM scan period, mode 0 is reported for 80 dots.
        self.mode = 0;
        self.mode_sources = 0;
        self.stage = Stage::OamScan;
        self.next_event = OAM_SCAN_DOTS;
        self.window_line = 0;
        self.wy_triggered = self.wy == 0;
        self.skip_frame = true;
        self.lyc_match = self.ly == self.lyc;
        if self.pyboy {
            // PyBoy's first line after enabling reaches mode 3 after 76 dots, not 80.
            self.dot = 4;
            self.pyboy_first_frame = true;
        }
        self.update_stat(iflags);
    }

    /// Registers 0xFF40..=0xFF4B (0xFF46 and unknown addresses read 0xFF).
    pub fn read_register(&self, addr: u16) -> u8 {
        match addr {
            0xFF40 => self.lcdc,
            0xFF41 => {
                let mode = if self.lcd_on() { self.mode } else { 0 };
                0x80 | self.stat_enable | if self.lyc_match { 0x04 } else { 0 } | mode
            }
            0xFF42 => self.scy,
            0xFF43 => self.scx,
            0xFF44 => self.ly,
            0xFF45 => self.lyc,
            0xFF47 => self.bgp,
            0xFF48 => self.obp0,
            0xFF49 => self.obp1,
            0xFF4A => self.wy,
            0xFF4B => self.wx,
            _ => 0xFF,
        }
    }

    /// Where in a `Ppu` the register at `addr` is kept, for the registers only the CPU changes
    /// (LCDC, SCY, SCX, LYC, BGP, OBP0, OBP1, WY, WX), which `read_register` returns as they are
    /// stored; `None` for the others.
    pub(crate) fn cpu_register_offset(addr: u16) -> Option<usize> {
        Some(match addr {
            0xFF40 => std::mem::offset_of!(Ppu, lcdc),
            0xFF42 => std::mem::offset_of!(Ppu, scy),
            0xFF43 => std::mem::offset_of!(Ppu, scx),
            0xFF45 => std::mem::offset_of!(Ppu, lyc),
            0xFF47 => std::mem::offset_of!(Ppu, bgp),
            0xFF48 => std::mem::offset_of!(Ppu, obp0),
            0xFF49 => std::mem::offset_of!(Ppu, obp1),
            0xFF4A => std::mem::offset_of!(Ppu, wy),
            0xFF4B => std::mem::offset_of!(Ppu, wx),
            _ => return None,
        })
    }

    pub fn write_register(&mut self, addr: u16, value: u8, interrupt_flags: &mut u8) {
        match addr {
            0xFF40 => {
                if self.pyboy {
                    self.record_history(self.elapsed);
                }
                let was_on = self.lcd_on();
                self.lcdc = value;
                match (was_on, self.lcd_on()) {
                    (true, false) => self.turn_lcd_off(),
                    (false, true) => self.turn_lcd_on(interrupt_flags),
                    _ => {}
                }
            }
            0xFF41 => {
                // DMG bug: for one cycle STAT behaves as if 0xFF had been written. PyBoy does
                // not have it (pyboy/core/lcd.py, STATRegister.set).
                if !self.pyboy && self.lcd_on() && self.stat_sources() & STAT_ENABLE_MASK != 0 {
                    if !self.stat_line {
                        *interrupt_flags |= STAT;
                    }
                    self.stat_line = true;
                }
                self.stat_enable = value & STAT_ENABLE_MASK;
                self.update_stat(interrupt_flags);
            }
            0xFF42 => self.scy = value,
            0xFF43 => self.scx = value,
            0xFF44 => {} // LY is read-only
            0xFF45 => {
                if self.pyboy {
                    self.record_history(self.elapsed);
                }
                self.lyc = value;
                if self.lcd_on() {
                    self.lyc_match = self.ly == self.lyc;
                    self.update_stat(interrupt_flags);
                }
            }
            0xFF47 => self.bgp = value,
            0xFF48 => self.obp0 = value,
            0xFF49 => self.obp1 = value,
            0xFF4A => self.wy = value,
            0xFF4B => self.wx = value,
            _ => {}
        }
    }

    #[inline]
    fn vram_blocked(&self) -> bool {
        self.lcd_on() && self.mode == 3
    }

    /// Reads see VRAM taken 4 dots before STAT shows mode 3 (mooneye lcdon_timing, line 1
    /// onwards); writes only from mode 3 itself (lcdon_write_timing). These access rules are the
    /// hardware's; the PyBoy-compatible mode has PyBoy's instead (`pyboy_blocks`).
    #[inline]
    fn vram_read_blocked(&self) -> bool {
        self.vram_blocked() || self.in_last_oam_scan_cycle()
    }

    #[inline]
    fn in_last_oam_scan_cycle(&self) -> bool {
        self.lcd_on()
            && self.mode == 2
            && self.stage == Stage::OamScan
            && self.dot + 4 >= OAM_SCAN_DOTS
    }

    #[inline]
    fn oam_blocked(&self) -> bool {
        self.lcd_on() && (self.mode == 2 || self.mode == 3)
    }

    /// Reads: the next visible line's OAM scan takes OAM in the 4 dots before that line starts,
    /// while STAT still reads mode 0 (lcdon_timing).
    #[inline]
    fn oam_read_blocked(&self) -> bool {
        self.oam_blocked()
            || (self.lcd_on() && self.stage == Stage::LineEnd && self.line + 1 < VBLANK_LINE)
    }

    /// Writes: not in those 4 dots, and let through in the last M-cycle of the OAM scan
    /// (lcdon_write_timing).
    #[inline]
    fn oam_write_blocked(&self) -> bool {
        self.oam_blocked() && !self.in_last_oam_scan_cycle()
    }

    /// PyBoy mode: LCD mode as PyBoy saw it `ago` dots before now.
    fn pyboy_mode_ago(&self, ago: u64) -> u8 {
        self.read_register_ago(0xFF41, ago) & 3
    }

    /// PyBoy mode: whether PyBoy refuses a CPU access to VRAM or OAM. PyBoy only looks at its LCD
    /// for the accesses that carry its "memory access offset" (LD (DE),A, LD A,(DE) and
    /// LD A,(HL); every other access passes), at its moment of the access, `ago` dots before
    /// ours, and refuses (pyboy/core/mb.py getitem and setitem): VRAM reads in mode 3 and in
    /// mode 2's last 4 dots, VRAM writes in mode 3, OAM reads in modes 2 and 3 and in the 4 dots
    /// before a line's mode 2 in the first frame after the LCD is switched on, OAM writes in
    /// mode 3 and in mode 2 but its last 4 dots in that first frame. `ago` is 4 for those
    /// opcodes, so the mode now tells what comes within PyBoy's 4 dots.
    pub fn pyboy_blocks(&self, oam: bool, write: bool, ago: u64) -> bool {
        if !self.lcd_on() {
            return false;
        }
        let then = self.pyboy_mode_ago(ago);
        match (oam, write) {
            (false, false) => then == 3 || then == 2 && self.mode == 3,
            (false, true) => then == 3,
            (true, false) => {
                then == 2 || then == 3 || self.pyboy_first_frame && then == 0 && self.mode == 2
            }
            (true, true) => then == 3 || then == 2 && !(self.pyboy_first_frame && self.mode == 3),
        }
    }

    /// CPU read of VRAM (full address 0x8000..=0x9FFF).
    pub fn read_vram(&self, addr: u16) -> u8 {
        if self.vram_read_blocked() {
            0xFF
        } else {
            self.vram[(addr as usize) & 0x1FFF]
        }
    }

    pub fn write_vram(&mut self, addr: u16, value: u8) {
        if !self.vram_blocked() {
            self.store_vram(addr, value);
        }
    }

    /// A VRAM write that goes through (the drawing caches follow it).
    pub fn store_vram(&mut self, addr: u16, value: u8) {
        let index = (addr as usize) & 0x1FFF;
        self.vram[index] = value;
        if index < 0x1800 {
            self.bg_row_palette[index >> 1] = ROW_STALE;
            self.tile_row_versions[(index >> 1) & 7] += 1;
        } else {
            self.map_row_versions[(index - 0x1800) >> 5] += 1;
        }
    }

    pub fn vram(&self) -> &[u8; 0x2000] {
        &self.vram
    }

    /// VRAM to write freely in tests; every cached tile row is dropped.
    #[cfg(test)]
    fn vram_mut(&mut self) -> &mut [u8; 0x2000] {
        self.bg_row_palette = [ROW_STALE; 0x1000];
        self.map_row_versions.iter_mut().for_each(|v| *v += 1);
        self.tile_row_versions.iter_mut().for_each(|v| *v += 1);
        &mut self.vram
    }

    /// CPU read of OAM (full address 0xFE00..=0xFE9F).
    pub fn read_oam(&self, addr: u16) -> u8 {
        let index = (addr as usize).wrapping_sub(0xFE00);
        if self.oam_read_blocked() || index >= self.oam.len() {
            0xFF
        } else {
            self.oam[index]
        }
    }

    pub fn write_oam(&mut self, addr: u16, value: u8) {
        if !self.oam_write_blocked() {
            self.store_oam(addr, value);
        }
    }

    /// An OAM write that goes through (full address 0xFE00..=0xFE9F; others are dropped).
    pub fn store_oam(&mut self, addr: u16, value: u8) {
        let index = (addr as usize).wrapping_sub(0xFE00);
        if index < self.oam.len() {
            self.oam[index] = value;
            self.line_objects_height = 0;
        }
    }

    /// OAM DMA write (not subject to mode blocking).
    pub fn dma_write_oam(&mut self, index: usize, value: u8) {
        if let Some(byte) = self.oam.get_mut(index) {
            *byte = value;
            self.line_objects_height = 0;
        }
    }

    /// OAM DMA writes of `bytes` from OAM index `index` on (all inside OAM).
    pub fn dma_write_oam_run(&mut self, index: usize, bytes: &[u8]) {
        self.oam[index..index + bytes.len()].copy_from_slice(bytes);
        self.line_objects_height = 0;
    }

    pub fn oam(&self) -> &[u8; 0xA0] {
        &self.oam
    }

    /// Dots until the PPU next has to run eagerly, `u32::MAX` while the LCD is off. Between such
    /// events the bus runs it lazily: every register, VRAM or OAM access syncs it first, so a
    /// catch-up draws and times every line as stepping would. Eagerly needed are the boundaries
    /// that can raise an interrupt or end a frame: with any STAT source enabled (or `every_stage`)
    /// each stage boundary, otherwise only the start of line 144 (VBlank) and of line 0.
    #[inline]
    pub fn dots_until_next_event(&self, every_stage: bool) -> u32 {
        if !self.lcd_on() {
            return u32::MAX;
        }
        // PyBoy's first frame after LCD enable has lines of other lengths than the count below
        // assumes: step it stage by stage.
        if every_stage || self.stat_enable != 0 || self.pyboy_first_frame {
            return self.next_event - self.dot;
        }
        let later_lines = if self.line < VBLANK_LINE {
            VBLANK_LINE - self.line - 1
        } else {
            LAST_LINE - self.line
        };
        DOTS_PER_LINE - self.dot + later_lines as u32 * DOTS_PER_LINE
    }

    pub fn frame_started(&self) -> bool {
        self.frame_started
    }

    pub fn take_frame_started(&mut self) -> bool {
        std::mem::take(&mut self.frame_started)
    }

    pub fn lcd_is_on(&self) -> bool {
        self.lcd_on()
    }

    pub fn set_render(&mut self, render: bool) {
        self.render = render;
    }

    pub fn render(&self) -> bool {
        self.render
    }

    /// Places a running LCD at `dot` of VBlank line `line` (145..=152), as another boot ROM
    /// would have left it (see `gameboy::PowerOn::PyBoy`).
    pub fn set_vblank_position(&mut self, line: u8, dot: u32) -> Result<(), String> {
        if !(VBLANK_LINE + 1..LAST_LINE).contains(&line) || dot >= DOTS_PER_LINE || !self.lcd_on() {
            return Err(format!(
                "LCD position line {line} dot {dot} is not inside VBlank lines 145..=152"
            ));
        }
        self.line = line;
        self.ly = line;
        self.dot = dot;
        self.stage = Stage::VBlank;
        self.next_event = DOTS_PER_LINE;
        self.mode = 1;
        self.mode_sources = SRC_VBLANK;
        self.lyc_match = self.ly == self.lyc;
        self.stat_line = self.stat_sources() & self.stat_enable != 0;
        Ok(())
    }

    pub fn take_frame_completed(&mut self) -> bool {
        std::mem::take(&mut self.frame_completed)
    }

    pub fn frame_count(&self) -> u64 {
        self.frame_count
    }

    /// The last completed frame, DMG shades 0..=3, row-major 144x160.
    pub fn screen(&self) -> &[u8; SCREEN_WIDTH * SCREEN_HEIGHT] {
        &self.front
    }

    #[inline]
    fn sprite_height(&self) -> u16 {
        if self.lcdc & LCDC_OBJ_TALL != 0 {
            16
        } else {
            8
        }
    }

    /// Picks the first 10 objects (OAM order) covering this line, sorted into drawing priority.
    fn oam_scan(&mut self) {
        let height = self.sprite_height();
        if self.line_objects_height != height {
            self.build_line_objects(height);
        }
        let mut hits = self.line_objects[self.line as usize];
        let mut count = 0usize;
        while hits != 0 {
            let index = hits.trailing_zeros() as usize;
            hits &= hits - 1;
            let base = index * 4;
            self.sprites[count] = LineSprite {
                y: self.oam[base],
                x: self.oam[base + 1],
                tile: self.oam[base + 2],
                attr: self.oam[base + 3],
                index: index as u8,
            };
            count += 1;
            if count == MAX_LINE_SPRITES {
                break;
            }
        }
        self.sprite_count = count as u8;
        // Stable: equal X keeps OAM order, so lower index wins ties.
        self.sprites[..count].sort_by_key(|s| s.x);
    }

    /// Object i covers line L when `y_i - 16 <= L < y_i - 16 + height`.
    fn build_line_objects(&mut self, height: u16) {
        self.line_objects = [0; 256];
        for (index, entry) in self.oam.chunks_exact(4).enumerate() {
            let top = entry[0] as usize; // the line the object starts on, plus 16
            for line in top.saturating_sub(16)..(top + height as usize).saturating_sub(16) {
                self.line_objects[line] |= 1 << index;
            }
        }
        self.line_objects_height = height;
    }

    /// Whether the window is shown on the current line with the current registers.
    #[inline]
    fn window_visible(&self) -> bool {
        self.lcdc & LCDC_WIN_ENABLE != 0 && self.wy_triggered && self.wx <= 166
    }

    /// Mode 3 duration in dots (see the module docs for the model).
    fn mode3_length(&self) -> u32 {
        if self.pyboy {
            return self.pyboy_mode3_length();
        }
        let mut length = MODE3_BASE_DOTS + (self.scx & 7) as u32;
        let window = self.window_visible();
        let window_start = self.wx as i32 - 7;
        if window {
            length += 6;
        }
        if self.lcdc & LCDC_OBJ_ENABLE == 0 {
            return length;
        }
        let fine_scroll = (self.scx & 7) as i32;
        let mut seen_bg: u32 = 0;
        let mut seen_window: u32 = 0;
        let mut penalty = 0u32;
        for sprite in &self.sprites[..self.sprite_count as usize] {
            if sprite.x >= 168 {
                continue; // never reached by the fetcher
            }
            let pixel = sprite.x as i32 - 8;
            let (column, seen) = if window && pixel >= window_start {
                (pixel - window_start, &mut seen_window)
            } else {
                // Tile index counted from the first (partly discarded) fetched tile; -1..=20.
                (pixel + fine_scroll + 8, &mut seen_bg)
            };
            let tile_bit = 1u32 << ((column >> 3) & 31);
            if *seen & tile_bit == 0 {
                *seen |= tile_bit;
                penalty += (5 - (column & 7)).max(0) as u32;
            }
            penalty += 6;
        }
        length + penalty.saturating_sub(SPRITE_PENALTY_OVERLAP)
    }

    /// PyBoy 2.8.1's mode 3 length (pyboy/core/lcd.py `_mode3_timing_adjustment`): 172 dots, plus
    /// SCX % 8 rounded up to whole M-cycles (not in the first frame after enabling), plus the
    /// objects' penalty (`pyboy_object_penalty`).
    fn pyboy_mode3_length(&self) -> u32 {
        let mut length = MODE3_BASE_DOTS as i32 + self.pyboy_object_penalty();
        if !self.pyboy_first_frame {
            length += ((self.scx & 7) as i32 + 3) / 4 * 4;
        }
        length as u32
    }

    /// PyBoy 2.8.1's object penalty (lcd.py `_mode3_sprite_penalty`), over the line's objects (the
    /// first 10 in OAM order, X >= 168 included): 6 dots per object with X < 168, and for the first
    /// at each distinct X a wait of `5 - ((X + SCX - 8) % 8)` dots when positive; the sum less the 7
    /// dots that overlap the fixed start, not below 0. A line whose objects all have X >= 168 is
    /// 4 dots shorter. No window penalty.
    fn pyboy_object_penalty(&self) -> i32 {
        if self.lcdc & LCDC_OBJ_ENABLE == 0 || self.sprite_count == 0 {
            return 0;
        }
        let mut seen = [false; 168];
        let (mut penalty, mut distinct_x) = (0i32, 0u32);
        for sprite in &self.sprites[..self.sprite_count as usize] {
            if sprite.x >= 168 {
                continue;
            }
            penalty += 6;
            if !seen[sprite.x as usize] {
                seen[sprite.x as usize] = true;
                distinct_x += 1;
                penalty += (5 - ((sprite.x as i32 + self.scx as i32 - 8) & 7)).max(0);
            }
        }
        if distinct_x == 0 {
            return -4;
        }
        (penalty - 7).max(0)
    }

    /// PyBoy 2.8.1 compatibility timing (see `pyboy_mode3_length`, `turn_lcd_on` and the line-153
    /// handling); off by default (hardware timing).
    pub fn set_pyboy_timing(&mut self, on: bool) {
        self.pyboy = on;
    }

    /// Color number of pixel `col` (0 = leftmost) from a tile row's two bit planes.
    #[inline]
    fn pixel_color(lo: u8, hi: u8, col: u32) -> u8 {
        let bit = 7 - col;
        (((hi >> bit) & 1) << 1) | ((lo >> bit) & 1)
    }

    /// The background/window tile addressing of LCDC.4, as (index flip, base): tile data at
    /// 0x8000 with unsigned indices, or at 0x9000 with signed ones, which is index ^ 0x80 from
    /// 0x8800. Taken once per line, so that the per-tile offsets need no branch.
    fn bg_tile_addressing(&self) -> (u8, usize) {
        if self.lcdc & LCDC_TILE_DATA != 0 {
            (0, 0)
        } else {
            (0x80, 0x800)
        }
    }

    /// Where row `row` of background/window tile `tile` starts in VRAM (its low plane byte),
    /// under `addressing` (`bg_tile_addressing`).
    #[inline]
    fn bg_tile_row_offset((flip, base): (u8, usize), tile: u8, row: usize) -> usize {
        base + (tile ^ flip) as usize * 16 + row * 2
    }

    /// Draws line `self.line` into the back buffer.
    fn render_line(&mut self) {
        let line = self.line as usize;
        if line >= SCREEN_HEIGHT {
            return;
        }
        let (obj, any_obj) = self.object_line(line);
        let (bgp, obp0, obp1) = (self.bgp, self.obp0, self.obp1);
        // Without object pixels on the line only the background palette applies, so the tiles are
        // drawn as shades straight away (four pixels per lookup); otherwise as color numbers.
        let mut bg = [0u8; SCREEN_WIDTH];
        let window = if any_obj {
            let colors = |p: &mut Ppu, offset: usize| {
                u64::from_le_bytes(tile_row_colors(p.vram[offset], p.vram[offset + 1]))
            };
            self.background_line(colors, 0, false, &mut bg)
        } else {
            if self.shade_lut_palette != bgp as u16 {
                self.shade_lut = shade_lut(bgp);
                self.shade_lut_palette = bgp as u16;
            }
            let shades = |p: &mut Ppu, offset: usize| {
                let entry = (offset >> 1) & 0xFFF;
                if p.bg_row_palette[entry] == bgp as u16 {
                    return p.bg_row_shades[entry];
                }
                let (lo, hi) = (p.vram[offset], p.vram[offset + 1]);
                let left = p.shade_lut[((lo >> 4) | (hi & 0xF0)) as usize];
                let right = p.shade_lut[((lo & 0x0F) | (hi << 4)) as usize];
                let row = left as u64 | (right as u64) << 32;
                p.bg_row_shades[entry] = row;
                p.bg_row_palette[entry] = bgp as u16;
                row
            };
            self.background_line(shades, bgp & 3, true, &mut bg)
        };
        if window {
            // The fetcher ran the window on this line (also with LCDC.0 clear on DMG).
            self.window_line = self.window_line.wrapping_add(1);
        }
        if !any_obj {
            self.back[line * SCREEN_WIDTH..(line + 1) * SCREEN_WIDTH].copy_from_slice(&bg);
            return;
        }
        let out = &mut self.back[line * SCREEN_WIDTH..(line + 1) * SCREEN_WIDTH];
        for x in 0..SCREEN_WIDTH {
            let bgc = bg[x];
            let o = obj[x];
            out[x] = if o != 0 && (o & ATTR_BEHIND_BG == 0 || bgc == 0) {
                let palette = if o & ATTR_PALETTE != 0 { obp1 } else { obp0 };
                (palette >> ((o & 3) * 2)) & 3
            } else {
                (bgp >> (bgc * 2)) & 3
            };
        }
    }

    /// The object pixels of line `line`: bits 0-1 color (non-zero when set), plus the palette and
    /// priority attributes; and whether there is any.
    fn object_line(&self, line: usize) -> ([u8; SCREEN_WIDTH], bool) {
        let mut obj = [0u8; SCREEN_WIDTH];
        let mut any_obj = false;
        if self.lcdc & LCDC_OBJ_ENABLE == 0 {
            return (obj, any_obj);
        }
        let height = self.sprite_height() as i32;
        for sprite in &self.sprites[..self.sprite_count as usize] {
            if sprite.x == 0 || sprite.x >= 168 {
                continue;
            }
            let mut row = line as i32 + 16 - sprite.y as i32;
            if row < 0 || row >= height {
                continue; // height changed since the scan
            }
            if sprite.attr & ATTR_Y_FLIP != 0 {
                row = height - 1 - row;
            }
            let tile = if height == 16 {
                (sprite.tile & 0xFE) as usize | (row as usize >> 3)
            } else {
                sprite.tile as usize
            };
            let addr = tile * 16 + (row as usize & 7) * 2;
            let (lo, hi) = (self.vram[addr], self.vram[addr + 1]);
            let left = sprite.x as i32 - 8;
            for col in 0..8i32 {
                let sx = left + col;
                if !(0..SCREEN_WIDTH as i32).contains(&sx) || obj[sx as usize] != 0 {
                    continue;
                }
                let src_col = if sprite.attr & ATTR_X_FLIP != 0 {
                    7 - col
                } else {
                    col
                };
                let color = Self::pixel_color(lo, hi, src_col as u32);
                if color != 0 {
                    obj[sx as usize] = color | (sprite.attr & (ATTR_BEHIND_BG | ATTR_PALETTE));
                    any_obj = true;
                }
            }
        }
        (obj, any_obj)
    }

    /// Draws the background and window of the current line into `bg`, each tile row turned into
    /// eight pixel bytes by `tile_pixels(self, offset)`, `offset` being where the row starts in
    /// VRAM (leftmost pixel in the lowest byte); `blank` where LCDC.0 hides both. With
    /// `as_shades` (the pixels are BGP shades), the background part goes through `bg_lines`.
    /// Says whether the window ran on this line (its line counter then advances).
    fn background_line(
        &mut self,
        mut tile_pixels: impl FnMut(&mut Ppu, usize) -> u64,
        blank: u8,
        as_shades: bool,
        bg: &mut [u8; SCREEN_WIDTH],
    ) -> bool {
        let line = self.line as usize;
        let bg_enabled = self.lcdc & LCDC_BG_ENABLE != 0;

        if bg_enabled {
            let map = if self.lcdc & LCDC_BG_MAP != 0 {
                0x1C00
            } else {
                0x1800
            };
            let y = (line + self.scy as usize) & 0xFF;
            let map_row = map + (y / 8) * 32;
            let tile_row = y & 7;
            // 21 tiles cover 160 pixels at any fine scroll; draw them whole, then take the window.
            let scx = self.scx as usize;
            let addressing = self.bg_tile_addressing();
            let key = BgLineKey {
                map_row: map_row as u16,
                tile_row: tile_row as u8,
                scx: self.scx,
                bgp: self.bgp,
                index_flip: addressing.0,
                map_row_version: self.map_row_versions[(map_row - 0x1800) >> 5],
                tile_row_version: self.tile_row_versions[tile_row],
            };
            if as_shades && self.bg_lines[line].key == key {
                bg.copy_from_slice(&self.bg_lines[line].shades);
            } else {
                let mut strip = [0u8; 21 * 8];
                for (i, chunk) in strip.chunks_exact_mut(8).enumerate() {
                    let tile = self.vram[map_row + ((scx / 8 + i) & 31)];
                    let offset = Self::bg_tile_row_offset(addressing, tile, tile_row);
                    chunk.copy_from_slice(&tile_pixels(self, offset).to_le_bytes());
                }
                bg.copy_from_slice(&strip[scx & 7..(scx & 7) + SCREEN_WIDTH]);
                if as_shades {
                    self.bg_lines[line] = BgLine { key, shades: *bg };
                }
            }
        } else {
            bg.fill(blank);
        }

        let window = self.window_visible();
        if window && bg_enabled {
            let map = if self.lcdc & LCDC_WIN_MAP != 0 {
                0x1C00
            } else {
                0x1800
            };
            let wline = self.window_line as usize;
            let map_row = map + (wline / 8) * 32;
            let tile_row = wline & 7;
            // Screen pixel x shows window column x - (WX - 7). As for the background, draw
            // whole tiles from the first visible one (WX < 7 starts inside tile 0), then copy.
            let start = self.wx as i32 - 7;
            let first = start.max(0) as usize;
            let skip = (first as i32 - start) as usize; // 0..=6
            let width = SCREEN_WIDTH - first;
            let mut strip = [0u8; 21 * 8];
            let tiles = (skip + width).div_ceil(8);
            let addressing = self.bg_tile_addressing();
            for (i, chunk) in strip.chunks_exact_mut(8).take(tiles).enumerate() {
                let offset = Self::bg_tile_row_offset(addressing, self.vram[map_row + i], tile_row);
                chunk.copy_from_slice(&tile_pixels(self, offset).to_le_bytes());
            }
            bg[first..].copy_from_slice(&strip[skip..skip + width]);
        }
        window
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.u32(STATE_TAG);
        w.bytes(&self.vram);
        w.bytes(&self.oam);
        for v in [
            self.lcdc,
            self.stat_enable,
            self.scy,
            self.scx,
            self.lyc,
            self.bgp,
            self.obp0,
            self.obp1,
            self.wy,
            self.wx,
            self.line,
            self.ly,
        ] {
            w.u8(v);
        }
        w.u32(self.dot);
        w.u32(self.next_event);
        w.u8(self.stage as u8);
        w.u8(self.mode);
        w.u8(self.mode_sources);
        w.bool(self.lyc_match);
        w.bool(self.stat_line);
        w.u8(self.sprite_count);
        // Entries past the count are leftovers of earlier lines, not state: written as zeros, so
        // that a state does not depend on which lines a catch-up scanned.
        let count = self.sprite_count as usize;
        for (i, s) in self.sprites.iter().enumerate() {
            let s = if i < count { *s } else { LineSprite::default() };
            w.u8(s.y);
            w.u8(s.x);
            w.u8(s.tile);
            w.u8(s.attr);
            w.u8(s.index);
        }
        w.u8(self.window_line);
        w.bool(self.wy_triggered);
        w.bool(self.skip_frame);
        w.bool(self.frame_completed);
        w.u64(self.frame_count);
        w.bool(self.pyboy_first_frame);
        w.bytes(&self.back[..]);
        w.bytes(&self.front[..]);
    }

    /// Restores a state written by `save`; on error `self` is left unchanged.
    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        let bad = |what: &str| StateError(format!("ppu: {what}"));
        if r.u32()? != STATE_TAG {
            return Err(bad("missing section tag"));
        }
        let mut p = Ppu::new();
        r.bytes_into(&mut p.vram)?;
        r.bytes_into(&mut p.oam)?;
        p.lcdc = r.u8()?;
        p.stat_enable = r.u8()? & STAT_ENABLE_MASK;
        p.scy = r.u8()?;
        p.scx = r.u8()?;
        p.lyc = r.u8()?;
        p.bgp = r.u8()?;
        p.obp0 = r.u8()?;
        p.obp1 = r.u8()?;
        p.wy = r.u8()?;
        p.wx = r.u8()?;
        p.line = r.u8()?;
        p.ly = r.u8()?;
        p.dot = r.u32()?;
        p.next_event = r.u32()?;
        p.stage = Stage::from_u8(r.u8()?).ok_or_else(|| bad("bad stage"))?;
        p.mode = r.u8()?;
        p.mode_sources = r.u8()?;
        p.lyc_match = r.bool()?;
        p.stat_line = r.bool()?;
        p.sprite_count = r.u8()?;
        for s in p.sprites.iter_mut() {
            s.y = r.u8()?;
            s.x = r.u8()?;
            s.tile = r.u8()?;
            s.attr = r.u8()?;
            s.index = r.u8()?;
        }
        p.window_line = r.u8()?;
        p.wy_triggered = r.bool()?;
        p.skip_frame = r.bool()?;
        p.frame_completed = r.bool()?;
        p.frame_count = r.u64()?;
        p.pyboy_first_frame = r.bool()?;
        r.bytes_into(&mut p.back[..])?;
        r.bytes_into(&mut p.front[..])?;

        if p.line > LAST_LINE
            || p.mode > 3
            || p.sprite_count as usize > MAX_LINE_SPRITES
            || p.next_event > DOTS_PER_LINE + PYBOY_FIRST_FRAME_STRETCH_DOTS
            || p.dot >= p.next_event
        {
            return Err(bad("inconsistent timing fields"));
        }
        p.render = self.render;
        p.pyboy = self.pyboy;
        p.elapsed = self.elapsed;
        *self = p;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME_DOTS: u32 = 70224;

    /// A PPU at line 0, dot 0 of a displayed frame (LCD on, default registers, BGP=0xE4).
    /// A small LCG for the randomised tests (the high bits of a 64-bit state).
    fn lcg(mut seed: u64) -> impl FnMut() -> u32 {
        move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        }
    }

    fn frame_start() -> (Ppu, u8) {
        let mut p = Ppu::new();
        let mut iflags = 0u8;
        p.tick(DOTS_PER_LINE - BOOT_DOT, &mut iflags);
        assert_eq!((p.line, p.dot), (0, 0));
        p.write_register(0xFF47, 0xE4, &mut iflags);
        p.write_register(0xFF48, 0xE4, &mut iflags);
        p.write_register(0xFF49, 0x1B, &mut iflags);
        (p, 0)
    }

    fn mode(p: &Ppu) -> u8 {
        p.read_register(0xFF41) & 3
    }

    fn run(p: &mut Ppu, dots: u32, iflags: &mut u8) {
        for _ in 0..dots / 4 {
            p.tick(4, iflags);
        }
        p.tick(dots % 4, iflags);
    }

    fn px(p: &Ppu, x: usize, y: usize) -> u8 {
        p.screen()[y * SCREEN_WIDTH + x]
    }

    /// Tile `index` (0x8000 addressing) filled with color `color`.
    fn solid_tile(p: &mut Ppu, index: usize, color: u8) {
        let lo = if color & 1 != 0 { 0xFF } else { 0 };
        let hi = if color & 2 != 0 { 0xFF } else { 0 };
        for row in 0..8 {
            p.vram_mut()[index * 16 + row * 2] = lo;
            p.vram_mut()[index * 16 + row * 2 + 1] = hi;
        }
    }

    fn set_sprite(p: &mut Ppu, n: usize, y: u8, x: u8, tile: u8, attr: u8) {
        for (k, byte) in [y, x, tile, attr].into_iter().enumerate() {
            p.dma_write_oam(n * 4 + k, byte);
        }
    }

    /// Mode of every dot of the current line, starting at dot 0.
    fn line_modes(p: &mut Ppu, iflags: &mut u8) -> Vec<u8> {
        let mut modes = Vec::new();
        for _ in 0..DOTS_PER_LINE {
            modes.push(mode(p));
            p.tick(1, iflags);
        }
        modes
    }

    fn run_lengths(modes: &[u8]) -> Vec<(u8, usize)> {
        let mut out: Vec<(u8, usize)> = Vec::new();
        for &m in modes {
            match out.last_mut() {
                Some((last, n)) if *last == m => *n += 1,
                _ => out.push((m, 1)),
            }
        }
        out
    }

    #[test]
    fn boot_state() {
        let p = Ppu::new();
        assert_eq!(p.read_register(0xFF40), 0x91);
        assert_eq!(p.read_register(0xFF41), 0x85);
        assert_eq!(p.read_register(0xFF44), 0);
        assert_eq!(p.read_register(0xFF47), 0xFC);
        assert_eq!(p.read_register(0xFF48), 0xFF);
        assert_eq!(p.read_register(0xFF49), 0xFF);
        assert_eq!(p.read_register(0xFF4A), 0);
        assert_eq!(p.read_register(0xFF4B), 0);
        assert_eq!(p.frame_count(), 0);
        assert!(p.screen().iter().all(|&s| s == 0));
    }

    #[test]
    fn mode_sequence_and_durations() {
        let (mut p, mut iflags) = frame_start();
        assert_eq!(
            run_lengths(&line_modes(&mut p, &mut iflags)),
            vec![(2, 80), (3, 172), (0, 204)]
        );

        // SCX % 8 lengthens mode 3.
        p.write_register(0xFF43, 0x13, &mut iflags);
        assert_eq!(
            run_lengths(&line_modes(&mut p, &mut iflags)),
            vec![(2, 80), (3, 175), (0, 201)]
        );
        p.write_register(0xFF43, 0, &mut iflags);

        // One tile-aligned object: 6 + 5 dots, less the 3 mode 0 does not show. Line 2 is now current.
        p.write_register(0xFF40, 0x91 | LCDC_OBJ_ENABLE, &mut iflags);
        set_sprite(&mut p, 0, 16, 8, 0, 0);
        assert_eq!(
            run_lengths(&line_modes(&mut p, &mut iflags)),
            vec![(2, 80), (3, 172 + 11 - 3), (0, 204 - 8)]
        );
        // A second object in the same tile, 3 pixels further: only the flat 6 dots.
        set_sprite(&mut p, 1, 16, 11, 0, 0);
        assert_eq!(
            run_lengths(&line_modes(&mut p, &mut iflags)),
            vec![(2, 80), (3, 172 + 17 - 3), (0, 204 - 14)]
        );
        // Objects off: no penalty.
        p.write_register(0xFF40, 0x91, &mut iflags);
        assert_eq!(
            run_lengths(&line_modes(&mut p, &mut iflags)),
            vec![(2, 80), (3, 172), (0, 204)]
        );
    }

    #[test]
    fn mode3_length_is_bounded_with_ten_sprites_and_window() {
        let (mut p, mut iflags) = frame_start();
        for n in 0..40 {
            // X=0 with SCX=7: that tile's wait is over (5 - 7 < 0), 6 dots each, only 10 counted
            set_sprite(&mut p, n, 16, 0, 0, 0);
        }
        p.write_register(0xFF43, 7, &mut iflags);
        p.write_register(
            0xFF40,
            0x91 | LCDC_OBJ_ENABLE | LCDC_WIN_ENABLE,
            &mut iflags,
        );
        p.write_register(0xFF4B, 7, &mut iflags);
        // WY=0 latched at line 0 start already.
        let runs = run_lengths(&line_modes(&mut p, &mut iflags));
        assert_eq!(
            runs,
            vec![(2, 80), (3, 172 + 7 + 6 + 60 - 3), (0, 456 - 80 - 242)]
        );
    }

    /// PyBoy 2.8.1's mode 3 lengths, worked out by hand from pyboy/core/lcd.py
    /// (`_mode3_sprite_penalty`, `_mode3_timing_adjustment`): 172 + the objects' penalty (6 per
    /// object with X < 168, the first at each X waiting `5 - ((X + SCX - 8) & 7)` when positive,
    /// less 7, not below 0; -4 when every object on the line has X >= 168) + SCX % 8 rounded up
    /// to 4 (not in the first frame after LCD-on). (mooneye intr_2_mode0_timing_sprites, which
    /// measures these, is equal to PyBoy at every frame in L3.)
    #[test]
    fn pyboy_mode3_length_is_pyboys() {
        // (objects as (Y, X), SCX, objects enabled, first frame, PyBoy's length)
        type Case = (&'static [(u8, u8)], u8, bool, bool, u32);
        let cases: [Case; 11] = [
            (&[(16, 8)], 0, false, false, 172),
            (&[], 0, true, false, 172),
            (&[(16, 8)], 0, true, false, 172 + (6 + 5 - 7)),
            (&[(16, 8)], 3, true, false, 172 + (6 + 2 - 7) + 4),
            (&[(16, 8)], 3, true, true, 172 + (6 + 2 - 7)),
            (&[(16, 8), (16, 8)], 0, true, false, 172 + (6 + 5 + 6 - 7)),
            (
                &[(16, 8), (16, 9)],
                0,
                true,
                false,
                172 + (6 + 5 + 6 + 4 - 7),
            ),
            (&[(16, 12)], 0, true, false, 172), // 6 + 1 - 7 = 0
            (&[(16, 168)], 0, true, false, 172 - 4),
            (&[(16, 168)], 5, true, false, 172 - 4 + 8),
            (&[(16, 168), (16, 20)], 0, true, false, 172), // 6 + 1 - 7 = 0
        ];
        for (objects, scx, objects_on, first_frame, expected) in cases {
            let (mut p, mut iflags) = frame_start();
            p.set_pyboy_timing(true);
            p.pyboy_first_frame = first_frame;
            for (n, &(y, x)) in objects.iter().enumerate() {
                set_sprite(&mut p, n, y, x, 0, 0);
            }
            p.write_register(0xFF43, scx, &mut iflags);
            let lcdc = 0x91 | if objects_on { LCDC_OBJ_ENABLE } else { 0 };
            p.write_register(0xFF40, lcdc, &mut iflags);
            p.oam_scan();
            let case =
                format!("{objects:?}, SCX {scx}, objects {objects_on}, first frame {first_frame}");
            assert_eq!(p.pyboy_mode3_length(), expected, "{case}");
        }
        // Ten objects at X=0 with SCX=7 (of 40 on the line, only the first 10 count): 6 each, X=0's
        // wait 5 - 7 < 0; 60 - 7 + 8.
        let (mut p, mut iflags) = frame_start();
        p.set_pyboy_timing(true);
        p.pyboy_first_frame = false;
        for n in 0..40 {
            set_sprite(&mut p, n, 16, 0, 0, 0);
        }
        p.write_register(0xFF43, 7, &mut iflags);
        p.write_register(0xFF40, 0x91 | LCDC_OBJ_ENABLE, &mut iflags);
        p.oam_scan();
        assert_eq!(p.pyboy_mode3_length(), 172 + 53 + 8);
    }

    #[test]
    fn ly_increments_every_line_and_wraps() {
        let (mut p, mut iflags) = frame_start();
        for expected in 0..153u8 {
            assert_eq!(p.read_register(0xFF44), expected);
            run(&mut p, DOTS_PER_LINE, &mut iflags);
        }
        // Line 153: LY reads 153 only for its first 4 dots.
        assert_eq!(p.read_register(0xFF44), 153);
        assert_eq!(mode(&p), 1);
        run(&mut p, 3, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 153);
        run(&mut p, 1, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 0);
        assert_eq!(mode(&p), 1);
        run(&mut p, DOTS_PER_LINE - 4, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 0);
        assert_eq!(mode(&p), 2);
        assert_eq!((p.line, p.dot), (0, 0));
        // A whole frame in one call lands on the same point.
        p.tick(FRAME_DOTS, &mut iflags);
        assert_eq!((p.line, p.dot), (0, 0));
        p.tick(FRAME_DOTS - 1, &mut iflags);
        assert_eq!((p.line, p.dot), (153, 455));
        // LY is read-only.
        p.write_register(0xFF44, 77, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 0);
    }

    #[test]
    fn ly_shows_next_line_in_last_4_dots_but_lyc_matches_at_line_start() {
        let (mut p, mut iflags) = frame_start();
        p.write_register(0xFF45, 1, &mut iflags);
        p.write_register(0xFF41, 0x40, &mut iflags);
        iflags = 0;
        run(&mut p, DOTS_PER_LINE - 4, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 1);
        assert_eq!(p.read_register(0xFF41) & 0x04, 0);
        assert_eq!(iflags, 0);
        run(&mut p, 4, &mut iflags);
        assert_eq!(p.read_register(0xFF41) & 0x04, 0x04);
        assert_eq!(iflags, STAT);
    }

    #[test]
    fn vblank_once_per_frame_at_ly_144() {
        let (mut p, mut iflags) = frame_start();
        let mut requests = 0;
        for _ in 0..3 * FRAME_DOTS / 4 {
            p.tick(4, &mut iflags);
            if iflags & VBLANK != 0 {
                requests += 1;
                assert_eq!(p.read_register(0xFF44), 144);
                assert_eq!(p.dot, 0);
                assert_eq!(mode(&p), 1);
                assert!(p.take_frame_completed());
                assert!(!p.take_frame_completed());
                iflags = 0;
            }
        }
        assert_eq!(requests, 3);
        assert_eq!(p.frame_count(), 3);
    }

    #[test]
    fn lyc_coincidence_and_rising_edge_only() {
        let (mut p, mut iflags) = frame_start();
        p.write_register(0xFF45, 5, &mut iflags);
        // Writing STAT in mode 2 triggers the DMG write bug (mode 2 source is active).
        p.write_register(0xFF41, 0x40, &mut iflags);
        assert_eq!(iflags, STAT);
        iflags = 0;
        assert_eq!(p.read_register(0xFF41) & 0x04, 0);
        run(&mut p, 5 * DOTS_PER_LINE - 4, &mut iflags);
        assert_eq!(iflags & STAT, 0);
        run(&mut p, 4, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 5);
        assert_eq!(p.read_register(0xFF41), 0x80 | 0x40 | 0x04 | 2);
        assert_eq!(iflags & STAT, STAT);
        iflags = 0;
        // The line stays high during all of LY=5: no second request, even when HBlank begins
        // with its source enabled too (STAT IRQ blocking).
        p.write_register(0xFF41, 0x48, &mut iflags);
        assert_eq!(iflags, 0, "no new edge while the line is already high");
        run(&mut p, DOTS_PER_LINE - 4, &mut iflags);
        assert_eq!(iflags & STAT, 0);
        // Line 6: LYC drops, mode 2 is not enabled -> line low; HBlank of line 6 is a new edge.
        run(&mut p, 4, &mut iflags);
        assert_eq!(p.read_register(0xFF41) & 0x04, 0);
        run(&mut p, 80 + 172 - 4, &mut iflags);
        assert_eq!(iflags & STAT, 0);
        run(&mut p, 4, &mut iflags);
        assert_eq!(iflags & STAT, STAT);
    }

    #[test]
    fn lyc_write_matches_immediately() {
        let (mut p, mut iflags) = frame_start();
        run(&mut p, 3 * DOTS_PER_LINE + 100, &mut iflags);
        p.write_register(0xFF41, 0x40, &mut iflags);
        iflags = 0;
        p.write_register(0xFF45, 3, &mut iflags);
        assert_eq!(p.read_register(0xFF41) & 0x04, 0x04);
        assert_eq!(iflags, STAT);
    }

    #[test]
    fn stat_mode_interrupt_counts_per_frame() {
        // Mode 2 source only: one per visible line plus the DMG one at LY=144.
        let (mut p, mut iflags) = frame_start();
        p.write_register(0xFF41, 0x20, &mut iflags);
        iflags = 0;
        let mut count = 0;
        let mut at_144 = false;
        for _ in 0..FRAME_DOTS / 4 {
            p.tick(4, &mut iflags);
            if iflags & STAT != 0 {
                count += 1;
                at_144 |= p.read_register(0xFF44) == 144;
                iflags &= !STAT;
            }
        }
        assert_eq!(count, 145);
        assert!(at_144);

        // Mode 0 source: one per visible line. Mode 1 source: one per frame.
        for (enable, expected) in [(0x08u8, 144), (0x10, 1)] {
            let (mut p, mut iflags) = frame_start();
            p.write_register(0xFF41, enable, &mut iflags);
            iflags = 0;
            let mut count = 0;
            for _ in 0..FRAME_DOTS / 4 {
                p.tick(4, &mut iflags);
                if iflags & STAT != 0 {
                    count += 1;
                    iflags &= !STAT;
                }
            }
            assert_eq!(count, expected, "enable {enable:#x}");
        }
    }

    #[test]
    fn lyc_zero_matches_from_line_153() {
        let (mut p, mut iflags) = frame_start();
        p.write_register(0xFF41, 0x40, &mut iflags); // LY=LYC=0 now: write glitch + edge
        run(&mut p, 10 * DOTS_PER_LINE, &mut iflags);
        iflags = 0;
        let mut hits = Vec::new();
        for _ in 0..FRAME_DOTS / 4 {
            p.tick(4, &mut iflags);
            if iflags & STAT != 0 {
                hits.push((p.line, p.dot));
                iflags = 0;
            }
        }
        assert_eq!(hits, vec![(153, 4)]);
    }

    #[test]
    fn stat_write_bug_requests_interrupt() {
        let (mut p, mut iflags) = frame_start();
        run(&mut p, 300, &mut iflags); // HBlank of line 0, LYC=0 matches too
        assert_eq!(mode(&p), 0);
        iflags = 0;
        p.write_register(0xFF41, 0x00, &mut iflags);
        assert_eq!(iflags, STAT);
        // During mode 3 with LY != LYC nothing is active: no spurious interrupt.
        p.write_register(0xFF45, 99, &mut iflags);
        run(&mut p, 456 - 300 + 100, &mut iflags);
        assert_eq!(mode(&p), 3);
        iflags = 0;
        p.write_register(0xFF41, 0x00, &mut iflags);
        assert_eq!(iflags, 0);
        // Bits 0-2 are read-only, bit 7 reads 1.
        p.write_register(0xFF41, 0xFF, &mut iflags);
        assert_eq!(p.read_register(0xFF41), 0xFB);
    }

    #[test]
    fn vram_and_oam_access_blocking() {
        let (mut p, mut iflags) = frame_start();
        // Mode 2: VRAM free, OAM blocked.
        p.write_vram(0x8010, 0x5A);
        assert_eq!(p.read_vram(0x8010), 0x5A);
        p.write_oam(0xFE00, 0x11);
        assert_eq!(p.read_oam(0xFE00), 0xFF);
        assert_eq!(p.oam[0], 0);
        // Mode 3: both blocked.
        run(&mut p, 100, &mut iflags);
        assert_eq!(mode(&p), 3);
        assert_eq!(p.read_vram(0x8010), 0xFF);
        p.write_vram(0x8010, 0x33);
        assert_eq!(p.vram[0x10], 0x5A);
        assert_eq!(p.read_oam(0xFE00), 0xFF);
        // DMA writes are never blocked.
        p.dma_write_oam(0, 0x42);
        assert_eq!(p.oam[0], 0x42);
        // Mode 0: both free.
        run(&mut p, 200, &mut iflags);
        assert_eq!(mode(&p), 0);
        assert_eq!(p.read_vram(0x8010), 0x5A);
        p.write_oam(0xFE01, 0x24);
        assert_eq!(p.read_oam(0xFE00), 0x42);
        assert_eq!(p.read_oam(0xFE01), 0x24);
        assert_eq!(p.read_oam(0xFEA0), 0xFF);
        // Mode 1: both free.
        run(&mut p, 150 * DOTS_PER_LINE, &mut iflags);
        assert_eq!(mode(&p), 1);
        p.write_vram(0x9FFF, 7);
        assert_eq!(p.read_vram(0x9FFF), 7);
    }

    #[test]
    fn drawn_tile_rows_follow_vram_writes_and_the_palette() {
        let (mut p, mut iflags) = frame_start();
        for row in 0..8 {
            p.vram_mut()[16 + row * 2] = 0xF0;
            p.vram_mut()[16 + row * 2 + 1] = 0x3C;
        }
        p.vram_mut()[0x1800] = 1;
        p.write_register(0xFF47, 0xE4, &mut iflags);
        let pixels = |p: &Ppu, y: usize| (0..8).map(|x| px(p, x, y)).collect::<Vec<u8>>();
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(pixels(&p, 3), vec![1, 1, 3, 3, 2, 2, 0, 0]);
        // Row 3 of tile 1 rewritten by the CPU (mode 2: VRAM free), then drawn again.
        assert_ne!(mode(&p), 3);
        p.write_vram(0x8016, 0x0F);
        p.write_vram(0x8017, 0x00);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(pixels(&p, 3), vec![0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(pixels(&p, 2), vec![1, 1, 3, 3, 2, 2, 0, 0]);
        // Another palette: the same rows in other shades.
        p.write_register(0xFF47, 0x1B, &mut iflags);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(pixels(&p, 3), vec![3, 3, 3, 3, 2, 2, 2, 2]);
        assert_eq!(pixels(&p, 2), vec![2, 2, 0, 0, 1, 1, 3, 3]);
    }

    #[test]
    fn renders_a_background_tile() {
        let (mut p, mut iflags) = frame_start();
        // Tile 1: row r has lo=0xF0, hi=0x3C -> colors 1 1 3 3 2 2 0 0.
        for row in 0..8 {
            p.vram_mut()[16 + row * 2] = 0xF0;
            p.vram_mut()[16 + row * 2 + 1] = 0x3C;
        }
        p.vram_mut()[0x1800] = 1; // map (0,0)
        p.vram_mut()[0x1800 + 32 + 2] = 1; // map (2,1)
        p.write_register(0xFF47, 0xE4, &mut iflags);
        run(&mut p, FRAME_DOTS, &mut iflags);
        let row: Vec<u8> = (0..10).map(|x| px(&p, x, 3)).collect();
        assert_eq!(row, vec![1, 1, 3, 3, 2, 2, 0, 0, 0, 0]);
        assert_eq!(px(&p, 16, 8), 1);
        assert_eq!(px(&p, 19, 15), 3);
        assert_eq!(px(&p, 20, 15), 2);
        assert_eq!(px(&p, 0, 8), 0);

        // Palette mapping and scrolling: SCX=2, SCY=8, BGP inverted.
        p.write_register(0xFF43, 2, &mut iflags);
        p.write_register(0xFF42, 8, &mut iflags);
        p.write_register(0xFF47, 0x1B, &mut iflags);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(px(&p, 14, 0), 3 - 1); // map (2,1) pixel 0 -> color 1 -> shade 2
        assert_eq!(px(&p, 16, 0), 3 - 3);
        assert_eq!(px(&p, 0, 0), 3);

        // Signed addressing (LCDC.4 = 0) and the 0x9C00 map (LCDC.3 = 1).
        for row in 0..8 {
            p.vram_mut()[0x0800 + row * 2] = 0xFF; // tile 0x80 at 0x8800: color 1
            p.vram_mut()[0x1000 + row * 2 + 1] = 0xFF; // tile 0x00 at 0x9000: color 2
        }
        p.write_register(0xFF42, 0, &mut iflags);
        p.write_register(0xFF43, 0, &mut iflags);
        p.write_register(0xFF47, 0xE4, &mut iflags);
        p.vram_mut()[0x1C00] = 0x80;
        p.write_register(0xFF40, 0x81 | LCDC_BG_MAP, &mut iflags);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(px(&p, 0, 0), 1);
        assert_eq!(px(&p, 8, 0), 2);
    }

    /// Background and window pixel (x, y) for registers held all frame, computed pixel by pixel
    /// from the hardware's description (an independent check of the tile-at-a-time renderer).
    fn reference_shade(p: &Ppu, x: usize, y: usize) -> u8 {
        let tile_color = |map: usize, col: usize, row: usize| -> u8 {
            let tile = p.vram[map + (row / 8) * 32 + col / 8];
            let base = if p.lcdc & LCDC_TILE_DATA != 0 {
                tile as usize * 16
            } else {
                (0x1000 + tile as i8 as isize * 16) as usize
            };
            let (lo, hi) = (
                p.vram[base + (row % 8) * 2],
                p.vram[base + (row % 8) * 2 + 1],
            );
            let bit = 7 - col % 8;
            ((lo >> bit) & 1) | (((hi >> bit) & 1) << 1)
        };
        let color = if p.lcdc & LCDC_BG_ENABLE == 0 {
            0
        } else if p.lcdc & LCDC_WIN_ENABLE != 0
            && y >= p.wy as usize
            && p.wx <= 166
            && x as isize >= p.wx as isize - 7
        {
            let map = if p.lcdc & LCDC_WIN_MAP != 0 {
                0x1C00
            } else {
                0x1800
            };
            tile_color(
                map,
                (x as isize - (p.wx as isize - 7)) as usize,
                y - p.wy as usize,
            )
        } else {
            let map = if p.lcdc & LCDC_BG_MAP != 0 {
                0x1C00
            } else {
                0x1800
            };
            tile_color(
                map,
                (x + p.scx as usize) & 0xFF,
                (y + p.scy as usize) & 0xFF,
            )
        };
        (p.bgp >> (2 * color)) & 3
    }

    #[test]
    fn catch_ups_over_many_lines_equal_stepping_without_rendering() {
        // Without rendering, a tick over several lines runs plain lines in one step (one way with
        // STAT sources enabled, another without). Random registers, both timings, random tick
        // sizes up to three frames: every interrupt request and the whole saved state must be
        // those of 4-dot steps.
        let mut next = lcg(0xD1B5_4A32_D192_ED03u64);
        let state = |p: &Ppu| {
            let mut w = StateWriter::new();
            p.save(&mut w);
            w.finish()
        };
        for case in 0..48 {
            let (mut lazy, mut lazy_flags) = frame_start();
            lazy.pyboy = case % 2 == 1;
            lazy.set_render(false);
            let stat_enable = if case % 3 == 0 {
                0
            } else {
                (next() as u8) & 0x78
            };
            for (addr, value) in [
                (0xFF41, stat_enable),
                (0xFF45, (next() % 154) as u8),
                (0xFF4A, (next() % 150) as u8),
                (0xFF4B, (next() % 170) as u8),
                (0xFF43, next() as u8),
            ] {
                lazy.write_register(addr, value, &mut lazy_flags);
            }
            let window = LCDC_WIN_ENABLE * (case % 4 != 0) as u8;
            let lcdc = LCDC_ON | (next() as u8 & 0x7E) | window;
            lazy.write_register(0xFF40, lcdc, &mut lazy_flags);
            let mut stepped = lazy.clone();
            let mut stepped_flags = lazy_flags;
            let mut elapsed = 0;
            while elapsed < 3 * FRAME_DOTS {
                let dots = 1 + next() % (FRAME_DOTS / 2);
                lazy.tick(dots, &mut lazy_flags);
                run(&mut stepped, dots, &mut stepped_flags);
                elapsed += dots;
                assert_eq!(
                    lazy_flags, stepped_flags,
                    "case {case}, after {elapsed} dots"
                );
                assert!(
                    state(&lazy) == state(&stepped),
                    "case {case}, after {elapsed} dots"
                );
                lazy_flags = 0;
                stepped_flags = 0;
            }
        }
    }

    #[test]
    fn oam_scan_finds_the_objects_a_direct_scan_finds() {
        // Random OAM (Y biased to the visible range and its edges), both object heights, OAM
        // changed between scans by CPU writes and by DMA: the scan, which reads a per-line table
        // rebuilt after changes, must list the objects a direct pass over OAM lists.
        let mut draw = lcg(0x9E37_79B9_7F4A_7C15u64);
        let mut next = move || draw() as u8;
        let mut p = Ppu::new();
        let mut iflags = 0;
        p.write_register(0xFF40, 0, &mut iflags); // LCD off: OAM writable by the CPU
        let mut scans = 0;
        for case in 0..64 {
            for index in 0..0xA0 {
                let value = if index % 4 == 0 && next() % 4 != 0 {
                    next() % 176 // 0..=175: objects above, across and below the screen
                } else {
                    next()
                };
                p.dma_write_oam(index, value);
            }
            let lcdc = if case % 2 == 0 { 0 } else { LCDC_OBJ_TALL };
            p.write_register(0xFF40, lcdc, &mut iflags);
            for line in 0..VBLANK_LINE {
                if next() % 8 == 0 {
                    let index = next() as u16 % 0xA0;
                    p.write_oam(0xFE00 + index, next() % 176);
                }
                if next() % 8 == 0 {
                    p.dma_write_oam(next() as usize % 0xA0, next() % 176);
                }
                if next() % 32 == 0 {
                    p.write_register(0xFF40, lcdc ^ LCDC_OBJ_TALL, &mut iflags);
                }
                let height = p.sprite_height();
                let target = line as u16 + 16;
                let mut expected: Vec<(u8, u8)> = (0..40u8)
                    .filter(|&i| {
                        let y = p.oam[i as usize * 4] as u16;
                        y <= target && target < y + height
                    })
                    .take(MAX_LINE_SPRITES)
                    .map(|i| (p.oam[i as usize * 4 + 1], i))
                    .collect();
                expected.sort_by_key(|&(x, _)| x);
                p.line = line;
                p.oam_scan();
                let found: Vec<(u8, u8)> = p.sprites[..p.sprite_count as usize]
                    .iter()
                    .map(|s| (s.x, s.index))
                    .collect();
                assert_eq!(found, expected, "case {case}, line {line}");
                scans += (!expected.is_empty()) as u32;
                p.write_register(0xFF40, lcdc, &mut iflags);
            }
        }
        assert!(scans > 1000, "too few lines with objects: {scans}");
    }

    #[test]
    fn background_lines_are_redrawn_when_what_they_show_changes() {
        // A random background, drawn frame after frame; between frames (in VBlank) one to three
        // random changes: a tile-data or map byte written by the CPU, or SCX, SCY, BGP, LCDC's
        // tile addressing or map select. Every frame must equal the per-pixel reference, so a
        // background line copied from `bg_lines` must be the line drawing it would give.
        let (mut p, mut iflags) = frame_start();
        let mut next = lcg(11);
        for byte in p.vram_mut().iter_mut() {
            *byte = next() as u8;
        }
        run(&mut p, 2 * FRAME_DOTS, &mut iflags);
        let mut copied_lines = 0;
        for step in 0..60 {
            run(&mut p, 145 * DOTS_PER_LINE, &mut iflags); // into VBlank: VRAM is free
            for _ in 0..1 + next() % 3 {
                let value = next() as u8;
                match next() % 8 {
                    0 | 1 => p.write_vram(0x8000 + (next() % 0x1800) as u16, value),
                    2 | 3 => p.write_vram(0x9800 + (next() % 0x800) as u16, value),
                    4 => p.write_register(0xFF43, value, &mut iflags),
                    5 => p.write_register(0xFF42, value, &mut iflags),
                    6 => p.write_register(0xFF47, value, &mut iflags),
                    _ => {
                        let lcdc = 0x81 | (value & (LCDC_TILE_DATA | LCDC_BG_MAP));
                        p.write_register(0xFF40, lcdc, &mut iflags);
                    }
                }
            }
            // Before drawing: which slots already hold the lines this frame will draw.
            copied_lines += (0..SCREEN_HEIGHT)
                .filter(|&y| {
                    let row = (y + p.scy as usize) & 0xFF;
                    let map = if p.lcdc & LCDC_BG_MAP != 0 {
                        0x1C00
                    } else {
                        0x1800
                    };
                    p.bg_lines[y].key.map_row as usize == map + (row / 8) * 32
                        && p.bg_lines[y].key.scx == p.scx
                        && p.bg_lines[y].key.bgp == p.bgp
                })
                .count();
            run(&mut p, 9 * DOTS_PER_LINE + FRAME_DOTS, &mut iflags);
            for y in 0..SCREEN_HEIGHT {
                for x in 0..SCREEN_WIDTH {
                    assert_eq!(
                        px(&p, x, y),
                        reference_shade(&p, x, y),
                        "step {step}, ({x}, {y})"
                    );
                }
            }
        }
        // Most frames change only a few lines: most lines were candidates for a copy.
        assert!(copied_lines > 60 * SCREEN_HEIGHT / 3, "{copied_lines}");
    }

    #[test]
    fn background_and_window_match_a_per_pixel_reference() {
        // A small LCG fills VRAM and picks the registers: 24 frames of random layouts, in both
        // drawing paths (lines without objects are drawn as shades straight away; one object on
        // lines 40-47 sends those lines through the color-number path).
        let mut draw = lcg(0x2545_F491_4F6C_DD1Du64);
        let mut next = move || draw() as u8;
        for case in 0..24 {
            let (mut p, mut iflags) = frame_start();
            for byte in p.vram_mut().iter_mut() {
                *byte = next();
            }
            let with_object = case % 2 == 1;
            let lcdc = LCDC_ON | (next() & 0x79) | if case % 6 == 0 { 0 } else { LCDC_BG_ENABLE };
            let lcdc = if with_object {
                lcdc | LCDC_OBJ_ENABLE
            } else {
                lcdc
            };
            let wx = match case % 4 {
                0 => next() % 7, // the window starts left of the screen
                1 => 7 + next() % 160,
                _ => next(),
            };
            for (addr, value) in [
                (0xFF40, lcdc),
                (0xFF42, next()),
                (0xFF43, next()),
                (0xFF47, next()),
                (0xFF4A, next() % 150),
                (0xFF4B, wx),
            ] {
                p.write_register(addr, value, &mut iflags);
            }
            for index in 0..0xA0 {
                p.dma_write_oam(index, 0);
            }
            if with_object {
                // An opaque 8x8 object at screen x 80-87, lines 40-47.
                set_sprite(&mut p, 0, 40 + 16, 80 + 8, 0x00, 0);
                p.vram_mut()[0..16].fill(0xFF);
            }
            // The registers were written after line 0 started: the window's Y latch (LY == WY at
            // a line start) holds from the next frame, so check that one.
            run(&mut p, 2 * FRAME_DOTS, &mut iflags);
            for y in 0..SCREEN_HEIGHT {
                for x in 0..SCREEN_WIDTH {
                    if with_object && (40..48).contains(&y) && (80..88).contains(&x) {
                        continue;
                    }
                    assert_eq!(
                        px(&p, x, y),
                        reference_shade(&p, x, y),
                        "case {case}, pixel ({x}, {y}), LCDC {lcdc:#04x}, WX {wx}"
                    );
                }
            }
        }
    }

    #[test]
    fn window_line_counter_skips_hidden_lines() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 1, 1);
        solid_tile(&mut p, 2, 2);
        solid_tile(&mut p, 3, 3);
        for col in 0..32 {
            p.vram_mut()[0x1C00 + col] = 1; // window map row 0
            p.vram_mut()[0x1C00 + 32 + col] = 2; // row 1
            p.vram_mut()[0x1C00 + 64 + col] = 3; // row 2
        }
        p.write_register(0xFF40, 0x91 | LCDC_WIN_ENABLE | LCDC_WIN_MAP, &mut iflags);
        p.write_register(0xFF4A, 0, &mut iflags);
        for line in 0..144u32 {
            // Window shown on lines 0-7, hidden on 8-15 (WX off screen), shown from 16 on with WX=15.
            let wx = match line {
                0..=7 => 7,
                8..=15 => 200,
                _ => 15,
            };
            p.write_register(0xFF4B, wx, &mut iflags);
            run(&mut p, DOTS_PER_LINE, &mut iflags);
        }
        run(&mut p, FRAME_DOTS - 144 * DOTS_PER_LINE, &mut iflags);
        assert_eq!(px(&p, 0, 0), 1);
        assert_eq!(px(&p, 159, 7), 1);
        assert_eq!(px(&p, 0, 8), 0, "window hidden: background (tile 0)");
        // Line 16 shows window line 8 (map row 1), not line 16 (map row 2).
        assert_eq!(px(&p, 7, 16), 0, "left of WX-7 is background");
        assert_eq!(px(&p, 8, 16), 2);
        assert_eq!(px(&p, 8, 23), 2);
        assert_eq!(px(&p, 8, 24), 3);

        // WY latch: window starts at the line equal to WY.
        p.write_register(0xFF4A, 100, &mut iflags);
        p.write_register(0xFF4B, 7, &mut iflags);
        // The current frame latched WY=0 at its line 0 already; the next one uses WY=100.
        run(&mut p, 2 * FRAME_DOTS, &mut iflags);
        assert_eq!(px(&p, 0, 99), 0);
        assert_eq!(px(&p, 0, 100), 1);
        assert_eq!(px(&p, 0, 108), 2);
    }

    #[test]
    fn sprite_priority_lower_x_then_lower_index() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 1, 1);
        solid_tile(&mut p, 2, 2);
        solid_tile(&mut p, 3, 3);
        p.write_register(0xFF40, 0x91 | LCDC_OBJ_ENABLE, &mut iflags);
        // OAM 0 at X=20 (screen 12..19) color 1; OAM 1 at X=16 (screen 8..15) color 2.
        set_sprite(&mut p, 0, 16, 20, 1, 0);
        set_sprite(&mut p, 1, 16, 16, 2, 0);
        // Same X: OAM 2 (color 3) beats OAM 3 (color 1).
        set_sprite(&mut p, 2, 40, 50, 3, 0);
        set_sprite(&mut p, 3, 40, 50, 1, 0);
        run(&mut p, FRAME_DOTS, &mut iflags);
        let row: Vec<u8> = (6..22).map(|x| px(&p, x, 0)).collect();
        assert_eq!(row, vec![0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0]);
        assert_eq!(px(&p, 42, 24), 3);
        assert_eq!(px(&p, 49, 31), 3);
        // OBP1 via attribute bit 4 (OBP1 = 0x1B maps color 3 -> shade 0, color 2 -> shade 1).
        set_sprite(&mut p, 1, 16, 16, 2, ATTR_PALETTE);
        // X flip on a tile whose left half is color 1 and right half transparent.
        for row in 0..8 {
            p.vram_mut()[4 * 16 + row * 2] = 0xF0;
            p.vram_mut()[4 * 16 + row * 2 + 1] = 0;
        }
        set_sprite(&mut p, 4, 100, 80, 4, 0);
        set_sprite(&mut p, 5, 110, 80, 4, ATTR_X_FLIP);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(px(&p, 8, 0), 1);
        assert_eq!((px(&p, 72, 84), px(&p, 79, 84)), (1, 0));
        assert_eq!((px(&p, 72, 94), px(&p, 79, 94)), (0, 1));
        // Objects disabled: nothing drawn.
        p.write_register(0xFF40, 0x91, &mut iflags);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert!(p.screen().iter().all(|&s| s == 0));
    }

    #[test]
    fn ten_sprites_per_line_in_oam_order_and_hidden_x0() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 1, 3);
        p.write_register(0xFF40, 0x91 | LCDC_OBJ_ENABLE, &mut iflags);
        // Index 0 is at X=0 (off screen) but still uses a slot; 1..=9 visible; 10 and 11 dropped.
        set_sprite(&mut p, 0, 16, 0, 1, 0);
        for n in 1..12 {
            set_sprite(&mut p, n, 16, (8 + 12 * n) as u8, 1, 0);
        }
        run(&mut p, FRAME_DOTS, &mut iflags);
        for n in 1..10 {
            assert_eq!(px(&p, 12 * n, 0), 3, "sprite {n}");
        }
        assert_eq!(px(&p, 120, 0), 0, "11th sprite on the line is dropped");
        assert_eq!(px(&p, 132, 0), 0);
        assert_eq!(px(&p, 0, 0), 0);
    }

    #[test]
    fn tall_sprites() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 2, 1);
        solid_tile(&mut p, 3, 2);
        solid_tile(&mut p, 4, 3);
        p.write_register(0xFF40, 0x91 | LCDC_OBJ_ENABLE | LCDC_OBJ_TALL, &mut iflags);
        set_sprite(&mut p, 0, 16, 8, 3, 0); // tile 3 & 0xFE = 2 on top, 3 below
        set_sprite(&mut p, 1, 16, 20, 2, ATTR_Y_FLIP);
        set_sprite(&mut p, 2, 60, 40, 3, 0);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(px(&p, 0, 0), 1);
        assert_eq!(px(&p, 7, 7), 1);
        assert_eq!(px(&p, 0, 8), 2);
        assert_eq!(px(&p, 0, 15), 2);
        assert_eq!(px(&p, 0, 16), 0);
        // Y flip swaps the halves.
        assert_eq!(px(&p, 12, 0), 2);
        assert_eq!(px(&p, 12, 15), 1);
        // Partly above the line start: Y=60 -> screen rows 44..59.
        assert_eq!(px(&p, 32, 43), 0);
        assert_eq!(px(&p, 32, 44), 1);
        assert_eq!(px(&p, 32, 59), 2);
    }

    #[test]
    fn bg_over_obj_priority() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 1, 1);
        solid_tile(&mut p, 2, 3);
        p.vram_mut()[0x1800 + 1] = 1; // BG tile at screen x 8..15 has color 1
        p.write_register(0xFF40, 0x91 | LCDC_OBJ_ENABLE, &mut iflags);
        // BGP maps color 1 to shade 0: priority must use the color number, not the shade.
        p.write_register(0xFF47, 0xE0, &mut iflags);
        set_sprite(&mut p, 0, 16, 12, 2, ATTR_BEHIND_BG); // screen 4..11
        run(&mut p, FRAME_DOTS, &mut iflags);
        let row: Vec<u8> = (3..13).map(|x| px(&p, x, 0)).collect();
        assert_eq!(row, vec![0, 3, 3, 3, 3, 0, 0, 0, 0, 0]);

        // A higher-priority behind-BG object also hides a lower-priority one under it.
        set_sprite(&mut p, 1, 16, 14, 2, 0); // screen 6..13, higher X -> lower priority
        run(&mut p, FRAME_DOTS, &mut iflags);
        let row: Vec<u8> = (3..15).map(|x| px(&p, x, 0)).collect();
        assert_eq!(row, vec![0, 3, 3, 3, 3, 0, 0, 0, 0, 3, 3, 0]);

        // LCDC.0 clear: BG is color 0 (BGP entry 0) and objects show everywhere.
        p.write_register(0xFF47, 0xE4, &mut iflags);
        p.write_register(0xFF40, 0x90 | LCDC_OBJ_ENABLE, &mut iflags);
        run(&mut p, FRAME_DOTS, &mut iflags);
        let row: Vec<u8> = (3..15).map(|x| px(&p, x, 0)).collect();
        assert_eq!(row, vec![0, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 0]);
    }

    #[test]
    fn lcd_off_and_on() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 0, 2);
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(px(&p, 50, 50), 2);
        assert!(p.take_frame_completed());
        run(&mut p, 30 * DOTS_PER_LINE + 100, &mut iflags);
        p.write_register(0xFF41, 0x78, &mut iflags);
        iflags = 0;

        p.write_register(0xFF40, 0x11, &mut iflags);
        assert_eq!(p.read_register(0xFF44), 0);
        assert_eq!(p.read_register(0xFF41) & 3, 0);
        assert!(p.screen().iter().all(|&s| s == 0), "blank while off");
        run(&mut p, 3 * FRAME_DOTS, &mut iflags);
        assert_eq!(iflags, 0);
        assert_eq!(p.read_register(0xFF44), 0);
        assert!(!p.take_frame_completed());
        let frames = p.frame_count();
        p.write_vram(0x8000, 0x12);
        assert_eq!(p.read_vram(0x8000), 0x12);
        p.write_oam(0xFE00, 0x34);
        assert_eq!(p.read_oam(0xFE00), 0x34);
        p.write_vram(0x8000, 0);
        p.write_oam(0xFE00, 0);

        // Back on: mode 0 (not an HBlank interrupt) for 80 dots, then mode 3.
        p.write_register(0xFF41, 0x08, &mut iflags);
        p.write_register(0xFF40, 0x91, &mut iflags);
        assert_eq!(iflags, 0);
        assert_eq!(p.read_register(0xFF44), 0);
        let runs = run_lengths(&line_modes(&mut p, &mut iflags));
        assert_eq!(runs, vec![(0, 80), (3, 172), (0, 204)]);
        assert_eq!(p.read_register(0xFF44), 1);
        // The first frame after enabling stays blank; the next one is shown.
        run(&mut p, FRAME_DOTS - DOTS_PER_LINE, &mut iflags);
        assert_eq!(p.frame_count(), frames + 1);
        assert!(p.take_frame_completed());
        assert!(p.screen().iter().all(|&s| s == 0));
        run(&mut p, FRAME_DOTS, &mut iflags);
        assert_eq!(p.frame_count(), frames + 2);
        assert!(p.screen().iter().all(|&s| s == 2));
    }

    #[test]
    fn save_load_round_trip_continues_identically() {
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 1, 3);
        p.vram_mut()[0x1800 + 5] = 1;
        p.write_register(0xFF40, 0xB3, &mut iflags);
        p.write_register(0xFF41, 0x68, &mut iflags);
        p.write_register(0xFF45, 77, &mut iflags);
        p.write_register(0xFF4A, 30, &mut iflags);
        p.write_register(0xFF4B, 50, &mut iflags);
        set_sprite(&mut p, 0, 60, 30, 1, 0);
        run(&mut p, FRAME_DOTS + 40 * DOTS_PER_LINE + 123, &mut iflags);

        let mut w = StateWriter::new();
        p.save(&mut w);
        let data = w.finish();
        let mut q = Ppu::new();
        let mut r = StateReader::new(&data).unwrap();
        q.load(&mut r).unwrap();
        r.finish().unwrap();

        let (mut if_p, mut if_q) = (0u8, 0u8);
        for step in 0..2 * FRAME_DOTS / 4 {
            p.tick(4, &mut if_p);
            q.tick(4, &mut if_q);
            assert_eq!(if_p, if_q, "step {step}");
            if_p = 0;
            if_q = 0;
            if step % 97 == 0 {
                for addr in 0xFF40..=0xFF4B {
                    assert_eq!(p.read_register(addr), q.read_register(addr));
                }
                assert_eq!(p.read_vram(0x8010), q.read_vram(0x8010));
                assert_eq!(p.read_oam(0xFE00), q.read_oam(0xFE00));
            }
        }
        assert_eq!(p.frame_count(), q.frame_count());
        assert_eq!(p.screen()[..], q.screen()[..]);
        assert!(p.screen().contains(&3));

        // Saving again gives the same bytes.
        let (mut wp, mut wq) = (StateWriter::new(), StateWriter::new());
        p.save(&mut wp);
        q.save(&mut wq);
        assert_eq!(wp.finish(), wq.finish());
    }

    #[test]
    fn load_of_truncated_state_errors() {
        let (p, _) = frame_start();
        let mut w = StateWriter::new();
        p.save(&mut w);
        let full = w.finish();
        assert!(StateReader::new(&full[..full.len() - 10]).is_err());

        // A well-formed stream that holds only part of the PPU's fields.
        let mut w = StateWriter::new();
        w.u32(STATE_TAG);
        w.bytes(&p.vram);
        w.bytes(&p.oam);
        w.u8(0x91);
        let data = w.finish();
        let mut target = Ppu::new();
        target.vram[0] = 0xAB;
        let mut r = StateReader::new(&data).unwrap();
        assert!(target.load(&mut r).is_err());
        assert_eq!(
            target.vram[0], 0xAB,
            "a failed load leaves the PPU unchanged"
        );

        // Wrong section.
        let mut w = StateWriter::new();
        w.u32(0x1234);
        let data = w.finish();
        assert!(target.load(&mut StateReader::new(&data).unwrap()).is_err());
    }

    #[test]
    fn tick_throughput_smoke() {
        // 60 frames of M-cycle ticks should be quick even in debug builds.
        let (mut p, mut iflags) = frame_start();
        solid_tile(&mut p, 1, 1);
        p.write_register(0xFF40, 0x93, &mut iflags);
        let start = std::time::Instant::now();
        for _ in 0..60 * FRAME_DOTS / 4 {
            p.tick(4, &mut iflags);
        }
        assert_eq!(p.frame_count(), 60);
        assert!(start.elapsed().as_secs_f64() < 5.0);
    }
}
