"""The CNN player of the no-limit paper: network, weights as arrays, training, batched play.

The network maps (state, candidate action) planes (`nlhe.encoding`) to the expected chip
gain of the hand divided by the buy-in, in [-1, 1]: two 5x5 convolutions of 32 filters, a 2x2 max
pool, two 5x5 convolutions of 64, a 2x2 max pool, a dense layer of 1024, dropout 0.5 and one tanh
output, ReLU everywhere else (`filters` and `kernel` are options: the paper's future work names
3x3 filters). At play time every legal (action, amount) is scored and the best is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from numba import njit
from torch import nn

from gameforge.engines.common.torch_arrays import load_arrays
from gameforge.engines.nlhe.encoding import (
    N_PLANES,
    SIZE,
    THERMO_CELLS,
    StateEncoding,
    encode_candidate,
    encode_state,
    thermo_count,
)
from gameforge.engines.nlhe.game import (
    ACTOR,
    CALL,
    FOLD,
    N_ACTS,
    RAISE,
    ROUND,
    SPENT,
    TableBatch,
    legal,
    raise_grid_size,
    raise_grid_value,
)


@dataclass(frozen=True)
class NetConfig:
    """Shape of the network."""

    filters: tuple[int, int] = (32, 64)
    kernel: int = 5
    dense: int = 1024
    dropout: float = 0.5


class PokerCNN(nn.Module):
    """conv-conv-pool-conv-conv-pool-dense-dropout-tanh, as in the paper (Figure 1)."""

    def __init__(self, config: NetConfig = NetConfig()):
        super().__init__()
        f1, f2 = config.filters
        pad = config.kernel // 2
        self.features = nn.Sequential(
            nn.Conv2d(N_PLANES, f1, config.kernel, padding=pad),
            nn.ReLU(),
            nn.Conv2d(f1, f1, config.kernel, padding=pad),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(f1, f2, config.kernel, padding=pad),
            nn.ReLU(),
            nn.Conv2d(f2, f2, config.kernel, padding=pad),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        side = SIZE // 2 // 2
        self.head = nn.Sequential(
            nn.Flatten(),
            nn.Linear(f2 * side * side, config.dense),
            nn.ReLU(),
            nn.Dropout(config.dropout),
            nn.Linear(config.dense, 1),
            nn.Tanh(),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Scores in [-1, 1], one per input."""
        return self.head(self.features(x)).squeeze(1)


def model_from_arrays(
    arrays: dict[str, np.ndarray], config: NetConfig, device: str = "cpu"
) -> PokerCNN:
    """A network in eval mode with the given weights."""
    return load_arrays(PokerCNN(config), arrays, device)


# ---------------------------------------------------------------------------------------------
# Training.


def make_optimiser(model: nn.Module) -> torch.optim.Optimizer:
    """The paper's optimiser: Adadelta with lr 1.0, rho 0.95, eps 1e-8."""
    return torch.optim.Adadelta(model.parameters(), lr=1.0, rho=0.95, eps=1e-8)


def train_epoch(
    model: PokerCNN,
    optimiser: torch.optim.Optimizer,
    batches: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    ids: np.ndarray,
    batch_size: int,
    seed: int,
    device: str = "cpu",
    on_batch: Callable[[int, float], None] | None = None,
) -> float:
    """One pass over `ids` in a seeded order with MSE loss; returns the mean training loss.

    `batches(ids)` returns the encoded planes and the targets of those sample ids. The order
    and dropout masks depend only on `seed`, so an epoch replays exactly after a resume.
    """
    torch.manual_seed(seed)
    model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]  # in place
    model.train()
    loss_fn = nn.MSELoss()
    order = np.random.default_rng(seed).permutation(ids)
    total = 0.0
    for b in range(0, len(order), batch_size):
        x, y = batches(np.sort(order[b : b + batch_size]))
        xt = torch.from_numpy(x).to(device).contiguous(memory_format=torch.channels_last)
        yt = torch.from_numpy(y).to(device)
        optimiser.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        optimiser.step()
        value = loss.item()
        total += value * len(y)
        if on_batch is not None:
            on_batch(len(y), value)
    return total / max(len(order), 1)


def evaluate_loss(
    model: PokerCNN,
    batches: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    ids: np.ndarray,
    batch_size: int,
    device: str,
) -> float:
    """Mean squared error over `ids` in eval mode (nan when there are none)."""
    if len(ids) == 0:
        return float("nan")
    model.eval()
    total = 0.0
    with torch.no_grad():
        for b in range(0, len(ids), batch_size):
            x, y = batches(ids[b : b + batch_size])
            pred = model(torch.from_numpy(x).to(device)).cpu().numpy()
            total += float(((pred - y) ** 2).sum())
    return total / len(ids)


# ---------------------------------------------------------------------------------------------
# Play.

MAX_CANDIDATES = 2 + 53  # fold, call, and one raise per distinct thermometer count


