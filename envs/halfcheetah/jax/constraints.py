"""Constraint rows: joint limits and pyramidal contact edges, with MuJoCo's soft-constraint
impedance, stiffness and damping (mj_makeConstraint, mj_makeImpedance). Batch-last (layout.py).

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
from .layout import const, take
from .model import MJ_MAXIMP, MJ_MINIMP, MJ_MINVAL, PlanarModel
from .rows import RowOperator, apply, apply_transpose, dense, weighted_gram_entries

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

    def gram_entries(self, pm: PlanarModel, w):
        """J' diag(w) J as nested lists of entries (rows.weighted_gram_entries)."""
        return weighted_gram_entries(pm, self.op, w, self.slot_body)

    def dense_J(self, pm: PlanarModel):  # noqa: N802
        return dense(pm, self.op, self.slot_body, self.D.dtype)


def impedance(solref: np.ndarray, solimp: np.ndarray, pos, timestep: float):
    """MuJoCo's K, B and impedance of soft constraints at violation `pos` (nefc, ...), for the
    model's per-row constants solref (2, nefc) and solimp (5, nefc). Whatever depends on the
    constants alone is computed once in numpy; an integer solimp power (MuJoCo's default 2)
    becomes multiplications instead of exp(log)."""
    solref, solimp = np.asarray(solref, np.float64), np.asarray(solimp, np.float64)
    timeconst = np.maximum(solref[0], 2 * timestep)  # refsafe
    dampratio = solref[1]
    dmin = np.clip(solimp[0], MJ_MINIMP, MJ_MAXIMP)
    dmax = np.clip(solimp[1], MJ_MINIMP, MJ_MAXIMP)
    width = np.maximum(MJ_MINVAL, solimp[2])
    mid = np.clip(solimp[3], MJ_MINIMP, MJ_MAXIMP)
    power = np.maximum(1.0, solimp[4])
    stiffness = 1.0 / (dmax * dmax * timeconst * timeconst * dampratio * dampratio)
    damping = 2.0 / (dmax * timeconst)
    row = lambda value: const(value, pos.dtype, pos)  # noqa: E731
    x = jnp.abs(pos) / row(width)
    x_safe = jnp.minimum(x, 1.0)
    if np.all(power == power[0]) and power[0] == int(power[0]):
        raise_to = lambda base: base ** int(power[0])  # noqa: E731
    else:
        raise_to = lambda base: jnp.power(base, row(power))  # noqa: E731
    lower = raise_to(x_safe) / row(mid ** (power - 1.0))
    upper = 1.0 - raise_to(1.0 - x_safe) / row((1.0 - mid) ** (power - 1.0))
    y = jnp.where(x_safe < row(mid), lower, upper)
    imp = jnp.clip(row(dmin) + y * row(dmax - dmin), row(dmin), row(dmax))
    imp = jnp.where(x > 1.0, row(dmax), imp)
    return row(stiffness), row(damping), imp


def limit_rows(pm: PlanarModel, qpos: jax.Array):
    dtype = qpos.dtype
    q = take(qpos, pm.limit_dofs)
    lo, hi = const(pm.limit_range[:, 0], dtype, q), const(pm.limit_range[:, 1], dtype, q)
    dist_min, dist_max = q - lo, hi - q
    pos = jnp.minimum(dist_min, dist_max)
    sign = jnp.where(dist_min < dist_max, 1.0, -1.0).astype(dtype)
    invweight = const(pm.dof_invweight0[list(pm.limit_dofs)], dtype, q)
    return sign, pos, pos < 0, invweight


def _per_row(limit, contact, nl: int, ncon: int) -> np.ndarray:
    """(k, nefc): a model constant of the limit rows then of every contact row."""
    limit, contact = np.asarray(limit), np.asarray(contact)
    return np.concatenate([np.broadcast_to(limit, (nl, limit.shape[-1])),
                           np.broadcast_to(contact, (ncon * ROWS_PER_CONTACT, contact.shape[-1]))]).T


def make_constraints(pm: PlanarModel, frames: Frames, contacts: Contacts, qpos, qvel) -> ConstraintRows:
    dtype = qpos.dtype
    sign, pos_l, act_l, iw_l = limit_rows(pm, qpos)
    nl, ncon = pos_l.shape[0], contacts.dist.shape[0]
    mu = pm.contact_friction
    op = RowOperator(cdof=frames.cdof, limit_sign=jnp.where(act_l, sign, 0.0),
                     offset=contacts.pos - frames.origin, edge=mu * contacts.tangent_x[:, 0],
                     on=contacts.active.astype(dtype))
    # pyramidal: one invweight for all edges of a contact (body's + the world's, which is 0)
    iw_c = pm.body_invweight0[contacts.body] * (1.0 + mu * mu) * 2.0 * mu * mu / pm.impratio
    pos = jnp.concatenate([pos_l, jnp.repeat(contacts.dist, ROWS_PER_CONTACT, axis=0)])
    solref = _per_row(pm.limit_solref, pm.contact_solref, nl, ncon)
    solimp = _per_row(pm.limit_solimp, pm.contact_solimp, nl, ncon)
    invweight = jnp.concatenate([iw_l, jnp.repeat(const(iw_c, dtype, contacts.dist), ROWS_PER_CONTACT, axis=0)])
    in_effect = jnp.concatenate([act_l, jnp.repeat(contacts.active, ROWS_PER_CONTACT, axis=0)])
    slot_body = tuple(int(b) for b in contacts.body)
    k, b, imp = impedance(solref, solimp, pos, pm.timestep)
    R = jnp.maximum(invweight * (1.0 - imp) / imp, MJ_MINVAL)
    aref = -b * apply(pm, op, qvel, slot_body) - k * imp * pos
    D = jnp.where(in_effect, 1.0 / R, 0.0)
    weight = const(np.concatenate([np.ones(nl), np.tile(CONTACT_ROW_WEIGHT, ncon)]), dtype, pos)
    return ConstraintRows(op=op, D=D, aref=jnp.where(in_effect, aref, 0.0), pos=pos, R=R, in_effect=in_effect,
                          weight=weight, slot_body=slot_body)


def expand_to_mujoco(pm: PlanarModel, values: np.ndarray) -> np.ndarray:
    """Per-row values (..., nefc) in MuJoCo's layout: each contact's J_n row twice (numpy)."""
    nl = len(pm.limit_dofs)
    values = np.asarray(values)
    contact = values[..., nl:].reshape(values.shape[:-1] + (-1, ROWS_PER_CONTACT))
    contact = np.concatenate([contact, contact[..., 2:3]], axis=-1)
    return np.concatenate([values[..., :nl], contact.reshape(values.shape[:-1] + (-1,))], axis=-1)
