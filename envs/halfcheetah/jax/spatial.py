"""Planar spatial algebra: motion (w, vx, vz) and force (ty, fx, fz) vectors about a fixed world
point, the x-z restriction of MuJoCo's 6-D cdof/cvel/cinert quantities (engine_util_spatial).
Vectors are component-first, (3, ...), any batch after (layout.py)."""

from __future__ import annotations

import jax.numpy as jnp

from .layout import stack


def cross_motion(a, b):
    """a x b for motion vectors (MuJoCo's mju_crossMotion in the plane)."""
    return stack([jnp.zeros_like(a[0] * b[0]),
                  a[0] * b[2] - b[0] * a[2],
                  -a[0] * b[1] + b[0] * a[1]])


def cross_force(v, f):
    """v x* f for a motion v and a force f (mju_crossForce in the plane)."""
    return stack([v[2] * f[1] - v[1] * f[2],
                  v[0] * f[2],
                  -v[0] * f[1]])


def body_inertia(mass, iyy, cx, cz):
    """(nbody, 3, 3, ...) spatial inertia about the reference point of bodies with centres of mass
    at (cx, cz) relative to it; every argument is (nbody, ...)."""
    return stack([
        stack([iyy + mass * (cx * cx + cz * cz), mass * cz, -mass * cx], 1),
        stack([mass * cz, mass, jnp.zeros_like(cx)], 1),
        stack([-mass * cx, jnp.zeros_like(cx), mass], 1),
    ], 1)
