//! All SingleStepTests SM83 vectors (envs/emurust/data/sm83): registers, memory and bus cycles.

use emurust_core::sm83_harness::{run_one, CycleKind};
use serde_json::Value;
use std::path::PathBuf;

fn vector_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../data/sm83/v1")
}

fn regs(state: &Value) -> ([u8; 8], u16, u16, bool) {
    let g = |k: &str| state[k].as_u64().unwrap();
    (
        ["a", "b", "c", "d", "e", "f", "h", "l"].map(|k| g(k) as u8),
        g("sp") as u16,
        g("pc") as u16,
        g("ime") != 0,
    )
}

#[test]
fn every_opcode_vector() {
    let mut files: Vec<_> = std::fs::read_dir(vector_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 500);
    let mut failures = Vec::new();
    let mut cases = 0;
    for path in files {
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        let skip_cycles = name == "76" || name == "10"; // HALT and STOP: see the vectors' README
        let data: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for case in data.as_array().unwrap() {
            cases += 1;
            let ram: Vec<(u16, u8)> = case["initial"]["ram"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (p[0].as_u64().unwrap() as u16, p[1].as_u64().unwrap() as u8))
                .collect();
            let (out, ei_pending, bus) = run_one(regs(&case["initial"]), &ram);
            let expected = regs(&case["final"]);
            let mut problems = Vec::new();
            if out != expected {
                problems.push(format!("registers {:02X?} sp {:04X} pc {:04X} ime {} expected {:02X?} sp {:04X} pc {:04X} ime {}",
                    out.0, out.1, out.2, out.3, expected.0, expected.1, expected.2, expected.3));
            }
            if case["final"]
                .get("ei")
                .map(|v| v.as_u64().unwrap() != 0)
                .unwrap_or(false)
                != ei_pending
            {
                problems.push(format!("EI pending {ei_pending}"));
            }
            for p in case["final"]["ram"].as_array().unwrap() {
                let (addr, v) = (
                    p[0].as_u64().unwrap() as usize,
                    p[1].as_u64().unwrap() as u8,
                );
                if bus.memory[addr] != v {
                    problems.push(format!(
                        "mem[{addr:04X}] = {:02X}, expected {v:02X}",
                        bus.memory[addr]
                    ));
                }
            }
            if !skip_cycles {
                let expected_cycles = case["cycles"].as_array().unwrap();
                if expected_cycles.len() != bus.cycles.len() {
                    problems.push(format!(
                        "{} M-cycles, expected {}",
                        bus.cycles.len(),
                        expected_cycles.len()
                    ));
                } else {
                    for (i, (got, want)) in bus.cycles.iter().zip(expected_cycles).enumerate() {
                        let pins = want[2].as_str().unwrap();
                        let kind = match pins {
                            "r-m" => CycleKind::Read,
                            "-wm" => CycleKind::Write,
                            _ => CycleKind::Internal,
                        };
                        let same = kind == got.2
                            && (kind == CycleKind::Internal
                                || (want[0].as_u64() == Some(got.0 as u64)
                                    && want[1].as_u64() == Some(got.1 as u64)));
                        if !same {
                            problems.push(format!(
                                "cycle {i}: got {:04X} {:02X} {:?}, expected {want}",
                                got.0, got.1, got.2
                            ));
                        }
                    }
                }
            }
            if !problems.is_empty() {
                failures.push(format!(
                    "{}: {}",
                    case["name"].as_str().unwrap(),
                    problems.join("; ")
                ));
            }
        }
    }
    assert_eq!(cases, 25_000);
    if !failures.is_empty() {
        let opcodes: std::collections::BTreeSet<_> = failures
            .iter()
            .map(|f| f[..f.len().min(5)].to_string())
            .collect();
        panic!(
            "{} of {cases} cases fail (opcodes {:?}); first ones:\n{}",
            failures.len(),
            opcodes,
            failures
                .iter()
                .take(15)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
