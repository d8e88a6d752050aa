"""What the user model holds true of one concept when words and graded answers disagree (pure).

Two kinds of evidence say whether a learner knows a concept: what they *said* (a stance: "I know X",
"X confuses me", from :mod:`graphmem.extraction.stances`) and how they *answered* (BKT mastery from
graded attempts, :mod:`graphmem.bkt`). The newer one wins — "X confused me in March" is overruled by
eight right answers in April, and a learner who mastered X in a quiz but says today "I'm lost with X" is
struggling again. Mastery in the middle band ("learning") settles nothing and leaves the stance and the
mention weight to decide, as before attempts existed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from graphmem.bkt import MasteryLevels
from graphmem.models import ConceptNode, Stance

Known = Literal["knows", "struggles"]

LEVELS = MasteryLevels()


@dataclass(frozen=True)
class Evidence:
    state: Known | None  # None: no decisive evidence either way
    source: Literal["mastery", "stance"] | None
    reason: str  # a short phrase for a block's reason and for explain; "" when state is None
    # The stance that newer mastery overruled (explain says so), if any.
    overruled: Stance | None = None


def mastery_phrase(node: ConceptNode) -> str:
    return (
        f"mastery {node.mastery:.2f} after {node.mastery_attempts} graded attempt"
        f"{'s' if node.mastery_attempts != 1 else ''} ({node.mastery_correct} right)"
    )


def evidence(node: ConceptNode, levels: MasteryLevels = LEVELS) -> Evidence:
    """The decisive evidence about ``node``: knows, struggles, or nothing decisive."""
    level = levels.level(node.mastery, node.mastery_attempts)
    stance = node.stance if node.stance in (Stance.knows, Stance.confused) else None
    if level in ("mastered", "low"):
        mastery_newer = (
            stance is None
            or node.stance_at is None
            or (node.mastery_at is not None and node.mastery_at >= node.stance_at)
        )
        if mastery_newer:
            state: Known = "knows" if level == "mastered" else "struggles"
            overruled = (
                stance if stance is not None and ((stance is Stance.confused) != (state == "struggles")) else None
            )
            reason = mastery_phrase(node)
            if overruled is Stance.confused:
                reason += "; newer than the user saying it confused them"
            elif overruled is Stance.knows:
                reason += "; newer than the user saying they know it"
            return Evidence(state, "mastery", reason, overruled)
    if stance is Stance.knows:
        return Evidence("knows", "stance", "user said they know it")
    if stance is Stance.confused:
        reason = "user said it confuses them"
        if level in ("mastered", "low"):
            reason += f" (newer than {mastery_phrase(node)})"
        return Evidence("struggles", "stance", reason)
    return Evidence(None, None, "")


def knows(node: ConceptNode) -> bool:
    return evidence(node).state == "knows"


def struggles(node: ConceptNode) -> bool:
    return evidence(node).state == "struggles"


def knowledge_stance(node: ConceptNode) -> Stance | None:
    """The node's stance as the block should mark it: ``confused`` when the user struggles by the
    decisive evidence (low mastery included), no ``confused`` once newer mastery overruled it."""
    state = evidence(node).state
    if state == "struggles":
        return Stance.confused
    if node.stance is Stance.confused:
        return None
    return node.stance
