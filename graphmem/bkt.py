"""Bayesian knowledge tracing (BKT), pure: one concept's mastery from graded attempts.

Corbett & Anderson's model: a learner either knows a concept or not. Before any attempt they know it
with probability ``prior``; after each attempt an unknown concept becomes known with probability
``learn`` (and, optionally, a known one is forgotten with probability ``forget``, the "BKT with
forgetting" variant). A learner who knows it still answers wrong with probability ``slip``; one who
does not still answers right with probability ``guess``.

For each attempt :func:`step` returns ``predicted`` — P(correct) *before* the attempt is applied, the
figure a next-attempt AUC is scored on — and the mastery after it (posterior given the answer, then the
learning / forgetting transition). No I/O, no state: the service keeps a concept's mastery on the
user's interest and calls these functions; :mod:`graphmem.kt_fit` estimates the parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class BKTParams:
    """One concept's BKT parameters (probabilities in [0, 1]).

    Defaults follow common tutoring-system practice (a low prior, a 10 % chance to learn per
    practice opportunity, guess 0.2 as on a multiple-choice item, slip 0.1, no forgetting); a tenant
    replaces them per concept with fitted values (``POST /v1/kt/fit``).
    """

    prior: float = 0.3
    learn: float = 0.1
    guess: float = 0.2
    slip: float = 0.1
    forget: float = 0.0

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"BKT {name} must be in [0, 1], got {value!r}")
        if self.guess + self.slip >= 1.0:
            # guess + slip >= 1 makes a right answer evidence of *not* knowing (a degenerate model).
            raise ValueError(f"BKT guess + slip must be below 1 (got {self.guess} + {self.slip})")

    def to_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None, default: BKTParams | None = None) -> BKTParams:
        """Params from a stored mapping; missing keys take ``default``'s values."""
        base = (default or cls()).to_dict()
        if values:
            base.update({k: float(v) for k, v in values.items() if k in base and v is not None})
        return cls(**base)


@dataclass(frozen=True)
class Step:
    predicted: float  # P(correct) before the attempt
    mastery: float  # P(known) after the attempt (and the transition)


def p_correct(mastery: float, params: BKTParams) -> float:
    """P(a right answer) for a learner who knows the concept with probability ``mastery``."""
    return mastery * (1.0 - params.slip) + (1.0 - mastery) * params.guess


def posterior(mastery: float, correct: bool, params: BKTParams) -> float:
    """P(known | the answer), before the learning transition."""
    if correct:
        num = mastery * (1.0 - params.slip)
        den = num + (1.0 - mastery) * params.guess
    else:
        num = mastery * params.slip
        den = num + (1.0 - mastery) * (1.0 - params.guess)
    return num / den if den > 0.0 else mastery


def transition(known: float, params: BKTParams) -> float:
    """P(known) at the next opportunity: learn if unknown, forget if known."""
    return known * (1.0 - params.forget) + (1.0 - known) * params.learn


def step(mastery: float, correct: bool, params: BKTParams) -> Step:
    """Applies one graded attempt to the current mastery."""
    return Step(p_correct(mastery, params), transition(posterior(mastery, correct, params), params))


def trace(answers: Iterable[bool], params: BKTParams, start: float | None = None) -> list[Step]:
    """Steps over a sequence of answers, from ``start`` (default: the prior)."""
    mastery = params.prior if start is None else start
    out: list[Step] = []
    for correct in answers:
        s = step(mastery, bool(correct), params)
        out.append(s)
        mastery = s.mastery
    return out


@dataclass(frozen=True)
class MasteryLevels:
    """Where mastery counts as evidence: at or above ``mastered`` the concept is known (0.95 is the
    classic BKT mastery criterion); below ``low`` (after at least ``min_attempts``) it is a gap."""

    mastered: float = 0.95
    low: float = 0.4
    min_attempts: int = 1

    def level(self, mastery: float | None, attempts: int) -> str | None:
        """ "mastered", "low", "learning", or None when there is no evidence."""
        if mastery is None or attempts < self.min_attempts:
            return None
        if mastery >= self.mastered:
            return "mastered"
        if mastery < self.low:
            return "low"
        return "learning"
