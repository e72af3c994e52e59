"""The discrete action space both engines share (111 actions). Slots: 0 = Active, 1-3 = Bench;
`target` is the slot an attack, Ability or Trainer aims at (effects.TARGETS says whose), 0 when it
aims at nothing. A copying attack (Ditto's Copy Anything) is used through COPY, which names the
opponent's Pokemon, its attack and that attack's target in one action (the action space has no
second decision within an action)."""

from __future__ import annotations

import dataclasses

HAND_SLOTS = 10

END_TURN = 0  # end the turn (in setup: done placing)
ATTACH = 1  # + slot (4): attach the current Energy
PLAY = 5  # + 4 * hand index + target (40): a Basic or Fossil to the Bench (setup: Active first), an
#           evolution onto slot `target`, or a Trainer aimed at `target`
RETREAT = 45  # + bench slot - 1 (3)
ABILITY = 48  # + 4 * slot + target (16)
ATTACK = 64  # + 4 * attack index + target (8)
DISCARD_FOSSIL = 72  # + slot (4)
PROMOTE = 76  # + bench slot - 1 (3): a new Active (after a Knock Out, or a switch the opponent forced)
COPY = 79  # + 8 * opponent's slot + 4 * that Pokemon's attack index + target (32): the Active's copying
#            attack uses that attack as its own (Copy Anything)
NUM_ACTIONS = 111


@dataclasses.dataclass(frozen=True)
class Action:
    kind: str  # end | attach | play | retreat | ability | attack | discard_fossil | promote | copy
    slot: int = 0  # attach/ability/discard_fossil: own slot; retreat/promote: bench slot; play: hand index;
    #                attack: attack index; copy: the opponent's slot whose attack is copied
    target: int = 0
    index: int = 0  # copy: the attack index on the opponent's Pokemon


def decode(action: int) -> Action:
    """The Action an action number stands for; ValueError outside [0, NUM_ACTIONS)."""
    if isinstance(action, int) and 0 <= action < NUM_ACTIONS:
        # The legal mask decodes all 111 actions at every step (a fifth of the reference's time in
        # L3 when built anew); an Action is frozen, so the one built at import serves every call.
        return _DECODED[action]
    return _decode(action)


def _decode(action: int) -> Action:
    action = int(action)
    if action == END_TURN:
        return Action("end")
    if ATTACH <= action < PLAY:
        return Action("attach", action - ATTACH)
    if PLAY <= action < RETREAT:
        return Action("play", (action - PLAY) // 4, (action - PLAY) % 4)
    if RETREAT <= action < ABILITY:
        return Action("retreat", action - RETREAT + 1)
    if ABILITY <= action < ATTACK:
        return Action("ability", (action - ABILITY) // 4, (action - ABILITY) % 4)
    if ATTACK <= action < DISCARD_FOSSIL:
        return Action("attack", (action - ATTACK) // 4, (action - ATTACK) % 4)
    if DISCARD_FOSSIL <= action < PROMOTE:
        return Action("discard_fossil", action - DISCARD_FOSSIL)
    if PROMOTE <= action < COPY:
        return Action("promote", action - PROMOTE + 1)
    if COPY <= action < NUM_ACTIONS:
        return Action("copy", (action - COPY) // 8, (action - COPY) % 4, (action - COPY) // 4 % 2)
    raise ValueError(f"action must be an integer in [0, {NUM_ACTIONS}), got {action}")


_DECODED = tuple(_decode(number) for number in range(NUM_ACTIONS))


def encode(kind: str, slot: int = 0, target: int = 0, index: int = 0) -> int:
    if kind == "end":
        return END_TURN
    if kind == "attach":
        return ATTACH + slot
    if kind == "play":
        return PLAY + 4 * slot + target
    if kind == "retreat":
        return RETREAT + slot - 1
    if kind == "ability":
        return ABILITY + 4 * slot + target
    if kind == "attack":
        return ATTACK + 4 * slot + target
    if kind == "discard_fossil":
        return DISCARD_FOSSIL + slot
    if kind == "promote":
        return PROMOTE + slot - 1
    if kind == "copy":
        return COPY + 8 * slot + 4 * index + target
    raise ValueError(f"unknown action kind {kind!r}")
