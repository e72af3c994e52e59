//! A flat 64 KiB memory with a bus-cycle log: the machine the SingleStepTests vectors assume.

use crate::cpu::{Cpu, CpuBus};

/// Kind of bus cycle, as the vectors write it: "r-m", "-wm" or "---".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleKind {
    Read,
    Write,
    Internal,
}

pub struct FlatBus {
    pub memory: Vec<u8>,
    pub cycles: Vec<(u16, u8, CycleKind)>,
}

impl FlatBus {
    pub fn new() -> Self {
        FlatBus {
            memory: vec![0; 0x10000],
            cycles: Vec::new(),
        }
    }
}

impl Default for FlatBus {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuBus for FlatBus {
    fn read_cycle(&mut self, addr: u16) -> u8 {
        let v = self.memory[addr as usize];
        self.cycles.push((addr, v, CycleKind::Read));
        v
    }
    fn write_cycle(&mut self, addr: u16, value: u8) {
        self.memory[addr as usize] = value;
        self.cycles.push((addr, value, CycleKind::Write));
    }
    fn idle_cycle(&mut self) {
        self.cycles.push((0, 0, CycleKind::Internal));
    }
    fn pending_interrupts(&self) -> u8 {
        0
    }
    fn acknowledge_interrupt(&mut self, _mask: u8) {}
}

/// Registers in the vectors' order: a b c d e f h l, then sp, pc, ime.
pub type Registers = ([u8; 8], u16, u16, bool);

/// Runs exactly one instruction from the given registers and memory bytes.
/// Returns the registers after it (plus the pending-EI flag) and the bus cycles it made.
pub fn run_one(registers: Registers, ram: &[(u16, u8)]) -> (Registers, bool, FlatBus) {
    let mut bus = FlatBus::new();
    for &(addr, v) in ram {
        bus.memory[addr as usize] = v;
    }
    let ([a, b, c, d, e, f, h, l], sp, pc, ime) = registers;
    let mut cpu = Cpu {
        a,
        b,
        c,
        d,
        e,
        f,
        h,
        l,
        sp,
        pc,
        ime,
        ..Default::default()
    };
    cpu.step(&mut bus);
    let out = (
        [cpu.a, cpu.b, cpu.c, cpu.d, cpu.e, cpu.f, cpu.h, cpu.l],
        cpu.sp,
        cpu.pc,
        cpu.ime,
    );
    (out, cpu.ei_pending, bus)
}
