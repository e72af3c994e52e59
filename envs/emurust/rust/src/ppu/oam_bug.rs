//! The DMG's OAM corruption bug: while the OAM scan (mode 2) reads OAM, one 8-byte row per
//! M-cycle, a CPU access to 0xFE00-0xFEFF, or the 16-bit increment unit putting such an address
//! on the bus, garbles the row being scanned. Pan Docs ("OAM Corruption Bug") gives the patterns;
//! blargg's oam_bug ROMs test them. OAM is accessed as 16-bit words, so the patterns are too.

use super::{Ppu, Stage, OAM_SCAN_DOTS};

/// What reached OAM in the M-cycle (the address and the value written do not matter).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum OamBugAccess {
    Write,
    Read,
    /// A read and an increment of the address register in one M-cycle (LD A,(HL+), a pop).
    ReadIncrease,
}

const ROW_BYTES: usize = 8;
const ROWS: usize = 20;

impl Ppu {
    /// The OAM row the scan reads in the M-cycle that has just ended, if it is scanning. The scan
    /// reads row 0 in the 4 dots before its line starts (where `read_oam` is already refused,
    /// mooneye lcdon_timing) and row r + 1 in dots 4r..4r + 3 of the line, so the last row is read
    /// by dot 76; the first line after the LCD is switched on scans nothing (it shows mode 0).
    /// blargg's 4-scanline_timing and 5-timing_bug pin this window: row 0 cannot be garbled, so
    /// the rows 1-19 a corruption can reach are those of dots 0-75.
    fn oam_bug_row(&self) -> Option<usize> {
        let scanning = self.lcd_on()
            && self.stage == Stage::OamScan
            && self.mode == 2
            && self.dot < OAM_SCAN_DOTS - 4;
        scanning.then(|| (self.dot / 4 + 1) as usize)
    }

    /// Applies the corruption `access` causes now, if the scan is reading a row.
    pub fn oam_bug(&mut self, access: OamBugAccess) {
        if let Some(row) = self.oam_bug_row() {
            garble(&mut self.oam, row, access);
            self.line_objects_height = 0;
        }
    }
}

fn word(oam: &[u8], row: usize, word: usize) -> u16 {
    let at = row * ROW_BYTES + 2 * word;
    u16::from_le_bytes([oam[at], oam[at + 1]])
}

fn set_word(oam: &mut [u8], row: usize, word: usize, value: u16) {
    let at = row * ROW_BYTES + 2 * word;
    oam[at..at + 2].copy_from_slice(&value.to_le_bytes());
}

/// Row `to` takes row `from`'s bytes from word `first_word` on.
fn copy_row(oam: &mut [u8], from: usize, to: usize, first_word: usize) {
    let start = 2 * first_word;
    oam.copy_within(
        from * ROW_BYTES + start..(from + 1) * ROW_BYTES,
        to * ROW_BYTES + start,
    );
}

