"""Constraint rows: joint limits and pyramidal contact edges, with MuJoCo's soft-constraint
impedance, stiffness and damping (mj_makeConstraint, mj_makeImpedance).

Rows are fixed: one per limited joint, then three per contact slot; rows that are not in effect
have J = 0 and D = 0, and drop out of every sum. MuJoCo gives each contact four pyramid edges,
J_n +- mu J_t1 and J_n +- mu J_t2; in the plane J_t2 (world y) is zero, so the last two are the
same row J_n with the same D and aref. We keep one copy with `weight` 2, which is the same cost,
gradient and Hessian; each copy's force is the row's `force` (`expand_to_mujoco` undoes the
merge). MuJoCo's efc arrays hold only the rows in effect, in the same relative order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from .collision import Contacts
from .inertia import Frames
from .model import MJ_MAXIMP, MJ_MINIMP, MJ_MINVAL, PlanarModel
from .rows import RowOperator, apply, apply_transpose, dense, weighted_gram

ROWS_PER_CONTACT = 3
CONTACT_ROW_WEIGHT = (1.0, 1.0, 2.0)


@struct.dataclass
class ConstraintRows:
    op: RowOperator  # J as a tree operator (rows.py)
    D: jax.Array  # (nefc,) 1 / R, 0 for rows not in effect
    aref: jax.Array  # (nefc,) reference acceleration
    pos: jax.Array  # (nefc,) constraint violation (efc_pos)
    R: jax.Array  # (nefc,) regulariser
    in_effect: jax.Array  # (nefc,) bool: the row exists in MuJoCo's efc arrays
    weight: jax.Array  # (nefc,) copies of the row in MuJoCo's efc arrays (1, or 2 for J_n)
    slot_body: tuple = struct.field(pytree_node=False, default=())

    def J_mul(self, pm: PlanarModel, x):  # noqa: N802 - J as in MuJoCo's efc_J
        return apply(pm, self.op, x, self.slot_body)

    def JT_mul(self, pm: PlanarModel, f):  # noqa: N802
        return apply_transpose(pm, self.op, f, self.slot_body)

    def gram(self, pm: PlanarModel, w):
        """J' diag(w) J."""
        return weighted_gram(pm, self.op, w, self.slot_body)

    def dense_J(self, pm: PlanarModel):  # noqa: N802
        return dense(pm, self.op, self.slot_body, self.D.dtype)


def impedance(solref, solimp, pos, timestep):
    """MuJoCo's K, B and impedance of a soft constraint at violation `pos`."""
    timeconst = jnp.maximum(solref[..., 0], 2 * timestep)  # refsafe
    dampratio = solref[..., 1]
    dmin = jnp.clip(solimp[..., 0], MJ_MINIMP, MJ_MAXIMP)
    dmax = jnp.clip(solimp[..., 1], MJ_MINIMP, MJ_MAXIMP)
    width = jnp.maximum(MJ_MINVAL, solimp[..., 2])
    mid = jnp.clip(solimp[..., 3], MJ_MINIMP, MJ_MAXIMP)
    power = jnp.maximum(1.0, solimp[..., 4])
    stiffness = 1.0 / (dmax * dmax * timeconst * timeconst * dampratio * dampratio)
    damping = 2.0 / (dmax * timeconst)
    x = jnp.abs(pos) / width
    x_safe = jnp.minimum(x, 1.0)
    lower = jnp.power(x_safe, power) / jnp.power(mid, power - 1.0)
    upper = 1.0 - jnp.power(1.0 - x_safe, power) / jnp.power(1.0 - mid, power - 1.0)
    y = jnp.where(x_safe < mid, lower, upper)
    imp = jnp.clip(dmin + y * (dmax - dmin), dmin, dmax)
    imp = jnp.where(x > 1.0, dmax, imp)
    return stiffness, damping, imp


def limit_rows(pm: PlanarModel, qpos: jax.Array):
    dtype = qpos.dtype
    q = qpos[jnp.array(pm.limit_dofs)]
    lo, hi = jnp.asarray(pm.limit_range[:, 0], dtype), jnp.asarray(pm.limit_range[:, 1], dtype)
    dist_min, dist_max = q - lo, hi - q
    pos = jnp.minimum(dist_min, dist_max)
    sign = jnp.where(dist_min < dist_max, 1.0, -1.0).astype(dtype)
    invweight = jnp.asarray(pm.dof_invweight0[list(pm.limit_dofs)], dtype)
    return sign, pos, pos < 0, invweight


def make_constraints(pm: PlanarModel, frames: Frames, contacts: Contacts, qpos, qvel) -> ConstraintRows:
    dtype = qpos.dtype
    sign, pos_l, act_l, iw_l = limit_rows(pm, qpos)
    nl, ncon = pos_l.shape[0], contacts.dist.shape[0]
    nc = ncon * ROWS_PER_CONTACT
    mu = pm.contact_friction
    op = RowOperator(cdof=frames.cdof, limit_sign=jnp.where(act_l, sign, 0.0),
                     offset=contacts.pos - frames.origin, edge=mu * contacts.tangent_x[:, 0],
                     on=contacts.active.astype(dtype))
    # pyramidal: one invweight for all edges of a contact (body's + the world's, which is 0)
    iw_c = jnp.asarray(pm.body_invweight0[contacts.body], dtype) * (1.0 + mu * mu) * 2.0 * mu * mu / pm.impratio
    solref = jnp.concatenate([jnp.broadcast_to(jnp.asarray(pm.limit_solref, dtype), (nl, 2)),
                              jnp.broadcast_to(jnp.asarray(pm.contact_solref, dtype), (nc, 2))])
    solimp = jnp.concatenate([jnp.broadcast_to(jnp.asarray(pm.limit_solimp, dtype), (nl, 5)),
                              jnp.broadcast_to(jnp.asarray(pm.contact_solimp, dtype), (nc, 5))])
    in_effect = jnp.concatenate([act_l, jnp.repeat(contacts.active, ROWS_PER_CONTACT)])
    pos = jnp.concatenate([pos_l, jnp.repeat(contacts.dist, ROWS_PER_CONTACT)])
    invweight = jnp.concatenate([iw_l, jnp.repeat(iw_c, ROWS_PER_CONTACT)])
    slot_body = tuple(int(b) for b in contacts.body)
    k, b, imp = impedance(solref, solimp, pos, pm.timestep)
    R = jnp.maximum(invweight * (1.0 - imp) / imp, MJ_MINVAL)
    aref = -b * apply(pm, op, qvel, slot_body) - k * imp * pos
    D = jnp.where(in_effect, 1.0 / R, 0.0)
    weight = jnp.asarray(np.concatenate([np.ones(nl), np.tile(CONTACT_ROW_WEIGHT, ncon)]), dtype)
    return ConstraintRows(op=op, D=D, aref=jnp.where(in_effect, aref, 0.0), pos=pos, R=R, in_effect=in_effect,
                          weight=weight, slot_body=slot_body)


def expand_to_mujoco(pm: PlanarModel, values: np.ndarray) -> np.ndarray:
    """Per-row values (..., nefc) in MuJoCo's layout: each contact's J_n row twice (numpy)."""
    nl = len(pm.limit_dofs)
    values = np.asarray(values)
    contact = values[..., nl:].reshape(values.shape[:-1] + (-1, ROWS_PER_CONTACT))
    contact = np.concatenate([contact, contact[..., 2:3]], axis=-1)
    return np.concatenate([values[..., :nl], contact.reshape(values.shape[:-1] + (-1,))], axis=-1)
