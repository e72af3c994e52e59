//! The Python module `emurust_core`: a thin PyO3 layer over `GameBoy` and `GameBoyVec`.
//!
//! Every argument is checked here and every emulator error becomes a Python exception; nothing in
//! the emulator panics on bad input, so no panic crosses into Python.

use crate::bus::MAX_STATE_CYCLES;
use crate::gameboy::{GameBoy, PowerOn};
use crate::joypad::BUTTON_NAMES;
use crate::ppu::{SCREEN_HEIGHT, SCREEN_WIDTH};
use crate::slices::{CYCLES_PER_SLICE, FRAMES_PER_SLICE};
use crate::sm83_harness::{run_one, CycleKind};
use crate::vec::GameBoyVec as VecCore;
use numpy::ndarray::{Array2, Axis};
use numpy::{
    IntoPyArray, PyArray1, PyArray2, PyArray3, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2,
    PyUntypedArrayMethods,
};
use pyo3::create_exception;
use pyo3::exceptions::{PyIndexError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

create_exception!(
    emurust_core,
    RomError,
    PyValueError,
    "The ROM cannot be loaded (bad header or unsupported cartridge)."
);
create_exception!(
    emurust_core,
    StateError,
    PyValueError,
    "A save state is corrupt or belongs to another ROM."
);

fn rom_error(e: crate::cartridge::CartridgeError) -> PyErr {
    RomError::new_err(e.to_string())
}

fn state_error(e: crate::state::StateError) -> PyErr {
    StateError::new_err(e.to_string())
}

fn check_address(addr: i64) -> PyResult<u16> {
    u16::try_from(addr)
        .map_err(|_| PyIndexError::new_err(format!("address {addr} is outside 0x0000..=0xFFFF")))
}

fn check_range(start: i64, stop: i64) -> PyResult<(u16, usize)> {
    if !(0..=0x10000).contains(&start) || !(0..=0x10000).contains(&stop) || stop < start {
        return Err(PyIndexError::new_err(format!(
            "memory range [{start:#x}, {stop:#x}) must satisfy 0 <= start <= stop <= 0x10000"
        )));
    }
    Ok((start as u16, (stop - start) as usize))
}

fn button_bit(name: &str) -> PyResult<u8> {
    BUTTON_NAMES
        .iter()
        .position(|&b| b == name.to_ascii_lowercase())
        .map(|i| 1u8 << i)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown button {name:?}; buttons are {BUTTON_NAMES:?}"
            ))
        })
}

fn parse_power_on(power_on: &str) -> PyResult<PowerOn> {
    match power_on {
        "dmg" => Ok(PowerOn::Dmg),
        "pyboy" => Ok(PowerOn::PyBoy),
        "dmg0" => Ok(PowerOn::Dmg0),
        "mgb" => Ok(PowerOn::Mgb),
        "sgb" => Ok(PowerOn::Sgb),
        "sgb2" => Ok(PowerOn::Sgb2),
        other => Err(PyValueError::new_err(format!(
            "power_on must be one of 'dmg', 'pyboy', 'dmg0', 'mgb', 'sgb', 'sgb2', got {other:?}"
        ))),
    }
}

fn check_frames(frames: i64) -> PyResult<u32> {
    u32::try_from(frames)
        .map_err(|_| PyValueError::new_err(format!("frames must be in 0..=2**32-1, got {frames}")))
}

fn check_cycles(cycles: i64) -> PyResult<u64> {
    u64::try_from(cycles)
        .ok()
        .filter(|&c| c <= MAX_STATE_CYCLES)
        .ok_or_else(|| PyValueError::new_err(format!("cycles must be in 0..=2**60, got {cycles}")))
}

/// The most consoles one GameBoyVec holds: each takes about 230 KB, so 65,536 take some 15 GB.
const MAX_CONSOLES: i64 = 1 << 16;
/// Rayon threads: more than this is a mistake (and starting them takes minutes).
const MAX_THREADS: i64 = 1024;