/// Pan Docs' patterns, on OAM as 16-bit words, for an access while the scan reads `row`.
fn garble(oam: &mut [u8], row: usize, access: OamBugAccess) {
    debug_assert!(row < ROWS && oam.len() == ROWS * ROW_BYTES);
    if access == OamBugAccess::ReadIncrease && (4..ROWS - 1).contains(&row) {
        let (a, b) = (word(oam, row - 2, 0), word(oam, row - 1, 0));
        let (c, d) = (word(oam, row, 0), word(oam, row - 1, 2));
        set_word(oam, row - 1, 0, (b & (a | c | d)) | (a & c & d));
        copy_row(oam, row - 1, row, 0);
        copy_row(oam, row - 1, row - 2, 0);
    }
    if row == 0 {
        return; // the first row (objects 0 and 1) is never garbled
    }
    let (a, b, c) = (
        word(oam, row, 0),
        word(oam, row - 1, 0),
        word(oam, row - 1, 2),
    );
    let first = match access {
        OamBugAccess::Write => ((a ^ c) & (b ^ c)) ^ c,
        OamBugAccess::Read | OamBugAccess::ReadIncrease => b | (a & c),
    };
    set_word(oam, row, 0, first);
    copy_row(oam, row - 1, row, 1);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// OAM whose rows' words are given; the others 0.
    fn oam_with(rows: &[(usize, [u16; 4])]) -> [u8; ROWS * ROW_BYTES] {
        let mut oam = [0u8; ROWS * ROW_BYTES];
        for &(row, words) in rows {
            for (i, w) in words.iter().enumerate() {
                set_word(&mut oam, row, i, *w);
            }
        }
        oam
    }

    fn row_words(oam: &[u8], row: usize) -> [u16; 4] {
        [0, 1, 2, 3].map(|i| word(oam, row, i))
    }

    // a = 0xF0F0 (the row's first word), b = 0x0FF0 (the row before's first), c = 0x3C3C (its
    // third): values for which the write and read formulas give different words.
    const BEFORE: [u16; 4] = [0x0FF0, 0x1111, 0x3C3C, 0x2222];
    const ROW: [u16; 4] = [0xF0F0, 0x5555, 0x6666, 0x7777];

    #[test]
    fn write_garbles_the_first_word_and_copies_the_rest_from_the_row_before() {
        let mut oam = oam_with(&[(6, BEFORE), (7, ROW)]);
        garble(&mut oam, 7, OamBugAccess::Write);
        // ((a ^ c) & (b ^ c)) ^ c = (0xCCCC & 0x33CC) ^ 0x3C3C
        assert_eq!(row_words(&oam, 7), [0x3CF0, 0x1111, 0x3C3C, 0x2222]);
        assert_eq!(row_words(&oam, 6), BEFORE);
    }

    #[test]
    fn read_garbles_with_its_own_formula() {
        let mut oam = oam_with(&[(6, BEFORE), (7, ROW)]);
        garble(&mut oam, 7, OamBugAccess::Read);
        // b | (a & c) = 0x0FF0 | 0x3030
        assert_eq!(row_words(&oam, 7), [0x3FF0, 0x1111, 0x3C3C, 0x2222]);
    }

    #[test]
    fn read_during_increase_garbles_three_rows_then_reads() {
        // a: row 5's first word, b: row 6's first, c: row 7's first, d: row 6's third.
        let two_before = [0xAAAA, 0x9999, 0x8888, 0x7777];
        let mut oam = oam_with(&[(5, two_before), (6, BEFORE), (7, ROW)]);
        garble(&mut oam, 7, OamBugAccess::ReadIncrease);
        // (b & (a | c | d)) | (a & c & d) with a = 0xAAAA, b = 0x0FF0, c = 0xF0F0, d = 0x3C3C:
        // 0x0FF0 & 0xFEFE | 0xAAAA & 0xF0F0 & 0x3C3C = 0x0EF0 | 0x2020 = 0x2EF0
        let garbled = [0x2EF0, 0x1111, 0x3C3C, 0x2222];
        assert_eq!(row_words(&oam, 6), garbled);
        assert_eq!(row_words(&oam, 5), garbled);
        // then a read on row 7 (now a copy of row 6): b | (a & c) = 0x2EF0 | (0x2EF0 & 0x3C3C)
        assert_eq!(row_words(&oam, 7), [0x2EF0, 0x1111, 0x3C3C, 0x2222]);
    }

    #[test]
    fn read_during_increase_near_the_ends_is_a_plain_read() {
        for row in [1, 3, 19] {
            let mut oam = oam_with(&[(row - 1, BEFORE), (row, ROW)]);
            let mut read = oam;
            garble(&mut oam, row, OamBugAccess::ReadIncrease);
            garble(&mut read, row, OamBugAccess::Read);
            assert_eq!(oam, read, "row {row}");
        }
    }

    #[test]
    fn the_first_row_is_never_garbled() {
        for access in [
            OamBugAccess::Write,
            OamBugAccess::Read,
            OamBugAccess::ReadIncrease,
        ] {
            let mut oam = oam_with(&[(0, ROW), (1, BEFORE)]);
            let before = oam;
            garble(&mut oam, 0, access);
            assert_eq!(oam, before, "{access:?}");
        }
    }
}
