"""Capsule-floor collision and contact Jacobians (MuJoCo's mjc_PlaneCapsule and mj_jac). Batch-last
(layout.py), apart from point_jacobian and contact_jacobians (one cheetah).

Every capsule gives two candidate contacts, one per end sphere (the +axis end first, as MuJoCo
orders them); a candidate is a contact when its distance is negative. The slots are fixed
(2 per capsule) so that shapes do not depend on the state; `active` says which are real.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from .inertia import Frames
from .kinematics import rotate
from .layout import const, stack, take
from .model import PlanarModel


@struct.dataclass
class Contacts:
    pos: jax.Array  # (ncon, 2) contact point (x, z), midway between the surfaces
    dist: jax.Array  # (ncon,) signed distance, negative in penetration
    active: jax.Array  # (ncon,) bool
    tangent_x: jax.Array  # (ncon, 2) x-component of the frame's two tangent directions
    body: np.ndarray  # (ncon,) body of the capsule (static)


def contact_slots(pm: PlanarModel) -> tuple[np.ndarray, np.ndarray]:
    """Capsule index and end sign (+1, -1) of each contact slot."""
    capsule = np.repeat(np.arange(len(pm.capsule_geom)), 2)
    sign = np.tile(np.array([1.0, -1.0]), len(pm.capsule_geom))
    return capsule, sign


def capsule_floor_contacts(pm: PlanarModel, frames: Frames) -> Contacts:
    kin = frames.kin
    dtype = kin.body_xz.dtype
    capsule, sign = contact_slots(pm)
    angle = kin.capsule_angle
    axis_x, axis_z = rotate(angle, 0.0, 1.0)  # capsule axis = its local z
    half = const(pm.capsule_halflength, dtype, angle)
    sign = const(sign, dtype, angle)
    ends_x = take(kin.capsule_xz[:, 0], capsule) + sign * take(half * axis_x, capsule)
    ends_z = take(kin.capsule_xz[:, 1], capsule) + sign * take(half * axis_z, capsule)
    radius = const(pm.capsule_radius[capsule], dtype, ends_z)
    dist = ends_z - radius
    pos = stack([ends_x, ends_z - (radius + 0.5 * dist)], 1)
    # Contact frame (mjc_PlaneCapsule + mju_makeFrame): normal +z, first tangent the capsule axis
    # with its normal part removed, normalised: (sign of the axis' x, 0, 0), and (1, 0, 0) for
    # an exactly vertical capsule; second tangent = normal x first = (0, +-1, 0), which no dof
    # moves. (MJX switches to world y below |axis_x| = 0.5; MuJoCo C does not, and C is the
    # reference: the rows differ in order only.)
    first = jnp.where(take(axis_x, capsule) < 0, -1.0, 1.0).astype(dtype)
    second = jnp.zeros_like(first)
    return Contacts(pos=pos, dist=dist, active=dist < 0, tangent_x=stack([first, second], 1),
                    body=np.array(pm.capsule_body)[capsule])


def point_jacobian(pm: PlanarModel, frames: Frames, point: jax.Array, body: int) -> jax.Array:
    """(2, nv) translational Jacobian (x and z rows) of a point fixed to `body` (mj_jac)."""
    dtype = point.dtype
    mask = np.zeros(pm.nv)
    mask[list(pm.ancestors_dofs(body))] = 1.0
    offset = point - frames.origin
    w, vx, vz = frames.cdof[:, 0], frames.cdof[:, 1], frames.cdof[:, 2]
    jx = (vx + w * offset[1]) * jnp.asarray(mask, dtype)
    jz = (vz - w * offset[0]) * jnp.asarray(mask, dtype)
    return jnp.stack([jx, jz])


def contact_jacobians(pm: PlanarModel, frames: Frames, contacts: Contacts) -> jax.Array:
    """(ncon, 2, nv) Jacobians of the capsule point at each contact (the floor is fixed)."""
    return jnp.stack([point_jacobian(pm, frames, contacts.pos[i], int(contacts.body[i]))
                      for i in range(contacts.body.shape[0])])