/// A numpy array argument of one dtype, refused with its name and the dtype it needs (PyO3's own
/// message, "'ndarray' object cannot be cast as 'ndarray'", names neither).
fn typed_array<'a, 'py, T>(
    value: &'a Bound<'py, PyAny>,
    name: &str,
    dtype: &str,
) -> PyResult<&'a Bound<'py, T>>
where
    T: pyo3::type_object::PyTypeInfo,
{
    value.cast::<T>().map_err(|_| {
        let got = value
            .getattr("dtype")
            .map(|d| d.to_string())
            .unwrap_or_else(|_| value.get_type().to_string());
        PyTypeError::new_err(format!("{name} must be a numpy {dtype} array, got {got}"))
    })
}

fn check_mask(mask: i64) -> PyResult<u8> {
    u8::try_from(mask).map_err(|_| {
        PyValueError::new_err(format!(
            "button mask {mask} must be in 0..=255 (bit i = {BUTTON_NAMES:?}[i] pressed)"
        ))
    })
}

/// One DMG console. `screen` is a copy of the last completed frame.
#[pyclass(module = "emurust_core", name = "GameBoy")]
pub struct PyGameBoy {
    inner: GameBoy,
}

#[pymethods]
impl PyGameBoy {
    /// `render=False` skips drawing (the screen keeps its last frame; emulation is unchanged).
    /// `power_on`: "dmg" (Nintendo's boot ROM state) or "pyboy" (PyBoy 2.8.1's, for L3); "dmg0",
    /// "mgb", "sgb" and "sgb2": the DMG with the register values those models' boot ROMs leave
    /// (see `gameboy::PowerOn`; no SGB functions).
    /// `eager_events=True` runs the PPU at every stage boundary instead of lazily (slower; for
    /// checking that the lazy scheduler changes nothing). `skip_wait_loops=False` runs every
    /// round of a wait loop (polling STAT or LY, or counting down) instead of passing over the
    /// rounds that can change nothing but its registers and the clock (slower; for checking that
    /// passing over them changes nothing). `plain_steps=False` runs every instruction through
    /// the CPU's general step instead of the plain one the frame loop takes while no event,
    /// interrupt, HALT or EI is near (slower; for checking that the plain step changes nothing).
    /// `sound_emulated=False`: the sound registers (0xFF10-0xFF3F) as PyBoy has them with its
    /// `sound_emulated=False`: every one reads 0 and writes are lost (True: as the hardware).
    /// `compiled_blocks=False` runs the PyBoy timing's plain steps in the interpreter instead of
    /// as compiled machine code (`jit`; slower; for checking that compiling changes nothing).
    #[new]
    #[pyo3(signature = (rom, render=true, power_on="dmg", eager_events=false, skip_wait_loops=true, plain_steps=true, sound_emulated=true, compiled_blocks=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        rom: &[u8],
        render: bool,
        power_on: &str,
        eager_events: bool,
        skip_wait_loops: bool,
        plain_steps: bool,
        sound_emulated: bool,
        compiled_blocks: bool,
    ) -> PyResult<Self> {
        let power_on = parse_power_on(power_on)?;
        let mut inner = GameBoy::with_power_on(rom.to_vec(), power_on).map_err(rom_error)?;
        inner.set_render(render);
        inner.set_sound_emulated(sound_emulated);
        inner.bus.eager_ppu = eager_events;
        inner.bus.skip_wait_loops = skip_wait_loops;
        inner.bus.plain_steps = plain_steps;
        inner.set_compiled_blocks(compiled_blocks);
        Ok(PyGameBoy { inner })
    }

    /// Compiled blocks this emulator ran (a diagnostic; see `compiled_blocks`).
    #[getter]
    fn compiled_blocks_run(&self) -> u64 {
        self.inner.compiled_blocks_run()
    }

    /// Instructions the frame loop ran through the CPU's general step (a diagnostic; see
    /// `plain_steps`).
    #[getter]
    fn general_steps(&self) -> u64 {
        self.inner.bus.general_steps
    }

    /// T-cycles this emulator passed over in wait loops (a diagnostic; see `skip_wait_loops`).
    #[getter]
    fn wait_cycles_skipped(&self) -> u64 {
        self.inner.bus.wait_cycles_skipped
    }

    #[getter]
    fn get_render(&self) -> bool {
        self.inner.bus.ppu.render()
    }

    #[getter]
    fn get_sound_emulated(&self) -> bool {
        self.inner.sound_emulated()
    }

    #[setter]
    fn set_render(&mut self, render: bool) {
        self.inner.set_render(render);
    }

    /// Runs `frames` frames (each ends when the PPU enters VBlank) without holding the GIL, in
    /// slices with a look for Ctrl-C between two (`slices.rs`).
    #[pyo3(signature = (frames=1))]
    fn run_frames(&mut self, py: Python<'_>, frames: i64) -> PyResult<()> {
        let mut left = check_frames(frames)?;
        let inner = &mut self.inner;
        loop {
            let slice = left.min(FRAMES_PER_SLICE);
            py.detach(|| inner.run_frames(slice));
            left -= slice;
            if left == 0 {
                return Ok(());
            }
            py.check_signals()?;
        }
    }

    /// Runs `phases`, a list of (button mask, frames): the buttons of each held for its frames.
    /// `draw_last_only=True` draws only the final frame (PyBoy's `tick(n, render=True)`).
    #[pyo3(signature = (phases, draw_last_only=false))]
    fn run_phases(
        &mut self,
        py: Python<'_>,
        phases: Vec<(i64, i64)>,
        draw_last_only: bool,
    ) -> PyResult<()> {
        let phases = phases
            .into_iter()
            .map(|(mask, frames)| Ok((check_mask(mask)?, check_frames(frames)?)))
            .collect::<PyResult<Vec<_>>>()?;
        // In slices (`slices.rs`), a look for Ctrl-C between two.
        let mut outcome = Ok(());
        self.inner.run_phases_in_slices(
            &phases,
            draw_last_only,
            FRAMES_PER_SLICE,
            |gb, slice, draw| py.detach(|| gb.run_phases(slice, draw)),
            || {
                outcome = py.check_signals();
                outcome.is_ok()
            },
        );
        outcome
    }

    /// Runs at least `cycles` T-cycles (whole instructions), at most 2**60 (see `MAX_STATE_CYCLES`:
    /// from any loadable count the 64-bit cycle count cannot wrap); in slices (`slices.rs`).
    fn run_cycles(&mut self, py: Python<'_>, cycles: i64) -> PyResult<()> {
        let cycles = check_cycles(cycles)?;
        let inner = &mut self.inner;
        let end = inner.bus.cycles + cycles;
        loop {
            let slice_end = end.min(inner.bus.cycles.saturating_add(CYCLES_PER_SLICE));
            py.detach(|| inner.run_cycles_to(slice_end));
            if inner.bus.cycles >= end {
                return Ok(());
            }
            py.check_signals()?;
        }
    }

    /// Sets every button at once: bit i of `mask` presses BUTTON_NAMES[i].
    fn set_buttons(&mut self, mask: i64) -> PyResult<()> {
        self.inner.set_buttons(check_mask(mask)?);
        Ok(())
    }

    fn press(&mut self, name: &str) -> PyResult<()> {
        let mask = self.inner.bus.joypad.buttons() | button_bit(name)?;
        self.inner.set_buttons(mask);
        Ok(())
    }

    fn release(&mut self, name: &str) -> PyResult<()> {
        let mask = self.inner.bus.joypad.buttons() & !button_bit(name)?;
        self.inner.set_buttons(mask);
        Ok(())
    }

    #[getter]
    fn buttons(&self) -> u8 {
        self.inner.bus.joypad.buttons()
    }

    /// (144, 160) uint8 DMG shades 0 (white) .. 3 (black): a copy of the last completed frame. Not a
    /// view: `run_frames` redraws the buffer with the GIL released, so another Python thread could
    /// read a view while it is being written.
    #[getter]
    fn screen<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let pixels = Array2::from_shape_vec(
            (SCREEN_HEIGHT, SCREEN_WIDTH),
            self.inner.screen()[..].to_vec(),
        )
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(pixels.into_pyarray(py))
    }

    fn read_memory(&self, addr: i64) -> PyResult<u8> {
        Ok(self.inner.read_memory(check_address(addr)?))
    }

    /// Bytes [start, stop) as the CPU would see them (VRAM/OAM as stored, without PPU blocking;
    /// in the PyBoy mode wave RAM reads 0xFF while channel 3 plays, as PyBoy's memory API gives it).
    fn read_range<'py>(
        &self,
        py: Python<'py>,
        start: i64,
        stop: i64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let (start, length) = check_range(start, stop)?;
        let data: Vec<u8> = (0..length)
            .map(|i| self.inner.read_memory(start.wrapping_add(i as u16)))
            .collect();
        Ok(PyBytes::new(py, &data))
    }

    fn write_memory(&mut self, addr: i64, value: i64) -> PyResult<()> {
        let value = u8::try_from(value)
            .map_err(|_| PyValueError::new_err(format!("byte value {value} is outside 0..=255")))?;
        self.inner.write_memory(check_address(addr)?, value);
        Ok(())
    }

    fn save_state<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.save_state())
    }

    fn load_state(&mut self, data: &[u8]) -> PyResult<()> {
        self.inner.load_state(data).map_err(state_error)
    }

    /// Every byte the ROM sent through the serial port since power-on.
    #[getter]
    fn serial_output<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, self.inner.serial_output())
    }

    #[getter]
    fn frame_count(&self) -> u64 {
        self.inner.frame_count()
    }

    #[getter]
    fn cycles(&self) -> u64 {
        self.inner.bus.cycles
    }

    #[getter]
    fn title(&self) -> String {
        self.inner.bus.cartridge.title.clone()
    }

    /// CPU registers, for debugging: a, f, b, c, d, e, h, l, sp, pc, ime, halted.
    fn registers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let cpu = &self.inner.cpu;
        let d = PyDict::new(py);
        for (k, v) in [
            ("a", cpu.a),
            ("f", cpu.f),
            ("b", cpu.b),
            ("c", cpu.c),
            ("d", cpu.d),
            ("e", cpu.e),
            ("h", cpu.h),
            ("l", cpu.l),
        ] {
            d.set_item(k, v)?;
        }
        d.set_item("sp", cpu.sp)?;
        d.set_item("pc", cpu.pc)?;
        d.set_item("ime", cpu.ime)?;
        d.set_item("halted", cpu.halted)?;
        Ok(d)
    }
}

