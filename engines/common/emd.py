"""1-D Earth Mover's Distance between histograms on equally spaced bins, with numba kernels.

For two histograms of equal mass on bins ``0 .. B-1`` with ground distance ``|i - j|`` (in units
of bins), EMD equals the L1 distance between their cumulative histograms:
``EMD(a, b) = sum_i |A_i - B_i|`` with ``A = cumsum(a)``, ``B = cumsum(b)``. Every function here
normalises each histogram to mass 1 first, so callers may pass raw counts.

EMD k-means (:mod:`common.kmeans`, metric ``"emd"``) works on the normalised CDF rows that
:func:`cumulative` returns: the assignment step is L1 between CDF rows (= EMD). A centroid is
either the mean of its CDF rows (``centroid="mean"``: the CDF of the mean histogram, the
standard "EMD k-means" of poker abstraction, Johanson et al., 2013, "Evaluating state-space
abstractions in extensive-form games"), or their per-bin median (``centroid="median"``), which
is the CDF minimising the members' summed EMD, so Lloyd's objective cannot rise; the mean does
not minimise it. The per-bin medians of CDFs are a CDF again. :func:`histogram_from_cdf` turns
CDF centroids back into histograms.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def _emd_pair(a: np.ndarray, b: np.ndarray) -> float:
    sa = 0.0
    sb = 0.0
    for i in range(a.shape[0]):
        sa += a[i]
        sb += b[i]
    acc = 0.0
    cum = 0.0
    # The last CDF entry is 1 for both, so it never contributes.
    for i in range(a.shape[0] - 1):
        cum += a[i] / sa - b[i] / sb
        acc += abs(cum)
    return acc


@njit(cache=True, nogil=True)
def _cumulative_rows(X: np.ndarray, out: np.ndarray) -> int:
    """Normalised CDF of each row into ``out``; returns the number of rows with mass <= 0."""
    bad = 0
    for i in range(X.shape[0]):
        total = 0.0
        for j in range(X.shape[1]):
            total += X[i, j]
        if not total > 0.0:
            bad += 1
            continue
        cum = 0.0
        for j in range(X.shape[1]):
            cum += X[i, j]
            # Dividing the float64 running sum keeps the last entry exactly 1.0 (total / total).
            out[i, j] = cum / total
    return bad


@njit(cache=True, nogil=True)
def _l1_matrix(A: np.ndarray, B: np.ndarray, out: np.ndarray) -> None:
    for i in range(A.shape[0]):
        for j in range(B.shape[0]):
            acc = 0.0
            for t in range(A.shape[1]):
                acc += abs(A[i, t] - B[j, t])
            out[i, j] = acc


def _check_hist(h: np.ndarray, name: str) -> np.ndarray:
    if h.ndim != 1 or h.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty 1-D histogram, got shape {h.shape}")
    if np.any(h < 0) or not h.sum() > 0:
        raise ValueError(f"{name} must be non-negative with positive mass")
    return h


def emd_1d(a: np.ndarray, b: np.ndarray) -> float:
    """EMD (in bins) between two 1-D histograms on the same bins, each normalised to mass 1."""
    a64 = _check_hist(np.ascontiguousarray(a, dtype=np.float64), "a")
    b64 = _check_hist(np.ascontiguousarray(b, dtype=np.float64), "b")
    if a64.shape != b64.shape:
        raise ValueError(f"histograms differ in length: {a64.shape[0]} and {b64.shape[0]}")
    return float(_emd_pair(a64, b64))


def cumulative(X: np.ndarray, dtype: type = np.float32) -> np.ndarray:
    """Normalised CDF rows ``(n, bins)`` of histograms ``X`` (any numeric dtype); last column 1."""
    arr = np.asarray(X)
    if arr.ndim == 1:
        return cumulative(arr[None, :], dtype)[0]
    if arr.ndim != 2:
        raise ValueError(f"expected (n, bins) histograms, got shape {arr.shape}")
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"histograms must be numeric, got {arr.dtype}")
    if arr.dtype.kind in "if" and arr.size and np.min(arr) < 0:
        raise ValueError("histograms must be non-negative")
    out: np.ndarray = np.empty(arr.shape, dtype=dtype)
    bad = _cumulative_rows(np.ascontiguousarray(arr), out)
    if bad:
        raise ValueError(f"{bad} histogram rows have no positive mass")
    return out


def histogram_from_cdf(C: np.ndarray) -> np.ndarray:
    """Histograms (mass 1) from CDF rows, e.g. EMD k-means centroids; inverse of cumulative."""
    arr = np.asarray(C, dtype=np.float64)
    return np.diff(arr, axis=-1, prepend=0.0)


def emd_matrix(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """EMD (in bins) between every row of ``X`` (n, bins) and of ``Y`` (m, bins): (n, m) float64."""
    A = cumulative(np.atleast_2d(X), np.float64)
    B = cumulative(np.atleast_2d(Y), np.float64)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"histograms differ in length: {A.shape[1]} and {B.shape[1]}")
    out = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
    _l1_matrix(A, B, out)
    return out
