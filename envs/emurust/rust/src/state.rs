//! Save states: a flat little-endian byte stream, written and read field by field by each unit.
//!
//! The stream starts with a magic, a format version and the payload length, and ends with a
//! checksum over the payload, so that a truncated or edited state is an error, never garbage.

use std::fmt;

const MAGIC: &[u8; 8] = b"EMURUST\x00";
// 6: the checksum taken over 8-byte words (`checksum`).
const VERSION: u32 = 6;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateError(pub String);

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "corrupt save state: {}", self.0)
    }
}

impl std::error::Error for StateError {}

#[derive(Default)]
pub struct StateWriter {
    payload: Vec<u8>,
}

impl StateWriter {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn u8(&mut self, v: u8) {
        self.payload.push(v);
    }
    pub fn bool(&mut self, v: bool) {
        self.payload.push(v as u8);
    }
    pub fn u16(&mut self, v: u16) {
        self.payload.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.payload.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.payload.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.payload.extend_from_slice(&v.to_le_bytes());
    }
    /// A length-prefixed byte block.
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.payload.extend_from_slice(v);
    }
    /// The complete state: header, payload, checksum.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.payload.len() + 24);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(self.payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.payload);
        out.extend_from_slice(&checksum(&self.payload).to_le_bytes());
        out
    }
}

/// FNV-1a's steps over 8-byte little-endian words (the last zero-padded; the length is in the
/// header), each followed by a rotation so that a change in a word's high bytes reaches every
/// bit of the result: enough to catch accidental corruption (not an authenticity check). Every
/// `load_state` checks it, an RL reset per episode: over a 63 KB state FNV-1a byte by byte took
/// 84 us on the 2-core VM of `BENCH_HISTORY.md`, this 13 us.
fn checksum(data: &[u8]) -> u64 {
    let step = |hash: u64, word: u64| {
        (hash ^ word)
            .wrapping_mul(0x0000_0100_0000_01b3)
            .rotate_left(29)
    };
    let mut words = data.chunks_exact(8);
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for word in &mut words {
        hash = step(hash, u64::from_le_bytes(word.try_into().expect("8 bytes")));
    }
    let mut last = [0u8; 8];
    last[..words.remainder().len()].copy_from_slice(words.remainder());
    step(hash, u64::from_le_bytes(last))
}

#[derive(Debug)]
pub struct StateReader<'a> {
    payload: &'a [u8],
    pos: usize,
}

impl<'a> StateReader<'a> {
    /// Checks header and checksum; the reader then walks the payload.
    pub fn new(data: &'a [u8]) -> Result<Self, StateError> {
        if data.len() < 28 || &data[..8] != MAGIC {
            return Err(StateError(
                "not an emurust save state (bad magic or too short)".into(),
            ));
        }
        let version = u32::from_le_bytes(data[8..12].try_into().unwrap());
        if version != VERSION {
            return Err(StateError(format!(
                "format version {version}, this build reads {VERSION}"
            )));
        }
        let length = u64::from_le_bytes(data[12..20].try_into().unwrap()) as usize;
        if data.len() != 20 + length + 8 {
            return Err(StateError(format!(
                "length mismatch: header says {} payload bytes, found {}",
                length,
                data.len().saturating_sub(28)
            )));
        }
        let payload = &data[20..20 + length];
        let stored = u64::from_le_bytes(data[20 + length..].try_into().unwrap());
        if stored != checksum(payload) {
            return Err(StateError(
                "checksum mismatch (the state was modified or damaged)".into(),
            ));
        }
        Ok(Self { payload, pos: 0 })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], StateError> {
        if self.pos + n > self.payload.len() {
            return Err(StateError(format!(
                "payload ends early at byte {}",
                self.pos
            )));
        }
        let slice = &self.payload[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }
    pub fn u8(&mut self) -> Result<u8, StateError> {
        Ok(self.take(1)?[0])
    }
    pub fn bool(&mut self) -> Result<bool, StateError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(StateError(format!(
                "bad boolean {v} at byte {}",
                self.pos - 1
            ))),
        }
    }
    pub fn u16(&mut self) -> Result<u16, StateError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().unwrap()))
    }
    pub fn u32(&mut self) -> Result<u32, StateError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    pub fn u64(&mut self) -> Result<u64, StateError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().unwrap()))
    }
    pub fn i32(&mut self) -> Result<i32, StateError> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().unwrap()))
    }
    /// A length-prefixed block whose length must be `expected`.
    pub fn bytes_into(&mut self, out: &mut [u8]) -> Result<(), StateError> {
        let n = self.u32()? as usize;
        if n != out.len() {
            return Err(StateError(format!(
                "block of {n} bytes where {} were expected",
                out.len()
            )));
        }
        out.copy_from_slice(self.take(n)?);
        Ok(())
    }
    pub fn bytes_vec(&mut self) -> Result<Vec<u8>, StateError> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    pub fn finish(self) -> Result<(), StateError> {
        if self.pos != self.payload.len() {
            return Err(StateError(format!(
                "{} unread bytes at the end",
                self.payload.len() - self.pos
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_corruption() {
        let mut w = StateWriter::new();
        w.u8(7);
        w.u16(0xBEEF);
        w.bytes(&[1, 2, 3]);
        let data = w.finish();
        let mut r = StateReader::new(&data).unwrap();
        assert_eq!(r.u8().unwrap(), 7);
        assert_eq!(r.u16().unwrap(), 0xBEEF);
        let mut block = [0u8; 3];
        r.bytes_into(&mut block).unwrap();
        assert_eq!(block, [1, 2, 3]);
        r.finish().unwrap();

        let mut bad = data.clone();
        bad[21] ^= 1;
        assert!(StateReader::new(&bad).unwrap_err().0.contains("checksum"));
        assert!(StateReader::new(&data[..data.len() - 1]).is_err());
        assert!(StateReader::new(b"garbage").is_err());
    }

    #[test]
    fn every_flipped_bit_fails_the_checksum() {
        // 101 bytes: twelve whole words and a padded last one.
        let mut w = StateWriter::new();
        for i in 0..101u32 {
            w.u8((i * 37 % 251) as u8);
        }
        let data = w.finish();
        for byte in 20..data.len() {
            for bit in 0..8 {
                let mut bad = data.clone();
                bad[byte] ^= 1 << bit;
                assert!(
                    StateReader::new(&bad).is_err(),
                    "byte {byte} bit {bit} flipped and not caught"
                );
            }
        }
    }
}
