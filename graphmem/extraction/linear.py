"""Inference of the small linear models that ship as JSON weights (no scikit-learn at run time).

``softmax``: a multinomial logistic regression's class probabilities for sparse features — the English
and Chinese stance models (``stance_model.py``, ``zh/stance_model.py``) share it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["softmax"]


def softmax(weights: Mapping[str, Sequence[float]], feats: Mapping[str, float], bias: Sequence[float]) -> list[float]:
    """P(class) for each class: softmax of ``bias`` + Σ feature value × its weights (unknown features add
    nothing). Features are summed in ``feats``' order, so a model gives the same floats in every process."""
    z = list(bias)
    for f, v in feats.items():
        w = weights.get(f)
        if w is not None:
            for k in range(len(z)):
                z[k] += w[k] * v
    top = max(z)
    e = [math.exp(x - top) for x in z]
    s = sum(e)
    return [x / s for x in e]