@njit(cache=True, nogil=True)
def expand_candidates(
    state: np.ndarray,
    tables: np.ndarray,
    stack: np.ndarray,
    step: int,
    small_blind: int,
    row: np.ndarray,
    kind: np.ndarray,
    raise_to: np.ndarray,
    added: np.ndarray,
) -> int:
    """Every legal (action, amount) of the listed tables at small-blind resolution.

    Raises whose chips encode identically (all sizes of 52 small blinds or more) are one
    candidate, the smallest of them, since the network cannot tell them apart.
    """
    n = 0
    for j in range(tables.shape[0]):
        t = tables[j]
        p = state[t, ACTOR]
        spent = state[t, SPENT + p]
        can_fold, call_to, can_raise, lo, hi = legal(state, t, stack)
        if can_fold:
            row[n], kind[n], raise_to[n], added[n] = j, FOLD, 0, 0
            n += 1
        row[n], kind[n], raise_to[n], added[n] = j, CALL, call_to, call_to - spent
        n += 1
        if can_raise:
            last = -1
            for g in range(raise_grid_size(lo, hi, step)):
                to = raise_grid_value(lo, hi, step, g)
                count = thermo_count(to - spent, small_blind)
                if count == last:
                    continue
                last = count
                row[n], kind[n], raise_to[n], added[n] = j, RAISE, to, to - spent
                n += 1
    return n


@njit(cache=True, nogil=True)
def encode_tables(
    out: np.ndarray,
    tables: np.ndarray,
    state: np.ndarray,
    cards: np.ndarray,
    history: np.ndarray,
    enc: StateEncoding,
) -> None:
    """State planes (0-30; the candidate planes stay zero) of the player to act on each table."""
    num_hole, num_suits, board_through, first, blind, small_blind, canonical = enc
    out[:] = 0.0
    for j in range(tables.shape[0]):
        t = tables[j]
        encode_state(
            out[j], cards[t], num_hole, num_suits, state[t, ACTOR], history[t], state[t, N_ACTS],
            state[t, ROUND], board_through, first, blind, small_blind, canonical,
        )  # fmt: skip


N_PATTERNS = 3 * (THERMO_CELLS + 1)  # (action type, thermometer count) of a candidate


class CnnPlayer:
    """Scores every legal action of every waiting table in large batches; plays the argmax.

    The first convolution is linear, so it is split: the state planes of a table go through it
    once, the two candidate planes take one of `N_PATTERNS` precomputed responses, and only the
    rest of the network runs per candidate (a third fewer multiply-adds than scoring each
    candidate's full planes; the tests check it against scoring the full planes).
    """

    def __init__(
        self,
        model: PokerCNN,
        canonical_suits: bool = False,
        device: str = "cpu",
        max_candidates: int = 8192,
    ):
        # channels-last convolutions run about 1.4x faster on CPU (oneDNN), same arithmetic.
        self.model = model.to(device).eval()
        self.model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
        self.canonical = canonical_suits
        self.device = device
        self.max_candidates = max_candidates
        self.decisions = 0
        self.scored = 0
        conv1 = self.model.features[0]
        assert isinstance(conv1, nn.Conv2d)
        self.conv1 = conv1
        planes = np.zeros((N_PATTERNS, N_PLANES, SIZE, SIZE), np.float32)
        for kind in range(3):
            for count in range(THERMO_CELLS + 1):
                encode_candidate(planes[kind * (THERMO_CELLS + 1) + count], kind, count, 1)
        with torch.no_grad():
            x = torch.from_numpy(planes).to(device)
            # The pattern responses carry no bias: the state half adds it once.
            self.patterns = nn.functional.conv2d(x, conv1.weight, None, padding=conv1.padding[0])

    def choose(self, batch: TableBatch, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(action kinds, raise-to sizes) for the listed tables."""
        row, kind, raise_to, scores = self.score(batch, tables)
        best = _argmax_per_row(row, scores, len(tables))
        self.decisions += len(tables)
        self.scored += len(row)
        return kind[best], raise_to[best]

    def score(
        self, batch: TableBatch, tables: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every candidate of the listed tables: (table position, kind, raise-to, score)."""
        r = batch.rules
        n = len(tables)
        cap = n * MAX_CANDIDATES
        row = np.empty(cap, np.int64)
        kind = np.empty(cap, np.int64)
        raise_to = np.empty(cap, np.int64)
        added = np.empty(cap, np.int64)
        m = expand_candidates(
            batch.state, tables, r.stack, r.small_blind, r.small_blind, row, kind, raise_to, added
        )
        row, kind, raise_to, added = row[:m], kind[:m], raise_to[:m], added[:m]
        pattern = kind * (THERMO_CELLS + 1) + np.minimum(added // r.small_blind, THERMO_CELLS)
        states = np.empty((n, N_PLANES, SIZE, SIZE), np.float32)
        encode_tables(
            states, tables, batch.state, batch.cards, batch.history, r.encoding(self.canonical)
        )
        scores = np.empty(m, np.float32)
        features = self.model.features
        with torch.inference_mode():
            s1 = self.conv1(torch.from_numpy(states).to(self.device))
            s1 = s1.contiguous(memory_format=torch.channels_last)  # gathers keep the layout
            rows = torch.from_numpy(row).to(self.device)
            pats = torch.from_numpy(pattern).to(self.device)
            for a in range(0, m, self.max_candidates):
                b = min(a + self.max_candidates, m)
                h = s1.index_select(0, rows[a:b])
                h.add_(self.patterns.index_select(0, pats[a:b]))
                h = features[1](h)
                out = self.model.head(features[2:](h)).squeeze(1)
                scores[a:b] = out.float().cpu().numpy()
        return row, kind, raise_to, scores


@njit(cache=True, nogil=True)
def _argmax_per_row(row: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    best = np.full(n, -1, dtype=np.int64)
    for c in range(row.shape[0]):
        j = row[c]
        if best[j] < 0 or scores[c] > scores[best[j]]:
            best[j] = c
    return best