/// N consoles running the same ROM, stepped in parallel (Rayon) with the GIL released.
#[pyclass(module = "emurust_core")]
pub struct GameBoyVec {
    inner: VecCore,
}

#[pymethods]
impl GameBoyVec {
    /// `threads` = 0 uses Rayon's global pool (all cores); otherwise a pool of that many threads.
    /// `render`, `power_on` and `sound_emulated` as for `GameBoy`.
    #[new]
    #[pyo3(signature = (rom, num_envs, threads=0, render=true, power_on="dmg", sound_emulated=true))]
    fn new(
        rom: &[u8],
        num_envs: i64,
        threads: i64,
        render: bool,
        power_on: &str,
        sound_emulated: bool,
    ) -> PyResult<Self> {
        if !(1..=MAX_CONSOLES).contains(&num_envs) {
            return Err(PyValueError::new_err(format!(
                "num_envs must be in 1..={MAX_CONSOLES} (each console holds about 230 KB), got {num_envs}"
            )));
        }
        if !(0..=MAX_THREADS).contains(&threads) {
            return Err(PyValueError::new_err(format!(
                "threads must be in 0..={MAX_THREADS} (0: Rayon's pool, one per core), got {threads}"
            )));
        }
        let (num_envs, threads) = (num_envs as usize, threads as usize); // both checked non-negative above
        let power_on = parse_power_on(power_on)?;
        let inner = VecCore::new(rom, num_envs, threads, render, power_on, sound_emulated)
            .map_err(|e| match e {
                crate::vec::VecError::Rom(e) => rom_error(e),
                crate::vec::VecError::Threads(m) => PyValueError::new_err(m),
            })?;
        Ok(GameBoyVec { inner })
    }

