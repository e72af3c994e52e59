//! envport's Game Boy (DMG) emulator, one module per hardware unit.
pub mod apu;
pub mod bus;
pub mod cartridge;
pub mod cpu;
pub mod dma;
pub mod gameboy;
pub mod interrupts;
pub mod jit;
pub mod joypad;
pub mod ppu;
pub mod serial;
pub mod slices;
pub mod sm83_harness;
pub mod state;
pub mod timer;
pub mod vec;

#[cfg(feature = "python")]
mod python;
