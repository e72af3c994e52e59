"""PokeJAX's components: every L1/L2 test names the one it pins, so a failure says which part broke."""

from shared.verification.components import Components

POKEJAX = Components("pokejax", ["reference", "prng", "data", "stats", "battle", "teams"])