    #[getter]
    fn num_envs(&self) -> usize {
        self.inner.len()
    }

    /// Sets each env's buttons (uint8 masks, shape (num_envs,)) and runs `frames` frames in each.
    fn step(&mut self, py: Python<'_>, buttons: &Bound<'_, PyAny>, frames: i64) -> PyResult<()> {
        let frames = check_frames(frames)?;
        let buttons: PyReadonlyArray1<'_, u8> =
            typed_array::<PyArray1<u8>>(buttons, "buttons", "uint8 (num_envs,)")?.readonly();
        let masks = buttons
            .as_slice()
            .map_err(|_| PyValueError::new_err("buttons must be a contiguous uint8 array"))?;
        if masks.len() != self.inner.len() {
            return Err(PyValueError::new_err(format!(
                "buttons has shape ({},), expected ({},): one uint8 mask per env",
                masks.len(),
                self.inner.len()
            )));
        }
        let masks = masks.to_vec();
        let inner = &mut self.inner;
        // In slices (`slices.rs`): each slice sets the same buttons again, which the joypads do not see.
        let mut left = frames;
        loop {
            let slice = left.min(FRAMES_PER_SLICE);
            py.detach(|| inner.step(&masks, slice));
            left -= slice;
            if left == 0 {
                return Ok(());
            }
            py.check_signals()?;
        }
    }

