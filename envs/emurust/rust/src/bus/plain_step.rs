//! The bus as one instruction sees it when no event can fall inside it.
//!
//! The frame loop runs an instruction through `PlainStep` only when it starts at least
//! `PLAIN_STEP_CYCLES` before the next event (`Bus::plain_steps_from_here`), so its fetch, read
//! and idle M-cycles cannot reach `next_event` and skip `tick`'s test. Only a write can bring the
//! next event nearer in the middle of an instruction (it may reschedule), and in every SM83
//! instruction nothing but another write follows a write; writes therefore keep the tested tick.
//! Everything else is the `Bus`'s own behaviour.

use super::Bus;
use crate::cpu::CpuBus;
use crate::ppu::OamBugAccess;

/// `PYBOY`: the bus is in its PyBoy-compatible timing, where the OAM corruption bug (which PyBoy
/// does not emulate) need not even be looked for.
pub struct PlainStep<'a, const PYBOY: bool>(pub &'a mut Bus);

impl<const PYBOY: bool> PlainStep<'_, PYBOY> {
    #[inline(always)]
    fn tick(&mut self) {
        self.0.cycles += 4;
        debug_assert!(
            self.0.cycles < self.0.next_event,
            "a plain step reached an event at cycle {}",
            self.0.cycles
        );
    }
}

impl<const PYBOY: bool> CpuBus for PlainStep<'_, PYBOY> {
    #[inline(always)]
    fn read_cycle(&mut self, addr: u16) -> u8 {
        self.tick();
        self.0.read(addr)
    }
    #[inline(always)]
    fn fetch_cycle(&mut self, addr: u16) -> u8 {
        self.tick();
        self.0.fetch(addr)
    }
    #[inline(always)]
    fn write_cycle(&mut self, addr: u16, value: u8) {
        self.0.write_cycle(addr, value);
    }
    #[inline(always)]
    fn idle_cycle(&mut self) {
        self.tick();
    }
    #[inline(always)]
    fn idu_cycle(&mut self, addr: u16) {
        self.tick();
        if !PYBOY {
            self.0.idu_oam_bug(addr, OamBugAccess::Write);
        }
    }
    #[inline(always)]
    fn read_idu_cycle(&mut self, addr: u16) -> u8 {
        self.tick();
        if !PYBOY {
            self.0.idu_oam_bug(addr, OamBugAccess::ReadIncrease);
        }
        self.0.read(addr)
    }
    fn halt_cycle(&mut self) {
        self.0.halt_cycle();
    }
    fn halt_fetch_cycle(&mut self, addr: u16) -> u8 {
        self.0.halt_fetch_cycle(addr)
    }
    #[inline(always)]
    fn pending_interrupts(&self) -> u8 {
        self.0.pending_interrupts()
    }
    fn acknowledge_interrupt(&mut self, mask: u8) {
        self.0.acknowledge_interrupt(mask);
    }
    fn stop(&mut self) {
        self.0.stop();
    }
    #[inline(always)]
    fn pyboy_opcode_fetched(&mut self, opcode: u8) {
        self.0.pyboy_opcode_fetched(opcode);
    }
    fn requested_interrupts(&self) -> u8 {
        self.0.requested_interrupts()
    }
    fn enabled_interrupts(&self) -> u8 {
        self.0.enabled_interrupts()
    }
    fn pyboy_chunk_ended(&mut self) -> bool {
        self.0.pyboy_chunk_ended()
    }
    fn peek_code(&self, addr: u16) -> Option<u8> {
        self.0.peek_code(addr)
    }
    fn quiet_cycles(&self, code_at: u16) -> u64 {
        self.0.quiet_cycles(code_at)
    }
    fn poll_quiet_cycles(&self, code_at: u16, addr: u16, value: u8) -> u64 {
        self.0.poll_quiet_cycles(code_at, addr, value)
    }
    fn skip_wait_cycles(&mut self, cycles: u64) {
        self.0.skip_wait_cycles(cycles);
    }
    #[inline(always)]
    fn request_attention(&mut self) {
        self.0.request_attention();
    }
}
