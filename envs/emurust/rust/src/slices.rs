//! Long runs cut into slices, so that the Python layer can look for a Ctrl-C between two of them.
//!
//! A run call releases the GIL, and Python sees a signal only when it holds it again: without
//! slices, `run_frames(10**9)` could only be stopped by killing the process. Running the slices one
//! after the other is running the whole: frames are run one at a time anyway, a phase cut in two sets
//! the same buttons again at the cut (the joypad sees no change, so no interrupt: `joypad.rs`), and
//! cycles are run to an end point, which a later slice continues from (`GameBoy::run_cycles_to`).

/// One emulated second: 1-20 ms of work at the rates measured (README), so a Ctrl-C is seen at once.
pub const FRAMES_PER_SLICE: u32 = 60;
/// About one emulated second of T-cycles (60 frames of 70,224).
pub const CYCLES_PER_SLICE: u64 = 60 * 70_224;

/// `phases` (button mask, frames) cut into consecutive lists of at most `max_frames` frames each,
/// in order, made one at a time (a call of 2**32 frames would otherwise make 71 million lists up
/// front). A phase longer than the room left is split across lists; a zero-frame phase stays where
/// it was (it still sets its buttons). Never empty: no phases give one empty list.
pub fn phase_slices(phases: &[(u8, u32)], max_frames: u32) -> PhaseSlices<'_> {
    assert!(max_frames > 0, "a slice holds at least one frame");
    PhaseSlices {
        phases,
        max_frames,
        next_phase: 0,
        taken_of_next: 0,
        started: false,
    }
}

pub struct PhaseSlices<'a> {
    phases: &'a [(u8, u32)],
    max_frames: u32,
    /// The first phase not wholly in a list yet, and how many of its frames are.
    next_phase: usize,
    taken_of_next: u32,
    started: bool,
}

impl Iterator for PhaseSlices<'_> {
    type Item = Vec<(u8, u32)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.started && self.next_phase == self.phases.len() {
            return None;
        }
        self.started = true;
        let mut slice = Vec::new();
        let mut room = self.max_frames;
        while let Some(&(mask, frames)) = self.phases.get(self.next_phase) {
            let left = frames - self.taken_of_next;
            if left > 0 && room == 0 {
                break;
            }
            let taken = left.min(room);
            slice.push((mask, taken));
            room -= taken;
            if taken == left {
                self.next_phase += 1;
                self.taken_of_next = 0;
            } else {
                self.taken_of_next += taken;
            }
        }
        Some(slice)
    }
}

/// One round of a `GameBoyVec`'s phases run in slices: every console's next slice, padded at its end with
/// zero-frame phases of the buttons the console then holds (which its joypad does not see) so that
/// each has `per_env` phases; `final_slice[i]` is whether console i's last frame is in this round.
#[derive(Debug, PartialEq)]
pub struct PhaseRound {
    pub phases: Vec<(u8, u32)>,
    pub per_env: usize,
    pub final_slice: Vec<bool>,
}

/// The rounds of `phases` (`per_env` phases of each console, console after console), each console
/// cut by `phase_slices`; made one at a time. At least one round; none after every console's last.
pub fn phase_rounds(phases: &[(u8, u32)], per_env: usize, max_frames: u32) -> PhaseRounds<'_> {
    let consoles: Vec<_> = phases
        .chunks(per_env.max(1))
        .map(|own| phase_slices(own, max_frames).peekable())
        .collect();
    let held = vec![None; consoles.len()];
    PhaseRounds {
        consoles,
        held,
        started: false,
    }
}

pub struct PhaseRounds<'a> {
    consoles: Vec<std::iter::Peekable<PhaseSlices<'a>>>,
    /// The buttons each console holds after its slices so far.
    held: Vec<Option<u8>>,
    started: bool,
}

