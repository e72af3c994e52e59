//! Cartridges: header checks and the memory bank controllers (ROM only, MBC1, MBC3 with its
//! real-time clock, MBC5), each with optional external RAM.

use crate::state::{StateError, StateReader, StateWriter};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CartridgeError {
    BadHeader(String),
    Unsupported(String),
}

impl fmt::Display for CartridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CartridgeError::BadHeader(m) => write!(f, "bad ROM header: {m}"),
            CartridgeError::Unsupported(m) => write!(f, "unsupported cartridge: {m}"),
        }
    }
}

impl std::error::Error for CartridgeError {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mapper {
    RomOnly,
    Mbc1,
    Mbc3,
    Mbc5,
}

/// Emulated cycles per RTC second (the cartridge crystal is 32768 Hz; the CPU clock is 2^22 Hz).
const CYCLES_PER_SECOND: u32 = 4_194_304;

/// MBC3's clock, advanced by emulated time only, so runs stay deterministic.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Rtc {
    /// seconds, minutes, hours, day low, day high (bit 0 day bit 8, bit 6 halt, bit 7 carry)
    live: [u8; 5],
    latched: [u8; 5],
    subsecond_cycles: u32,
    latch_armed: bool,
    /// Bus cycle the clock was last brought up to.
    synced_at: u64,
}

impl Rtc {
    fn tick(&mut self, cycles: u64) {
        if self.live[4] & 0x40 != 0 {
            return;
        }
        let total = self.subsecond_cycles as u64 + cycles;
        self.subsecond_cycles = (total % CYCLES_PER_SECOND as u64) as u32;
        for _ in 0..total / CYCLES_PER_SECOND as u64 {
            self.advance_second();
        }
    }

    fn advance_second(&mut self) {
        self.live[0] = (self.live[0] + 1) & 0x3F;
        if self.live[0] != 60 {
            return;
        }
        self.live[0] = 0;
        self.live[1] = (self.live[1] + 1) & 0x3F;
        if self.live[1] != 60 {
            return;
        }
        self.live[1] = 0;
        self.live[2] = (self.live[2] + 1) & 0x1F;
        if self.live[2] != 24 {
            return;
        }
        self.live[2] = 0;
        let day = (((self.live[4] & 1) as u16) << 8 | self.live[3] as u16) + 1;
        self.live[3] = day as u8;
        self.live[4] = (self.live[4] & 0xFE) | ((day >> 8) & 1) as u8;
        if day > 0x1FF {
            self.live[4] |= 0x80; // day counter carry
        }
    }
}

pub struct Cartridge {
    rom: Vec<u8>,
    ram: Vec<u8>,
    mapper: Mapper,
    pub title: String,
    pub has_battery: bool,
    ram_enabled: bool,
    /// MBC1: 5-bit bank; MBC3: 7-bit; MBC5: 9-bit.
    rom_bank: u16,
    /// MBC1: the 2-bit secondary register; MBC3: RAM bank or RTC register (0x08-0x0C); MBC5: 4-bit.
    ram_bank: u8,
    /// MBC1 banking mode (0 simple, 1 advanced).
    mode: u8,
    rtc: Option<Rtc>,
    /// Byte offsets in `rom` of the banks mapped at 0x0000 and 0x4000 (kept in step with the
    /// bank registers, so a read is one add). Always `bank * 0x4000` with `bank < rom_banks()`.
    bank_offsets: [usize; 2],
}

pub(crate) fn header_checksum(rom: &[u8]) -> u8 {
    rom[0x134..=0x14C]
        .iter()
        .fold(0u8, |x, &b| x.wrapping_sub(b).wrapping_sub(1))
}

