"""The Hearts risk model: one nu-SVR per (trick, seat in the trick) predicting DegSQ.

DegSQ is +1 when the player takes Q♠ in this or a later trick, else -1. Each group's training set
takes up to `per_label` samples of each label (the rarer label is kept whole and the other
undersampled to the same count when it has fewer), features are scaled to [-1, 1] per column as
LIBSVM's svm-scale does (constant columns map to 0), and scikit-learn's `NuSVR` (LIBSVM inside)
fits an RBF model. A model is kept as arrays (support vectors, dual coefficients, intercept,
gamma, scaling bounds), never as a pickle; `hearts.learner.svr_predict` evaluates it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class SvrModel:
    """One group's fitted model as arrays."""

    support: np.ndarray  # [n_sv, n_features], scaled
    dual: np.ndarray  # [n_sv]
    intercept: float
    gamma: float
    lo: np.ndarray  # [n_features] scaling bounds
    hi: np.ndarray


def balanced_sample(labels: np.ndarray, per_label: int, rng: np.random.Generator) -> np.ndarray:
    """Indices with equal numbers of +1 and -1 labels, at most `per_label` of each."""
    pos = np.flatnonzero(labels > 0)
    neg = np.flatnonzero(labels <= 0)
    n = min(per_label, len(pos), len(neg))
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    take = np.concatenate([rng.choice(pos, n, replace=False), rng.choice(neg, n, replace=False)])
    return np.sort(take)


def scale(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """svm-scale to [-1, 1] with the given bounds; constant columns become 0."""
    span = hi - lo
    safe = np.where(span > 0, span, 1.0)
    return np.where(span > 0, -1.0 + 2.0 * (x - lo) / safe, 0.0)


def fit(
    features: np.ndarray,
    labels: np.ndarray,
    per_label: int,
    nu: float,
    c: float,
    gamma: float,
    seed: int,
) -> SvrModel | None:
    """Fit one group's nu-SVR on a balanced sample; None when a label is missing."""
    from sklearn.svm import NuSVR

    idx = balanced_sample(labels, per_label, np.random.default_rng(seed))
    if len(idx) == 0:
        return None
    x = features[idx].astype(np.float64)
    y = labels[idx].astype(np.float64)
    lo, hi = x.min(axis=0), x.max(axis=0)
    model = NuSVR(kernel="rbf", nu=nu, C=c, gamma=gamma, cache_size=500)
    model.fit(scale(x, lo, hi), y)
    return SvrModel(
        support=np.asarray(model.support_vectors_, dtype=np.float64),
        dual=np.asarray(model.dual_coef_[0], dtype=np.float64),
        intercept=float(model.intercept_[0]),
        gamma=float(gamma),
        lo=lo,
        hi=hi,
    )


def check_rows(
    labels: np.ndarray, per_label: int, seed: int, n_per_label: int
) -> tuple[np.ndarray, np.ndarray]:
    """Rows to check a fitted model on, and whether each was in its training sample: up to
    `n_per_label` of each label outside the sample `fit(..., per_label, ..., seed)` trained on
    (held out), and as many of each label inside it. `fit` draws its balanced sample first from
    `default_rng(seed)`, repeated here; the picks use streams of their own."""
    trained = balanced_sample(labels, per_label, np.random.default_rng(seed))
    inside = np.zeros(len(labels), bool)
    inside[trained] = True
    picks = []
    for stream, pool in ((1, np.flatnonzero(~inside)), (2, trained)):
        rng = np.random.default_rng([seed, stream])
        for part in (pool[labels[pool] > 0], pool[labels[pool] <= 0]):
            picks.append(rng.choice(part, min(n_per_label, len(part)), replace=False))
    rows = np.sort(np.concatenate(picks)).astype(np.int64)
    return rows, inside[rows]


def predict(model: SvrModel, x: np.ndarray, block: int = 128) -> np.ndarray:
    """The model's predictions for raw feature rows x: svm-scale, then the RBF expansion
    (in blocks of rows, so memory stays rows x support vectors of one block)."""
    out = np.zeros(len(x))
    norms = (model.support**2).sum(axis=1)
    for start in range(0, len(x), block):
        z = scale(np.asarray(x[start : start + block], np.float64), model.lo, model.hi)
        dist = (z**2).sum(axis=1)[:, None] + norms[None, :] - 2.0 * z @ model.support.T
        out[start : start + block] = (
            model.intercept + np.exp(-model.gamma * np.maximum(dist, 0)) @ model.dual
        )
    return out


def pack(
    models: list[SvrModel | None], n_features: int, fallback: list[float]
) -> dict[str, np.ndarray]:
    """Concatenate group models into the flat arrays the kernels take.

    A missing model (a group where one label never occurs) predicts the constant `fallback[g]`
    (that label, or -1 without data).
    """
    counts = [0 if m is None else len(m.dual) for m in models]
    start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    support = np.zeros((int(start[-1]), n_features))
    dual = np.zeros(int(start[-1]))
    intercept = np.array(fallback, dtype=np.float64)
    gamma = np.zeros(len(models))
    lo = np.zeros((len(models), n_features))
    hi = np.zeros((len(models), n_features))
    for g, m in enumerate(models):
        if m is None:
            continue
        support[start[g] : start[g + 1]] = m.support
        dual[start[g] : start[g + 1]] = m.dual
        intercept[g] = m.intercept
        gamma[g] = m.gamma
        lo[g] = m.lo
        hi[g] = m.hi
    return {
        "support": support,
        "dual": dual,
        "sv_start": start,
        "intercept": intercept,
        "gamma": gamma,
        "lo": lo,
        "hi": hi,
    }