impl Iterator for PhaseRounds<'_> {
    type Item = PhaseRound;

    fn next(&mut self) -> Option<PhaseRound> {
        let slices: Vec<Option<Vec<(u8, u32)>>> =
            self.consoles.iter_mut().map(|c| c.next()).collect();
        if self.started && slices.iter().all(Option::is_none) {
            return None;
        }
        self.started = true;
        let final_slice = slices
            .iter()
            .zip(self.consoles.iter_mut())
            .map(|(slice, rest)| slice.is_some() && rest.peek().is_none())
            .collect();
        let per_env = slices.iter().flatten().map(Vec::len).max().unwrap_or(0);
        let mut phases = Vec::with_capacity(per_env * slices.len());
        for (slice, held) in slices.into_iter().zip(self.held.iter_mut()) {
            let mut own = slice.unwrap_or_default();
            if let Some(&(mask, _)) = own.last() {
                *held = Some(mask);
            }
            // (a console's first slice holds at least its first phase, so `held` is set by then)
            let pad = held.expect("a console's first slice holds its first phase");
            own.resize(per_env, (pad, 0));
            phases.extend(own);
        }
        Some(PhaseRound {
            phases,
            per_env,
            final_slice,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(slice: &[(u8, u32)]) -> u64 {
        slice.iter().map(|&(_, f)| f as u64).sum()
    }

    /// The slices' phases, adjacent parts of one phase merged back: the phases given.
    fn rejoined(slices: &[Vec<(u8, u32)>], cuts: &[usize]) -> Vec<(u8, u32)> {
        let mut out: Vec<(u8, u32)> = Vec::new();
        for (i, slice) in slices.iter().enumerate() {
            for (j, &phase) in slice.iter().enumerate() {
                let continues = j == 0 && i > 0 && cuts.contains(&i);
                match out.last_mut() {
                    Some(last) if continues => last.1 += phase.1,
                    _ => out.push(phase),
                }
            }
        }
        out
    }

    #[test]
    fn slices_hold_at_most_the_frames_asked_and_rejoin_to_the_phases() {
        let phases = [
            (1, 150),
            (0, 0),
            (2, 0),
            (4, 59),
            (8, 1),
            (16, 120),
            (32, 0),
        ];
        let slices: Vec<_> = phase_slices(&phases, 60).collect();
        assert_eq!(
            slices,
            vec![
                vec![(1, 60)],
                vec![(1, 60)],
                vec![(1, 30), (0, 0), (2, 0), (4, 30)],
                vec![(4, 29), (8, 1), (16, 30)],
                vec![(16, 60)],
                vec![(16, 30), (32, 0)],
            ]
        );
        assert!(slices.iter().all(|s| frames(s) <= 60));
        // slices 1, 2, 3 and 5 start with the rest of a phase cut at the end of the slice before
        assert_eq!(rejoined(&slices, &[1, 2, 3, 4, 5]), phases.to_vec());
    }

    #[test]
    fn short_or_empty_runs_are_one_slice() {
        let all = |phases: &[(u8, u32)]| phase_slices(phases, 60).collect::<Vec<_>>();
        assert_eq!(all(&[]), vec![Vec::<(u8, u32)>::new()]);
        assert_eq!(all(&[(3, 0)]), vec![vec![(3, 0)]]);
        assert_eq!(all(&[(3, 60), (5, 0)]), vec![vec![(3, 60), (5, 0)]]);
        assert_eq!(all(&[(3, 61)]), vec![vec![(3, 60)], vec![(3, 1)]]);
    }

    #[test]
    fn the_largest_runs_are_cut_without_overflow() {
        let slices: Vec<_> = phase_slices(&[(1, u32::MAX)], u32::MAX).collect();
        assert_eq!(slices, vec![vec![(1, u32::MAX)]]);
        assert_eq!(phase_slices(&[(1, u32::MAX)], 1 << 31).count(), 2);
        // made as they are asked for: the first of 2**32 frames' slices at once
        let mut lazy = phase_slices(&[(1, u32::MAX), (2, u32::MAX)], 60);
        assert_eq!(lazy.next(), Some(vec![(1, 60)]));
    }

    #[test]
    fn rounds_give_each_console_its_slices_padded_with_the_buttons_it_holds() {
        // three consoles of two phases: 130 frames, 10, 0
        let phases = [(1, 100), (2, 30), (4, 10), (8, 0), (16, 0), (32, 0)];
        let rounds: Vec<_> = phase_rounds(&phases, 2, 60).collect();
        assert_eq!(
            rounds,
            vec![
                PhaseRound {
                    phases: vec![(1, 60), (1, 0), (4, 10), (8, 0), (16, 0), (32, 0)],
                    per_env: 2,
                    final_slice: vec![false, true, true],
                },
                PhaseRound {
                    phases: vec![(1, 40), (2, 20), (8, 0), (8, 0), (32, 0), (32, 0)],
                    per_env: 2,
                    final_slice: vec![false, false, false],
                },
                PhaseRound {
                    phases: vec![(2, 10), (8, 0), (32, 0)],
                    per_env: 1,
                    final_slice: vec![true, false, false],
                },
            ]
        );
    }
}