impl Cartridge {
    pub fn from_rom(rom: Vec<u8>) -> Result<Self, CartridgeError> {
        if rom.len() < 0x8000 {
            return Err(CartridgeError::BadHeader(format!(
                "{} bytes; a Game Boy ROM is at least 32 KiB",
                rom.len()
            )));
        }
        let stored = rom[0x14D];
        let computed = header_checksum(&rom);
        if stored != computed {
            return Err(CartridgeError::BadHeader(format!(
                "header checksum 0x{stored:02X} at 0x14D, computed 0x{computed:02X} (not a Game Boy ROM, or damaged)"
            )));
        }
        let size_code = rom[0x148];
        if size_code > 8 {
            return Err(CartridgeError::BadHeader(format!(
                "ROM size code 0x{size_code:02X} at 0x148"
            )));
        }
        let declared = 0x8000usize << size_code;
        if rom.len() != declared {
            return Err(CartridgeError::BadHeader(format!(
                "the header declares {declared} bytes of ROM, the file has {}",
                rom.len()
            )));
        }
        let kind = rom[0x147];
        let (mapper, has_ram, has_battery, has_rtc) = match kind {
            0x00 => (Mapper::RomOnly, false, false, false),
            0x08 => (Mapper::RomOnly, true, false, false),
            0x09 => (Mapper::RomOnly, true, true, false),
            0x01 => (Mapper::Mbc1, false, false, false),
            0x02 => (Mapper::Mbc1, true, false, false),
            0x03 => (Mapper::Mbc1, true, true, false),
            0x0F => (Mapper::Mbc3, false, true, true),
            0x10 => (Mapper::Mbc3, true, true, true),
            0x11 => (Mapper::Mbc3, false, false, false),
            0x12 => (Mapper::Mbc3, true, false, false),
            0x13 => (Mapper::Mbc3, true, true, false),
            0x19 | 0x1C => (Mapper::Mbc5, false, false, false),
            0x1A | 0x1D => (Mapper::Mbc5, true, false, false),
            0x1B | 0x1E => (Mapper::Mbc5, true, true, false),
            other => {
                return Err(CartridgeError::Unsupported(format!(
                    "cartridge type 0x{other:02X} at 0x147 (supported: ROM only, MBC1, MBC3, MBC5)"
                )))
            }
        };
        let ram_size = if has_ram {
            match rom[0x149] {
                0 => 0,
                1 => 0x800,
                2 => 0x2000,
                3 => 0x8000,
                4 => 0x20000,
                5 => 0x10000,
                code => {
                    return Err(CartridgeError::BadHeader(format!(
                        "RAM size code 0x{code:02X} at 0x149"
                    )))
                }
            }
        } else {
            0
        };
        let title = rom[0x134..0x144]
            .iter()
            .take_while(|&&b| b != 0)
            .map(|&b| b as char)
            .collect();
        Ok(Cartridge {
            rom,
            ram: vec![0; ram_size],
            mapper,
            title,
            has_battery,
            ram_enabled: false,
            rom_bank: 1,
            ram_bank: 0,
            mode: 0,
            rtc: has_rtc.then(Rtc::default),
            // Banks 0 and 1: a ROM has at least two (checked above).
            bank_offsets: [0, 0x4000],
        })
    }

    pub fn mapper(&self) -> Mapper {
        self.mapper
    }

    fn rom_banks(&self) -> usize {
        self.rom.len() / 0x4000
    }

    #[inline(always)]
    pub fn read_rom(&self, addr: u16) -> u8 {
        let index = self.bank_offset(addr) + (addr as usize & 0x3FFF);
        debug_assert!(index < self.rom.len());
        // SAFETY: `index < rom.len()`. A bank offset is `bank * 0x4000` with `bank < rom_banks()`
        // (`bank_for` reduces modulo the bank count; the constructor's banks 0 and 1 exist in any
        // ROM it accepts) and the ROM is a whole number of banks (`0x8000 << size code` bytes,
        // checked in `from_rom`; `rom` is never resized), so `offset + 0x3FFF < rom.len()`.
        unsafe { *self.rom.get_unchecked(index) }
    }

