"""The constraint Jacobian as an operator that follows the kinematic tree, for the solver.
Batch-last (layout.py).

A contact row is a combination of the x- and z-velocity of one point fixed to one body, and that
velocity comes from the body's planar spatial velocity (three numbers) - so J x, J' f and
J' diag(w) J go through the tree like the mass matrix does, instead of through a dense
(rows x nv) matrix: J' diag(w) J is the composite-rigid-body assembly of one 3x3 "contact
stiffness" per body. Same algebra as the dense J in constraints.py (the tests check both against
MuJoCo); far fewer operations.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from .inertia import subtree_sums, tree_entries
from .layout import stack, take
from .model import PlanarModel


@struct.dataclass
class RowOperator:
    cdof: jax.Array  # (nv, 3)
    limit_sign: jax.Array  # (nlimit,) J entry at the limited dof, 0 when the row is not in effect
    offset: jax.Array  # (ncon, 2) contact point minus the spatial reference point (x, z)
    edge: jax.Array  # (ncon,) mu * first-tangent sign: the pyramid edges are J_n +- edge J_x
    on: jax.Array  # (ncon,) 1.0 where the contact is in effect


def _body_velocities(pm: PlanarModel, cdof, x):
    vel = [jnp.zeros((3,) + x.shape[1:], x.dtype)]
    for body in range(1, pm.nbody):
        v = vel[pm.body_parent[body]]
        for dof in pm.body_dofs[body]:
            v = v + cdof[dof] * x[dof]
        vel.append(v)
    return vel


def apply(pm: PlanarModel, op: RowOperator, x: jax.Array, slot_body: tuple[int, ...]) -> jax.Array:
    """J x, (nefc,): limit rows then (edge+, edge-, normal) per contact slot."""
    vel = _body_velocities(pm, op.cdof, x)
    limit = op.limit_sign * take(x, pm.limit_dofs)
    v = jnp.stack([vel[b] for b in slot_body])  # (ncon, 3)
    vx = v[:, 1] + v[:, 0] * op.offset[:, 1]
    vn = v[:, 2] - v[:, 0] * op.offset[:, 0]
    contact = jnp.stack([vn + op.edge * vx, vn - op.edge * vx, vn], axis=1) * op.on[:, None]
    return jnp.concatenate([limit, contact.reshape((-1,) + contact.shape[2:])])


def apply_transpose(pm: PlanarModel, op: RowOperator, f: jax.Array, slot_body: tuple[int, ...]) -> jax.Array:
    """J' f, (nv,)."""
    nl = len(pm.limit_dofs)
    batch = f.shape[1:]
    fc = f[nl:].reshape((-1, 3) + batch) * op.on[:, None]
    fn = fc[:, 0] + fc[:, 1] + fc[:, 2]
    fx = op.edge * (fc[:, 0] - fc[:, 1])
    spatial = jnp.stack([op.offset[:, 1] * fx - op.offset[:, 0] * fn, fx, fn], axis=1)  # (ncon, 3) about the origin
    per_body = [jnp.zeros((3,) + batch, f.dtype) for _ in range(pm.nbody)]
    for slot, body in enumerate(slot_body):
        per_body[body] = per_body[body] + spatial[slot]
    sub = subtree_sums(pm, per_body)
    limit_force = op.limit_sign * f[:nl]
    out = []
    for dof in range(pm.nv):
        value = jnp.sum(op.cdof[dof] * sub[pm.dof_body[dof]], axis=0)
        if dof in pm.limit_dofs:
            value = limit_force[pm.limit_dofs.index(dof)] + value
        out.append(value)
    return stack(out)


def weighted_gram_entries(pm: PlanarModel, op: RowOperator, w: jax.Array, slot_body: tuple[int, ...]) -> list:
    """J' diag(w) J as nested lists of entries (None where it is structurally zero)."""
    nl = len(pm.limit_dofs)
    wc = w[nl:].reshape((-1, 3) + w.shape[1:]) * op.on[:, None]
    nn = wc[:, 0] + wc[:, 1] + wc[:, 2]
    xn = op.edge * (wc[:, 0] - wc[:, 1])
    xx = op.edge * op.edge * (wc[:, 0] + wc[:, 1])
    ox, oz = op.offset[:, 0], op.offset[:, 1]
    # P maps the body's (w, vx, vz) to the point's (vx, vn): rows (oz, 1, 0) and (-ox, 0, 1);
    # K = P' [[xx, xn], [xn, nn]] P
    k00 = oz * oz * xx - 2 * oz * ox * xn + ox * ox * nn
    k01 = oz * xx - ox * xn
    k02 = oz * xn - ox * nn
    k11, k12, k22 = xx, xn, nn
    k = jnp.stack([jnp.stack([k00, k01, k02], 1), jnp.stack([k01, k11, k12], 1), jnp.stack([k02, k12, k22], 1)], 1)
    per_body = [jnp.zeros((3, 3) + w.shape[1:], w.dtype) for _ in range(pm.nbody)]
    for slot, body in enumerate(slot_body):
        per_body[body] = per_body[body] + k[slot]
    entries = tree_entries(pm, op.cdof, per_body)
    limit_diag = op.limit_sign * op.limit_sign * w[:nl]
    for row, dof in enumerate(pm.limit_dofs):
        entries[dof][dof] = entries[dof][dof] + limit_diag[row]
    return entries


def dense(pm: PlanarModel, op: RowOperator, slot_body: tuple[int, ...], dtype) -> np.ndarray:
    """The dense (nefc, nv) J of one cheetah that the operator stands for (tests)."""
    eye = jnp.eye(pm.nv, dtype=dtype)
    return jax.vmap(lambda e: apply(pm, op, e, slot_body), out_axes=1)(eye)
