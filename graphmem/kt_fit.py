"""Fitting one concept's BKT parameters from answer sequences with pyBKT's EM (no I/O).

pyBKT (https://github.com/CAHLR/pyBKT, MIT) is the reference BKT implementation. Its high-level
``pyBKT.models.Model`` cannot be imported next to scikit-learn 1.9 (its metric discovery calls a
private scikit-learn function with plain lists and dies on ``AttributeError``), and it wants pandas
frames; so this module drives the same code ``Model.fit`` drives — ``pyBKT.generate.random_model_uni``
for a random start and ``pyBKT.fit.EM_fit.EM_fit`` for expectation-maximisation — with
``Model._fit``'s restarts (keep the start with the best log-likelihood), with a one-line NumPy 2 shim
(:func:`_em_fit_module`). The wheel on PyPI is pure
Python (py3-none-any; the C++ extension is not shipped), so the E-step is a Python loop: see the fit
timings in eval/results/kt.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from graphmem.bkt import BKTParams


@dataclass(frozen=True)
class ConceptFit:
    params: BKTParams
    log_likelihood: float
    attempts: int
    sequences: int
    iterations: int


def pybkt_data(sequences: Sequence[Sequence[bool]]) -> dict[str, np.ndarray]:
    """pyBKT's data layout: one row of observations (1 wrong, 2 right), 1-based starts, lengths."""
    seqs = [s for s in sequences if len(s) > 0]
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    starts = np.ones(len(seqs), dtype=np.int64)
    if len(seqs) > 1:
        starts[1:] = 1 + np.cumsum(lengths)[:-1]
    flat = np.fromiter((2 if x else 1 for s in seqs for x in s), dtype=np.int32, count=int(lengths.sum()))
    return {
        "data": flat.reshape(1, -1),
        "starts": starts,
        "lengths": lengths,
        "resources": np.ones(flat.shape[0], dtype=np.int64),
    }


def fit_concept(
    sequences: Sequence[Sequence[bool]], *, forgets: bool = False, num_fits: int = 3, seed: int = 0
) -> ConceptFit:
    """EM fit of prior, learn, guess, slip (and forget when ``forgets``) over per-learner sequences.

    Deterministic for a given ``seed``. The fitted values are clipped into a valid BKT model
    (guess + slip < 1) — EM on few attempts can land on a degenerate one where a right answer is
    evidence of *not* knowing.
    """
    from pyBKT.generate import random_model_uni

    EM_fit = _em_fit_module()
    data = pybkt_data(sequences)
    n = int(data["lengths"].sum())
    if n == 0:
        raise ValueError("no attempts to fit")
    rand = np.random.RandomState(seed)
    best = None
    best_ll = -np.inf
    best_iters = 0
    for _ in range(max(1, num_fits)):
        model = random_model_uni.random_model_uni(1, 1, rand=rand)
        if forgets:
            model["forgets"] = rand.uniform(size=model["forgets"].shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            # parallel=False: a multiprocessing pool per E-step inside an API process is worse than serial.
            fitted, lls = EM_fit.EM_fit(model, data, parallel=False)
        ll = float(lls[-1][0])
        if ll > best_ll:
            best, best_ll, best_iters = fitted, ll, len(lls)
    assert best is not None
    prior = float(best["pi_0"][1][0])
    learn = float(best["As"][0, 1, 0])
    forget = float(best["As"][0, 0, 1]) if forgets else 0.0
    guess = float(best["guesses"][0])
    slip = float(best["slips"][0])
    params = _valid(prior, learn, guess, slip, forget)
    return ConceptFit(params, best_ll, n, len(data["lengths"]), best_iters)


def _em_fit_module():
    """pyBKT's EM module, made to work with NumPy 2.

    pyBKT 1.4.3 stores the E-step's log-likelihood, a (1, 1) array, into one element of an array;
    NumPy 2 refuses that ("setting an array element with a sequence"). The E-step is wrapped once so
    that it returns the log-likelihood as a float — the same number; nothing else changes.
    """
    from pyBKT.fit import EM_fit

    if not getattr(EM_fit.run, "_graphmem_numpy2", False):
        original = EM_fit.run

        def run(*args, **kwargs):
            result = original(*args, **kwargs)
            result["total_loglike"] = float(np.asarray(result["total_loglike"]).reshape(-1)[0])
            return result

        run._graphmem_numpy2 = True  # type: ignore[attr-defined]
        EM_fit.run = run
    return EM_fit


def _valid(prior: float, learn: float, guess: float, slip: float, forget: float) -> BKTParams:
    def clip(x: float) -> float:
        return float(min(1.0, max(0.0, x))) if np.isfinite(x) else 0.0

    prior, learn, guess, slip, forget = (clip(x) for x in (prior, learn, guess, slip, forget))
    if guess + slip >= 0.999:
        # Shrink both toward zero in proportion, keeping their ratio.
        scale = 0.99 / (guess + slip)
        guess, slip = guess * scale, slip * scale
    return BKTParams(prior=prior, learn=learn, guess=guess, slip=slip, forget=forget)