    /// Where the 16 KiB half of the ROM space holding `addr` (below 0x8000) starts in the ROM
    /// image: `rom()[offset + (addr & 0x3FFF)]` is what `read_rom(addr)` reads, until the next
    /// write to the bank registers. Always a whole bank inside the image (see `read_rom`):
    /// `offset + 0x4000 <= rom().len()`.
    #[inline]
    pub fn bank_offset(&self, addr: u16) -> usize {
        self.bank_offsets[(addr as usize >> 14) & 1]
    }

    fn update_offsets(&mut self) {
        self.bank_offsets = [
            self.bank_for(0x0000) * 0x4000,
            self.bank_for(0x4000) * 0x4000,
        ];
    }

    fn bank_for(&self, addr: u16) -> usize {
        let bank = if addr < 0x4000 {
            match self.mapper {
                Mapper::Mbc1 if self.mode == 1 => (self.ram_bank as usize) << 5,
                _ => 0,
            }
        } else {
            match self.mapper {
                Mapper::RomOnly => 1,
                Mapper::Mbc1 => ((self.ram_bank as usize) << 5) | self.rom_bank as usize,
                Mapper::Mbc3 | Mapper::Mbc5 => self.rom_bank as usize,
            }
        };
        bank % self.rom_banks()
    }

    pub fn write_rom(&mut self, addr: u16, value: u8) {
        self.write_register(addr, value);
        self.update_offsets();
    }

    fn write_register(&mut self, addr: u16, value: u8) {
        match (self.mapper, addr) {
            (Mapper::RomOnly, _) => {}
            (_, 0x0000..=0x1FFF) => self.ram_enabled = value & 0x0F == 0x0A,
            (Mapper::Mbc1, 0x2000..=0x3FFF) => self.rom_bank = ((value & 0x1F) as u16).max(1),
            (Mapper::Mbc1, 0x4000..=0x5FFF) => self.ram_bank = value & 3,
            (Mapper::Mbc1, _) => self.mode = value & 1,
            (Mapper::Mbc3, 0x2000..=0x3FFF) => self.rom_bank = ((value & 0x7F) as u16).max(1),
            (Mapper::Mbc3, 0x4000..=0x5FFF) => self.ram_bank = value & 0x0F,
            (Mapper::Mbc3, _) => {
                if let Some(rtc) = self.rtc.as_mut() {
                    if value == 0 {
                        rtc.latch_armed = true;
                    } else {
                        if value == 1 && rtc.latch_armed {
                            rtc.latched = rtc.live;
                        }
                        rtc.latch_armed = false;
                    }
                }
            }
            (Mapper::Mbc5, 0x2000..=0x2FFF) => {
                self.rom_bank = (self.rom_bank & 0x100) | value as u16
            }
            (Mapper::Mbc5, 0x3000..=0x3FFF) => {
                self.rom_bank = (self.rom_bank & 0xFF) | ((value as u16 & 1) << 8)
            }
            (Mapper::Mbc5, 0x4000..=0x5FFF) => self.ram_bank = value & 0x0F,
            (Mapper::Mbc5, _) => {}
        }
    }

    fn ram_offset(&self, addr: u16) -> Option<usize> {
        if !self.ram_enabled || self.ram.is_empty() {
            return None;
        }
        let bank = match self.mapper {
            Mapper::Mbc1 if self.mode == 1 => self.ram_bank as usize,
            Mapper::Mbc1 | Mapper::RomOnly => 0,
            Mapper::Mbc3 | Mapper::Mbc5 => self.ram_bank as usize,
        };
        Some((bank * 0x2000 + (addr as usize & 0x1FFF)) % self.ram.len())
    }

    fn rtc_register(&self) -> Option<usize> {
        match (self.mapper, self.ram_bank) {
            (Mapper::Mbc3, 0x08..=0x0C) if self.rtc.is_some() && self.ram_enabled => {
                Some(self.ram_bank as usize - 8)
            }
            _ => None,
        }
    }

