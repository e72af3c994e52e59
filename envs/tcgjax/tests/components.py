"""TCGJax's components: every L1/L2 test names the one it pins, so a failure says which part broke."""

from shared.verification.components import Components

TCGJAX = Components("tcgjax", ["rng", "cards", "rules", "engine", "observation", "env"])