    /// Runs each env's own phases in parallel: `buttons` (uint8) and `frames` (int64), both of
    /// shape (num_envs, phases); env i holds `buttons[i, p]` for `frames[i, p]` frames, p in
    /// order (0 frames skips a phase). `draw_last_only=True` draws only each env's final frame.
    #[pyo3(signature = (buttons, frames, draw_last_only=false))]
    fn run_phases(
        &mut self,
        py: Python<'_>,
        buttons: &Bound<'_, PyAny>,
        frames: &Bound<'_, PyAny>,
        draw_last_only: bool,
    ) -> PyResult<()> {
        let buttons: PyReadonlyArray2<'_, u8> =
            typed_array::<PyArray2<u8>>(buttons, "buttons", "uint8 (num_envs, phases)")?.readonly();
        let frames: PyReadonlyArray2<'_, i64> =
            typed_array::<PyArray2<i64>>(frames, "frames", "int64 (num_envs, phases)")?.readonly();
        let n = self.inner.len();
        let (b_shape, f_shape) = (buttons.shape().to_vec(), frames.shape().to_vec());
        if b_shape[0] != n || b_shape != f_shape {
            return Err(PyValueError::new_err(format!(
                "buttons {b_shape:?} and frames {f_shape:?} must both have shape ({n}, phases)"
            )));
        }
        let per_env = b_shape[1];
        let buttons = buttons.as_array();
        let frames = frames.as_array();
        let mut phases = Vec::with_capacity(n * per_env);
        for (mask, count) in buttons.iter().zip(frames.iter()) {
            phases.push((*mask, check_frames(*count)?));
        }
        if per_env == 0 {
            return Ok(());
        }
        // In rounds of slices (`slices.rs`), a look for Ctrl-C between two.
        let mut outcome = Ok(());
        self.inner.run_phases_in_rounds(
            &phases,
            per_env,
            draw_last_only,
            FRAMES_PER_SLICE,
            |consoles, round, per_env, draw| {
                py.detach(|| consoles.run_phases_each(round, per_env, draw))
            },
            || {
                outcome = py.check_signals();
                outcome.is_ok()
            },
        );
        outcome
    }

    /// Copies of all screens, shape (num_envs, 144, 160), uint8 shades.
    fn screens<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<u8>> {
        let out = PyArray3::<u8>::zeros(py, [self.inner.len(), SCREEN_HEIGHT, SCREEN_WIDTH], false);
        {
            let mut rw = out.readwrite();
            let mut array = rw.as_array_mut();
            for (i, mut plane) in array.axis_iter_mut(Axis(0)).enumerate() {
                let screen = self.inner.get(i).screen();
                for (dst, src) in plane.iter_mut().zip(screen.iter()) {
                    *dst = *src;
                }
            }
        }
        out
    }