    pub fn read_ram(&self, addr: u16) -> u8 {
        if let Some(index) = self.rtc_register() {
            return self.rtc.as_ref().unwrap().latched[index];
        }
        if self.mapper == Mapper::Mbc3 && self.ram_bank > 3 {
            return 0xFF;
        }
        self.ram_offset(addr).map_or(0xFF, |i| self.ram[i])
    }

    pub fn write_ram(&mut self, addr: u16, value: u8) {
        if let Some(index) = self.rtc_register() {
            let rtc = self.rtc.as_mut().unwrap();
            rtc.live[index] = value;
            if index == 0 {
                rtc.subsecond_cycles = 0;
            }
            return;
        }
        if self.mapper == Mapper::Mbc3 && self.ram_bank > 3 {
            return;
        }
        if let Some(i) = self.ram_offset(addr) {
            self.ram[i] = value;
        }
    }

    /// Brings the MBC3 clock to bus time `now` (the bus calls it before cartridge accesses).
    #[inline]
    pub fn sync_clock(&mut self, now: u64) {
        if let Some(rtc) = self.rtc.as_mut() {
            let elapsed = now.saturating_sub(rtc.synced_at);
            rtc.synced_at = now;
            rtc.tick(elapsed);
        }
    }

    pub fn has_clock(&self) -> bool {
        self.rtc.is_some()
    }

    pub fn rom(&self) -> &[u8] {
        &self.rom
    }

    pub fn ram(&self) -> &[u8] {
        &self.ram
    }

    pub fn save(&self, w: &mut StateWriter) {
        w.bytes(&self.ram);
        w.bool(self.ram_enabled);
        w.u16(self.rom_bank);
        w.u8(self.ram_bank);
        w.u8(self.mode);
        if let Some(rtc) = &self.rtc {
            w.bytes(&rtc.live);
            w.bytes(&rtc.latched);
            w.u32(rtc.subsecond_cycles);
            w.bool(rtc.latch_armed);
            w.u64(rtc.synced_at);
        }
    }

