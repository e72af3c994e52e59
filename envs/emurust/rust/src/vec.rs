//! Many consoles stepped in parallel with Rayon: one ROM, N independent machines.

use crate::cartridge::{Cartridge, CartridgeError};
use crate::gameboy::{GameBoy, PowerOn};
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
        let work = |consoles: &mut Vec<GameBoy>| {
            consoles
                .par_iter_mut()
                .zip(phases.par_chunks(per_env.max(1)))
                .for_each(|(gb, own)| gb.run_phases(own, draw_last_only))
        };
        match &self.pool {
            Some(pool) => pool.install(|| work(&mut self.consoles)),
            None => work(&mut self.consoles),
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