    /// Memory bytes [start, stop) of every env, shape (num_envs, stop - start).
    fn read_range<'py>(
        &self,
        py: Python<'py>,
        start: i64,
        stop: i64,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let (start, length) = check_range(start, stop)?;
        let out = PyArray2::<u8>::zeros(py, [self.inner.len(), length], false);
        {
            let mut rw = out.readwrite();
            let mut array = rw.as_array_mut();
            for (i, mut row) in array.axis_iter_mut(Axis(0)).enumerate() {
                let gb = self.inner.get(i);
                for (j, dst) in row.iter_mut().enumerate() {
                    *dst = gb.read_memory(start.wrapping_add(j as u16));
                }
            }
        }
        Ok(out)
    }

    fn save_state<'py>(&mut self, py: Python<'py>, index: i64) -> PyResult<Bound<'py, PyBytes>> {
        let index = self.check_index(index)?;
        Ok(PyBytes::new(py, &self.inner.get_mut(index).save_state()))
    }

    fn load_state(&mut self, index: i64, data: &[u8]) -> PyResult<()> {
        let index = self.check_index(index)?;
        self.inner
            .get_mut(index)
            .load_state(data)
            .map_err(state_error)
    }

    #[getter]
    fn frame_counts(&self) -> Vec<u64> {
        (0..self.inner.len())
            .map(|i| self.inner.get(i).frame_count())
            .collect()
    }
}

impl GameBoyVec {
    fn check_index(&self, index: i64) -> PyResult<usize> {
        usize::try_from(index)
            .ok()
            .filter(|&i| i < self.inner.len())
            .ok_or_else(|| {
                PyIndexError::new_err(format!(
                    "env index {index} out of range for {} envs",
                    self.inner.len()
                ))
            })
    }
}

/// sm83_step's answer: registers, the memory bytes asked about, and the bus cycles (address, value, pins).
type Sm83StepResult<'py> = (
    Bound<'py, PyDict>,
    Vec<(u16, u8)>,
    Vec<(u16, u8, &'static str)>,
);

/// Runs one instruction on a flat 64 KiB memory (the SingleStepTests machine).
/// `registers`: dict with a b c d e f h l sp pc ime; `ram`: [(addr, value)].
/// Returns (registers dict with `ei` = pending EI, [(addr, value)] for the same addresses, cycles).
#[pyfunction]
fn sm83_step<'py>(
    py: Python<'py>,
    registers: Bound<'py, PyDict>,
    ram: Vec<(u16, u8)>,
) -> PyResult<Sm83StepResult<'py>> {
    let get = |k: &str| -> PyResult<u64> {
        registers
            .get_item(k)?
            .ok_or_else(|| PyValueError::new_err(format!("registers lacks {k:?}")))?
            .extract::<u64>()
    };
    let mut eight = [0u8; 8];
    for (i, k) in ["a", "b", "c", "d", "e", "f", "h", "l"].iter().enumerate() {
        eight[i] = u8::try_from(get(k)?)
            .map_err(|_| PyValueError::new_err(format!("register {k} out of range")))?;
    }
    let sp = u16::try_from(get("sp")?).map_err(|_| PyValueError::new_err("sp out of range"))?;
    let pc = u16::try_from(get("pc")?).map_err(|_| PyValueError::new_err("pc out of range"))?;
    let ime = get("ime")? != 0;
    let ((regs, sp, pc, ime), ei, bus) = run_one((eight, sp, pc, ime), &ram);
    let out = PyDict::new(py);
    for (i, k) in ["a", "b", "c", "d", "e", "f", "h", "l"].iter().enumerate() {
        out.set_item(*k, regs[i])?;
    }
    out.set_item("sp", sp)?;
    out.set_item("pc", pc)?;
    out.set_item("ime", ime as u8)?;
    out.set_item("ei", ei as u8)?;
    let memory = ram
        .iter()
        .map(|&(addr, _)| (addr, bus.memory[addr as usize]))
        .collect();
    let cycles = bus
        .cycles
        .iter()
        .map(|&(addr, value, kind)| {
            let pins = match kind {
                CycleKind::Read => "r-m",
                CycleKind::Write => "-wm",
                CycleKind::Internal => "---",
            };
            (addr, value, pins)
        })
        .collect();
    Ok((out, memory, cycles))
}

#[pymodule]
fn emurust_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGameBoy>()?;
    m.add_class::<GameBoyVec>()?;
    m.add_function(wrap_pyfunction!(sm83_step, m)?)?;
    m.add("RomError", m.py().get_type::<RomError>())?;
    m.add("StateError", m.py().get_type::<StateError>())?;
    m.add("BUTTON_NAMES", BUTTON_NAMES.to_vec())?;
    m.add("SCREEN_SHAPE", (SCREEN_HEIGHT, SCREEN_WIDTH))?;
    Ok(())
}
