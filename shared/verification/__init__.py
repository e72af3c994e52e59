"""envport's four levels of verification: L1/L2 helpers (components, strategies), L3 rollout
comparison (l3), L4 cross-backend policy transfer with TOST (l4)."""
