"""The CNN player of the no-limit paper: network, weights as arrays, training, batched play.

The network maps (state, candidate action) planes (`nlhe.encoding`) to the expected chip
gain of the hand divided by the buy-in, in [-1, 1]: two 5x5 convolutions of 32 filters, a 2x2 max
pool, two 5x5 convolutions of 64, a 2x2 max pool, a dense layer of 1024, dropout 0.5 and one tanh
output, ReLU everywhere else (`filters` and `kernel` are options: the paper's future work names
3x3 filters). At play time every legal (action, amount) is scored and the best is taken.
"""

from __future__ import annotations

import copy
import hashlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from numba import njit
from torch import nn

from gameforge.engines.common.torch_arrays import load_arrays
from gameforge.engines.nlhe.encoding import (
    CAND_TYPE,
    COL0,
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


@dataclass(frozen=True)
class Placement:
    """Where a training pass runs: the torch device, and whether the forward and backward
    passes run under bfloat16 autocast (the weights and the optimiser stay float32)."""

    device: str = "cpu"
    bfloat16: bool = False


def train_epoch(
    model: PokerCNN,
    optimiser: torch.optim.Optimizer,
    batches: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    ids: np.ndarray,
    batch_size: int,
    seed: int,
    placement: Placement = Placement(),
    on_batch: Callable[[int, float], None] | None = None,
) -> float:
    """One pass over `ids` in a seeded order with MSE loss; returns the mean training loss.

    `batches(ids)` returns the encoded planes and the targets of those sample ids. The order
    and dropout masks depend only on `seed`, so an epoch replays exactly after a resume.
    """
    device, bfloat16 = placement.device, placement.bfloat16
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
        with torch.autocast(xt.device.type, torch.bfloat16, enabled=bfloat16):
            loss = loss_fn(model(xt).float(), yt)
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
                if count == THERMO_CELLS:
                    break  # every larger size encodes alike: the walk ends at ~53, not the stack
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
    out[:] = 0.0
    for j in range(tables.shape[0]):
        t = tables[j]
        encode_state(
            out[j], cards[t], state[t, ACTOR], history[t], state[t, N_ACTS], state[t, ROUND], enc
        )


N_PATTERNS = 3 * (THERMO_CELLS + 1)  # (action type, thermometer count) of a candidate
MEMO_LIMIT = 1 << 18  # preflop decisions a player remembers
MEMO_KEY_BYTES = 16  # a decision's blake2b digest
MEMORY_FIELDS = ("memo_keys", "memo_offsets", "counters")  # what `CnnPlayer.memory` saves
MEMO_ENTRY_BYTES = 128  # one remembered decision: its digest as a dict key, an offset
Precision = Literal["float32", "bfloat16-checked", "bfloat16"]
PRECISIONS: tuple[str, ...] = ("float32", "bfloat16-checked", "bfloat16")
# bfloat16-checked rescores in float32 every candidate within this of its decision's best
# bfloat16 score. The float32 argmax is among them whenever no score is off by more than half
# of it; a trained network of the paper's shape was off by at most 0.0033 (BENCHMARKS).
CHECK_MARGIN = 0.01


@dataclass(frozen=True)
class _Crop:
    """Which columns of the second convolution depend on a candidate at all.

    Every plane is zero outside its 13x4 card matrix (columns COL0..COL0+3), so a first-layer
    response more than `pad1` columns away from it is the bias alone, and a second-layer
    response more than `pad1 + pad2` away is the same for every input. After the pool only
    the columns `pooled` differ between candidates: the second convolution is computed on
    those (from first-layer columns `first`), the others are copied from a zero input's maps.
    """

    first: slice  # first-layer columns the second convolution reads
    pooled: slice  # pooled columns that depend on the input

    @staticmethod
    def of(pad1: int, pad2: int) -> _Crop | None:
        """The crop for the two convolutions' paddings; None where the varying columns would
        need first-layer columns past the plane's edge (kernels of 7 and more): no saving."""
        lo = (COL0 - pad1 - pad2) // 2
        hi = (COL0 + 3 + pad1 + pad2) // 2
        first_lo, first_hi = 2 * lo - pad2, 2 * hi + 1 + pad2
        if first_lo < 0 or first_hi > SIZE - 1:
            return None
        return _Crop(slice(first_lo, first_hi + 1), slice(lo, hi + 1))


class CnnPlayer:
    """Scores every legal action of every waiting table in large batches; plays the argmax.

    Three shortcuts, each exact (the tests compare with scoring every candidate's full planes):

    - The first convolution is linear, so it is split: the state planes of a table go through
      it once, the two candidate planes take one of `N_PATTERNS` precomputed responses.
    - The second convolution runs only on the columns a candidate can change (`_Crop`): 12 of
      17 output columns for 5x5 filters, 8 for 3x3.
    - A preflop decision seen before (same state planes, same candidate list) is answered
      from memory: the network is fixed, so its argmax is too. Preflop states repeat (about
      one in four of 500,000 heuristic preflop decisions is new); later streets almost never.

    `precision` "bfloat16" runs the network after its first layer in bfloat16 (about 2x on a
    CPU with AVX512_BF16; a decision whose best candidates score within the rounding of each
    other may go the other way); "bfloat16-checked" then rescores in float32 the candidates
    within `CHECK_MARGIN` of each decision's best, so it plays as float32 does whenever no
    bfloat16 score is off by more than half the margin.
    """

    def __init__(
        self,
        model: PokerCNN,
        canonical_suits: bool = False,
        device: str = "cpu",
        max_candidates: int = 8192,
        remember: bool = True,
        compiled: bool = False,
        precision: Precision = "float32",
    ):
        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r}: one of {', '.join(PRECISIONS)}")
        # channels-last convolutions run about 1.4x faster on CPU (oneDNN), same arithmetic.
        self.model = model.to(device).eval()
        self.model.to(memory_format=torch.channels_last)  # type: ignore[call-overload]
        self.canonical = canonical_suits
        self.device = device
        self.max_candidates = max_candidates
        self.decisions = 0
        self.scored = 0
        self.remembered = 0
        self.memo: dict[bytes, int] | None = {} if remember else None
        conv1 = self.model.features[0]
        conv2 = self.model.features[2]
        assert isinstance(conv1, nn.Conv2d) and isinstance(conv2, nn.Conv2d)
        self.conv1 = conv1
        self.crop = _Crop.of(int(conv1.padding[0]), int(conv2.padding[0]))
        planes = np.zeros((N_PATTERNS, N_PLANES, SIZE, SIZE), np.float32)
        for kind in range(3):
            for count in range(THERMO_CELLS + 1):
                encode_candidate(planes[kind * (THERMO_CELLS + 1) + count], kind, count, 1)
        with torch.no_grad():
            x = torch.from_numpy(planes).to(device)
            # The pattern responses carry no bias: the state half adds it once.
            patterns = nn.functional.conv2d(x, conv1.weight, None, padding=conv1.padding[0])
            self.patterns = self._first_columns(patterns)
            zero = torch.zeros((1, N_PLANES, SIZE, SIZE), device=device)
            self.zero_pooled = self.model.features[:5](zero)  # the columns no input changes
        self.precision = precision
        # the network after its first layer, with its constant pooled columns, by input dtype
        self._nets = {torch.float32: (self.model, self.zero_pooled)}
        if precision != "float32":
            low = copy.deepcopy(self.model).to(torch.bfloat16)
            self._nets[torch.bfloat16] = (low, self.zero_pooled.to(torch.bfloat16))
        self.rescored = 0  # candidates bfloat16-checked scored again in float32
        # Compiled (inductor, weights frozen): ReLUs and pools fused into their neighbours.
        # Scores change in the last bits only; compiling costs 10-20 s once per player.
        self._rest: Callable[..., torch.Tensor] = self._rest_of_network
        if compiled:
            self._rest = torch.compile(
                self._rest_of_network, dynamic=True, options={"freezing": True}
            )

    def forget(self) -> None:
        """Empty the memory of preflop decisions, so that a match's decisions never depend
        on what this player scored before it (scores move with batching in the last bits)."""
        if self.memo is not None:
            self.memo.clear()

    def memory(self) -> dict[str, np.ndarray]:
        """The remembered preflop decisions and the counters, as arrays for a checkpoint."""
        memo = self.memo or {}
        keys = np.frombuffer(b"".join(memo), np.uint8).reshape(len(memo), MEMO_KEY_BYTES)
        return {
            "memo_keys": keys,
            "memo_offsets": np.fromiter(memo.values(), np.int64, len(memo)),
            "counters": np.array([self.decisions, self.scored, self.remembered], np.int64),
        }

    def recall(self, saved: dict[str, np.ndarray]) -> None:
        """Continue from what `memory` saved: the same decisions remembered, in the same order."""
        if self.memo is not None:
            keys = saved["memo_keys"]
            self.memo = dict(zip((k.tobytes() for k in keys), saved["memo_offsets"].tolist()))
        self.decisions, self.scored, self.remembered = (int(c) for c in saved["counters"])

    def _first_columns(self, maps: torch.Tensor) -> torch.Tensor:
        """The first-layer columns the second convolution reads, channels-last."""
        if self.crop is not None:
            maps = maps[:, :, :, self.crop.first]
        return maps.contiguous(memory_format=torch.channels_last)

    def choose(self, batch: TableBatch, tables: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(action kinds, raise-to sizes) for the listed tables."""
        row, kind, raise_to, added, states = self._candidates(batch, tables)
        pattern = self._patterns(added, kind, batch.rules.small_blind)
        n = len(tables)
        start = np.searchsorted(row, np.arange(n + 1))
        offset = np.full(n, -1, np.int64)  # the best candidate's place in its table's list
        first: dict[bytes, int] = {}  # new preflop decisions, by key: the table scoring it
        same: dict[int, int] = {}  # tables whose decision another table here scores
        if self.memo is not None:
            for j in np.flatnonzero(batch.state[tables, ROUND] == 0):
                key = _memo_key(states[j], pattern[start[j] : start[j + 1]])
                known = self.memo.get(key)
                if known is not None:
                    offset[j] = known
                elif key in first:
                    same[int(j)] = first[key]
                else:
                    first[key] = int(j)
        need = offset < 0
        need[list(same)] = False
        todo = np.flatnonzero(need)
        if len(todo):
            pick = np.flatnonzero(need[row])
            local = (np.cumsum(need) - 1)[row[pick]]
            scores = self._score(states[todo], local, pattern[pick])
            offset[todo] = pick[_argmax_per_row(local, scores, len(todo))] - start[todo]
            self.scored += len(pick)
        for follower, scorer in same.items():
            offset[follower] = offset[scorer]
        if self.memo is not None:
            for key, scorer in first.items():
                if len(self.memo) >= MEMO_LIMIT:
                    break
                self.memo[key] = int(offset[scorer])
        self.remembered += n - len(todo)
        best = start[:n] + offset
        self.decisions += n
        return kind[best], raise_to[best]

    def score(
        self, batch: TableBatch, tables: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every candidate of the listed tables: (table position, kind, raise-to, score)."""
        row, kind, raise_to, added, states = self._candidates(batch, tables)
        pattern = self._patterns(added, kind, batch.rules.small_blind)
        return row, kind, raise_to, self._score(states, row, pattern)

    def reference_score(
        self, batch: TableBatch, tables: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """`score` without its shortcuts: every candidate's full 33 planes through the plain
        network, as the paper scores them (the reference the tests hold `score` to)."""
        row, kind, raise_to, added, states = self._candidates(batch, tables)
        small_blind = batch.rules.small_blind
        scores = np.empty(len(row), np.float32)
        with torch.inference_mode():
            for a in range(0, len(row), self.max_candidates):
                b = min(a + self.max_candidates, len(row))
                full = states[row[a:b]]
                for c in range(a, b):
                    encode_candidate(full[c - a], kind[c], added[c], small_blind)
                x = torch.from_numpy(full).to(self.device)
                scores[a:b] = self.model(x).float().cpu().numpy()
        return row, kind, raise_to, scores

    @staticmethod
    def _patterns(added: np.ndarray, kind: np.ndarray, small_blind: int) -> np.ndarray:
        """Each candidate's (type, thermometer count) pattern number."""
        return kind * (THERMO_CELLS + 1) + np.minimum(added // small_blind, THERMO_CELLS)

    def _candidates(
        self, batch: TableBatch, tables: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Candidates (table position, kind, raise-to, chips added) and each table's state
        planes (the candidate planes zero)."""
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
        states = np.empty((n, N_PLANES, SIZE, SIZE), np.float32)
        encode_tables(
            states, tables, batch.state, batch.cards, batch.history, r.encoding(self.canonical)
        )
        return row, kind, raise_to, added, states

    def _score(self, states: np.ndarray, row: np.ndarray, pattern: np.ndarray) -> np.ndarray:
        """The network's score of each candidate (state `row`, candidate planes `pattern`), in
        the player's precision; bfloat16-checked's candidates within the margin of their
        decision's best are float32 scores."""
        low = self.precision != "float32"
        with torch.no_grad():
            s1 = self._first_columns(self.conv1(torch.from_numpy(states).to(self.device)))
            scores = self._score_from(s1, row, pattern, torch.bfloat16 if low else torch.float32)
            if self.precision == "bfloat16-checked" and len(row):
                best = np.full(len(states), -np.inf, np.float32)
                np.maximum.at(best, row, scores)
                again = np.flatnonzero(scores >= best[row] - CHECK_MARGIN)
                scores[again] = self._score_from(s1, row[again], pattern[again], torch.float32)
                self.rescored += len(again)
        return scores

    def _score_from(
        self, s1: torch.Tensor, row: np.ndarray, pattern: np.ndarray, dtype: torch.dtype
    ) -> np.ndarray:
        """Scores from the states' first-layer maps `s1`, the network after it run in `dtype`."""
        m = len(row)
        scores = np.empty(m, np.float32)
        rows = torch.from_numpy(row).to(self.device)
        pats = torch.from_numpy(pattern).to(self.device)
        for a in range(0, m, self.max_candidates):
            b = min(a + self.max_candidates, m)
            h = s1.index_select(0, rows[a:b])
            h.add_(self.patterns.index_select(0, pats[a:b]))
            out = self._rest_checked(h.relu_().to(dtype))
            scores[a:b] = out.float().cpu().numpy()
        return scores

    def _rest_checked(self, h: torch.Tensor) -> torch.Tensor:
        """`_rest`, falling back to eager scoring where torch.compile cannot build (it needs
        a C++ compiler on a CPU)."""
        try:
            return self._rest(h)
        except Exception as exc:
            if self._rest == self._rest_of_network:
                raise
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            warnings.warn(f"torch.compile failed ({first_line}); scoring without it", stacklevel=2)
            self._rest = self._rest_of_network
            return self._rest(h)

    def _rest_of_network(self, h: torch.Tensor) -> torch.Tensor:
        """Scores from the first layer's output `h` (after its ReLU), in h's dtype."""
        model, zero_pooled = self._nets[h.dtype]
        features = model.features
        if self.crop is None:
            h = features[2:5](h)
        else:
            h = self._cropped_second_layer(h, features[2], zero_pooled, self.crop)
        return model.head(features[5:](h)).squeeze(1)

    @staticmethod
    def _cropped_second_layer(
        h: torch.Tensor, conv2: nn.Module, zero_pooled: torch.Tensor, crop: _Crop
    ) -> torch.Tensor:
        """Second convolution, ReLU and pool on the columns that vary; the rest copied."""
        assert isinstance(conv2, nn.Conv2d)
        pad = int(conv2.padding[0])
        y = nn.functional.conv2d(h, conv2.weight, conv2.bias, padding=(pad, 0))
        half = SIZE // 2
        y = nn.functional.max_pool2d(y[:, :, : 2 * half].relu(), 2)
        out = zero_pooled.expand(len(y), -1, -1, -1)
        out = out.contiguous(memory_format=torch.channels_last)
        out[:, :, :, crop.pooled] = y
        return out


def _memo_key(state: np.ndarray, patterns: np.ndarray) -> bytes:
    """A digest of a decision: the state planes and the candidates' (type, chips) patterns."""
    h = hashlib.blake2b(state[:CAND_TYPE].tobytes(), digest_size=MEMO_KEY_BYTES)
    h.update(patterns.tobytes())
    return h.digest()


@njit(cache=True, nogil=True)
def _argmax_per_row(row: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    best = np.full(n, -1, dtype=np.int64)
    for c in range(row.shape[0]):
        j = row[c]
        if best[j] < 0 or scores[c] > scores[best[j]]:
            best[j] = c
    return best