    pub fn load(&mut self, r: &mut StateReader) -> Result<(), StateError> {
        r.bytes_into(&mut self.ram)?;
        self.ram_enabled = r.bool()?;
        self.rom_bank = r.u16()?;
        if self.rom_bank > 0x1FF {
            return Err(StateError("ROM bank out of range".into()));
        }
        self.ram_bank = r.u8()?;
        self.mode = r.u8()? & 1;
        self.update_offsets();
        if let Some(rtc) = self.rtc.as_mut() {
            r.bytes_into(&mut rtc.live)?;
            r.bytes_into(&mut rtc.latched)?;
            rtc.subsecond_cycles = r.u32()?;
            if rtc.subsecond_cycles >= CYCLES_PER_SECOND {
                return Err(StateError("RTC sub-second counter out of range".into()));
            }
            rtc.latch_armed = r.bool()?;
            rtc.synced_at = r.u64()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ROM whose every bank starts with its own bank number.
    fn rom(kind: u8, size_code: u8, ram_code: u8) -> Vec<u8> {
        let mut rom = vec![0u8; 0x8000 << size_code];
        for bank in 0..rom.len() / 0x4000 {
            rom[bank * 0x4000] = bank as u8;
            rom[bank * 0x4000 + 1] = (bank >> 8) as u8;
        }
        rom[0x147] = kind;
        rom[0x148] = size_code;
        rom[0x149] = ram_code;
        rom[0x14D] = header_checksum(&rom);
        rom
    }

    fn bank_at(cart: &Cartridge, addr: u16) -> usize {
        cart.read_rom(addr) as usize | (cart.read_rom(addr + 1) as usize) << 8
    }

    #[test]
    fn header_errors() {
        assert!(matches!(
            Cartridge::from_rom(vec![0; 100]),
            Err(CartridgeError::BadHeader(_))
        ));
        let mut bad = rom(0, 0, 0);
        bad[0x14D] ^= 1;
        assert!(matches!(
            Cartridge::from_rom(bad),
            Err(CartridgeError::BadHeader(_))
        ));
        assert!(matches!(
            Cartridge::from_rom(rom(0xFC, 0, 0)),
            Err(CartridgeError::Unsupported(_))
        ));
        let mut short = rom(1, 2, 0);
        short.truncate(0x8000);
        assert!(matches!(
            Cartridge::from_rom(short),
            Err(CartridgeError::BadHeader(_))
        ));
    }

    #[test]
    fn mbc1_banking() {
        let mut cart = Cartridge::from_rom(rom(0x03, 6, 3)).unwrap(); // 2 MiB, 32 KiB RAM
        assert_eq!(bank_at(&cart, 0x4000), 1);
        cart.write_rom(0x2000, 0x00);
        assert_eq!(bank_at(&cart, 0x4000), 1, "bank 0 maps to 1");
        cart.write_rom(0x2000, 0x05);
        cart.write_rom(0x4000, 0x02);
        assert_eq!(bank_at(&cart, 0x4000), 0x45);
        assert_eq!(bank_at(&cart, 0x0000), 0, "mode 0: fixed bank 0");
        cart.write_rom(0x6000, 1);
        assert_eq!(
            bank_at(&cart, 0x0000),
            0x40,
            "mode 1: upper bits apply to 0x0000"
        );
        cart.write_rom(0x2000, 0x20);
        assert_eq!(
            bank_at(&cart, 0x4000),
            0x41,
            "0x20 reads as 0x21 (the low 5 bits are 0 -> 1)"
        );
        // RAM: disabled reads 0xFF, enabled banks in mode 1
        assert_eq!(cart.read_ram(0xA000), 0xFF);
        cart.write_rom(0x0000, 0x0A);
        cart.write_ram(0xA000, 0x11);
        cart.write_rom(0x4000, 0x01);
        assert_eq!(cart.read_ram(0xA000), 0x00);
        cart.write_ram(0xA000, 0x22);
        cart.write_rom(0x4000, 0x02);
        assert_eq!(cart.read_ram(0xA000), 0x11);
        cart.write_rom(0x4000, 0x01);
        assert_eq!(cart.read_ram(0xA000), 0x22);
    }

    #[test]
    fn mbc3_banks_and_rtc_latch() {
        let mut cart = Cartridge::from_rom(rom(0x10, 6, 3)).unwrap();
        cart.write_rom(0x2000, 0x7F);
        assert_eq!(bank_at(&cart, 0x4000), 0x7F);
        cart.write_rom(0x0000, 0x0A);
        cart.sync_clock(CYCLES_PER_SECOND as u64 * 61);
        cart.write_rom(0x4000, 0x08);
        assert_eq!(cart.read_ram(0xA000), 0, "not latched yet");
        cart.write_rom(0x6000, 0);
        cart.write_rom(0x6000, 1);
        assert_eq!(cart.read_ram(0xA000), 1, "61 s = 1 min 1 s");
        cart.write_rom(0x4000, 0x09);
        assert_eq!(cart.read_ram(0xA000), 1);
    }

    #[test]
    fn mbc5_nine_bit_bank_and_bank_zero() {
        let mut cart = Cartridge::from_rom(rom(0x1B, 8, 4)).unwrap(); // 8 MiB
        cart.write_rom(0x2000, 0x00);
        assert_eq!(bank_at(&cart, 0x4000), 0, "MBC5 can map bank 0");
        cart.write_rom(0x2000, 0x34);
        cart.write_rom(0x3000, 0x01);
        assert_eq!(bank_at(&cart, 0x4000), 0x134);
    }
}
