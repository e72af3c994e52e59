"""Planar spatial algebra: motion (w, vx, vz) and force (ty, fx, fz) vectors about a fixed world
point, the x-z restriction of MuJoCo's 6-D cdof/cvel/cinert quantities (engine_util_spatial)."""

from __future__ import annotations

import jax.numpy as jnp


def cross_motion(a, b):
    """a x b for motion vectors (MuJoCo's mju_crossMotion in the plane)."""
    return jnp.stack([jnp.zeros_like(a[..., 0]),
                      a[..., 0] * b[..., 2] - b[..., 0] * a[..., 2],
                      -a[..., 0] * b[..., 1] + b[..., 0] * a[..., 1]], axis=-1)


def cross_force(v, f):
    """v x* f for a motion v and a force f (mju_crossForce in the plane)."""
    return jnp.stack([v[..., 2] * f[..., 1] - v[..., 1] * f[..., 2],
                      v[..., 0] * f[..., 2],
                      -v[..., 0] * f[..., 1]], axis=-1)


def body_inertia(mass, iyy, com_rel):
    """3x3 spatial inertia about the reference point of a body with centre of mass at `com_rel`."""
    cx, cz = com_rel[..., 0], com_rel[..., 1]
    z = jnp.zeros_like(mass)
    return jnp.stack([
        jnp.stack([iyy + mass * (cx * cx + cz * cz), mass * cz, -mass * cx], -1),
        jnp.stack([mass * cz, mass, z], -1),
        jnp.stack([-mass * cx, z, mass], -1),
    ], -2)
