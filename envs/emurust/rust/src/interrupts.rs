//! Interrupt request bits of IF (0xFF0F) and IE (0xFFFF), in priority order.

pub const VBLANK: u8 = 0x01;
pub const STAT: u8 = 0x02;
pub const TIMER: u8 = 0x04;
pub const SERIAL: u8 = 0x08;
pub const JOYPAD: u8 = 0x10;
