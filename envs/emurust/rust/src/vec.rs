//! Many consoles stepped in parallel with Rayon: one ROM, N independent machines.

use crate::cartridge::{Cartridge, CartridgeError};
use crate::gameboy::{GameBoy, PowerOn};
use crate::slices::phase_rounds;
use rayon::prelude::*;

#[derive(Debug)]
pub enum VecError {
    Rom(CartridgeError),
    Threads(String),
}

pub struct GameBoyVec {
    consoles: Vec<GameBoy>,
    /// None: Rayon's global pool.
    pool: Option<rayon::ThreadPool>,
}

impl GameBoyVec {
    pub fn new(
        rom: &[u8],
        count: usize,
        threads: usize,
        render: bool,
        power_on: PowerOn,
        sound_emulated: bool,
    ) -> Result<Self, VecError> {
        Cartridge::from_rom(rom.to_vec()).map_err(VecError::Rom)?;
        let consoles = (0..count)
            .map(|_| {
                let mut gb =
                    GameBoy::with_power_on(rom.to_vec(), power_on).map_err(VecError::Rom)?;
                gb.set_render(render);
                gb.set_sound_emulated(sound_emulated);
                Ok(gb)
            })
            .collect::<Result<_, _>>()?;
        let pool = if threads == 0 {
            None
        } else {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .map_err(|e| {
                        VecError::Threads(format!("cannot start {threads} threads: {e}"))
                    })?,
            )
        };
        Ok(GameBoyVec { consoles, pool })
    }

    pub fn len(&self) -> usize {
        self.consoles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.consoles.is_empty()
    }

    pub fn get(&self, index: usize) -> &GameBoy {
        &self.consoles[index]
    }

    pub fn get_mut(&mut self, index: usize) -> &mut GameBoy {
        &mut self.consoles[index]
    }

    /// Runs each console's own phases (`GameBoy::run_phases`): `phases[i * per_env..][..per_env]`
    /// belong to console i; `phases.len()` must equal `len() * per_env`.
    pub fn run_phases(&mut self, phases: &[(u8, u32)], per_env: usize, draw_last_only: bool) {
        self.run_phases_each(phases, per_env, &vec![draw_last_only; self.len()]);
    }

    /// `run_phases` with each console's own `draw_last_only`.
    pub fn run_phases_each(
        &mut self,
        phases: &[(u8, u32)],
        per_env: usize,
        draw_last_only: &[bool],
    ) {
        let work = |consoles: &mut Vec<GameBoy>| {
            consoles
                .par_iter_mut()
                .zip(phases.par_chunks(per_env.max(1)))
                .zip(draw_last_only.par_iter())
                .for_each(|((gb, own), &draw)| gb.run_phases(own, draw))
        };
        match &self.pool {
            Some(pool) => pool.install(|| work(&mut self.consoles)),
            None => work(&mut self.consoles),
        }
    }

    /// `run_phases` in rounds (`slices::phase_rounds`): in each, every console runs its next slice of
    /// at most `max_frames` frames, through `run_round` (python.rs releases the GIL there); between
    /// two rounds, `go_on` says whether to continue. When it always does, the same as one
    /// `run_phases` (tested). With `draw_last_only`, no console draws a frame before its last, and
    /// every console's render setting is restored however the run ends.
    pub fn run_phases_in_rounds(
        &mut self,
        phases: &[(u8, u32)],
        per_env: usize,
        draw_last_only: bool,
        max_frames: u32,
        mut run_round: impl FnMut(&mut Self, &[(u8, u32)], usize, &[bool]),
        mut go_on: impl FnMut() -> bool,
    ) {
        let renders: Vec<bool> = self.consoles.iter().map(GameBoy::render).collect();
        let mut rounds = phase_rounds(phases, per_env, max_frames).peekable();
        while let Some(round) = rounds.next() {
            if draw_last_only {
                for (gb, &last) in self.consoles.iter_mut().zip(&round.final_slice) {
                    if !last {
                        gb.set_render(false);
                    }
                }
            }
            let draw: Vec<bool> = round
                .final_slice
                .iter()
                .map(|&last| draw_last_only && last)
                .collect();
            run_round(self, &round.phases, round.per_env, &draw);
            if rounds.peek().is_none() || !go_on() {
                break;
            }
        }
        if draw_last_only {
            for (gb, render) in self.consoles.iter_mut().zip(renders) {
                gb.set_render(render);
            }
        }
    }

    /// Sets each console's buttons and runs `frames` frames in each; `masks.len()` must equal `len()`.
    pub fn step(&mut self, masks: &[u8], frames: u32) {
        let work = |consoles: &mut Vec<GameBoy>| {
            consoles
                .par_iter_mut()
                .zip(masks.par_iter())
                .for_each(|(gb, &mask)| {
                    gb.set_buttons(mask);
                    gb.run_frames(frames);
                })
        };
        match &self.pool {
            Some(pool) => pool.install(|| work(&mut self.consoles)),
            None => work(&mut self.consoles),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gameboy::tests::wait_loop_rom;

    fn consoles(rom: &[u8]) -> GameBoyVec {
        let mut vec = GameBoyVec::new(rom, 3, 2, true, PowerOn::Dmg, true).unwrap();
        vec.get_mut(2).set_render(false); // one console that does not draw
        vec
    }

    #[test]
    fn phases_run_in_rounds_equal_one_run() {
        let rom = wait_loop_rom(true);
        // three consoles of three phases: 173 frames, 10 and none
        let phases = [
            (1, 100),
            (0, 0),
            (2, 73),
            (4, 10),
            (8, 0),
            (4, 0),
            (16, 0),
            (32, 0),
            (0, 0),
        ];
        for draw_last_only in [false, true] {
            let (mut whole, mut rounds) = (consoles(&rom), consoles(&rom));
            whole.run_phases(&phases, 3, draw_last_only);
            let mut count = 0;
            let run = |vec: &mut GameBoyVec, round: &[(u8, u32)], per_env: usize, draw: &[bool]| {
                count += 1;
                vec.run_phases_each(round, per_env, draw)
            };
            rounds.run_phases_in_rounds(&phases, 3, draw_last_only, 60, run, || true);
            assert_eq!(count, 3);
            for i in 0..3 {
                assert_eq!(
                    whole.get(i).screen()[..],
                    rounds.get(i).screen()[..],
                    "console {i}"
                );
                assert_eq!(whole.get(i).render(), rounds.get(i).render(), "console {i}");
                let state = whole.get_mut(i).save_state();
                assert_eq!(state, rounds.get_mut(i).save_state(), "console {i}");
            }
        }
    }

    #[test]
    fn a_stop_between_rounds_restores_every_render_setting() {
        let rom = wait_loop_rom(true);
        let mut vec = consoles(&rom);
        let phases = [(1, 1000), (2, 1000), (4, 1000)];
        let mut count = 0;
        let run = |vec: &mut GameBoyVec, round: &[(u8, u32)], per_env: usize, draw: &[bool]| {
            count += 1;
            vec.run_phases_each(round, per_env, draw)
        };
        vec.run_phases_in_rounds(&phases, 1, true, 60, run, || false);
        assert_eq!(count, 1);
        let renders: Vec<bool> = (0..3).map(|i| vec.get(i).render()).collect();
        assert_eq!(renders, vec![true, true, false]);
    }
}
