"""Pong's components, as declared in translation.toml: every L1 test names the one it pins."""

from pathlib import Path

from shared.verification.components import Components

PONG = Components.from_translation_toml(Path(__file__).resolve().parents[1] / "translation.toml")
