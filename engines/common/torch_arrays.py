"""Torch helpers every game's networks share: weights and optimiser state as arrays, devices."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import torch
from torch import nn

__all__ = [
    "cpu_runs_bfloat16",
    "load_arrays",
    "optimiser_from_arrays",
    "optimiser_to_arrays",
    "pick_device",
    "weights_to_arrays",
]

ModelT = TypeVar("ModelT", bound=nn.Module)


def weights_to_arrays(model: nn.Module) -> dict[str, np.ndarray]:
    """The model's parameters and buffers as float32 arrays (what the store keeps)."""
    return {
        k: np.ascontiguousarray(v.detach().cpu().numpy(), dtype=np.float32)
        for k, v in model.state_dict().items()
    }


def load_arrays(model: ModelT, arrays: dict[str, np.ndarray], device: str = "cpu") -> ModelT:
    """`model` with the weights `weights_to_arrays` saved, on `device`, in eval mode."""
    model.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in arrays.items()})
    return model.to(device).eval()


def cpu_runs_bfloat16() -> bool:
    """Whether oneDNN has bfloat16 kernels for this CPU (AVX-512 and newer). Without them torch
    emulates bfloat16 arithmetic: a matrix product about 100x slower than in float32 (AVX2)."""
    return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())


def pick_device(name: str) -> str:
    """`auto` is cuda when available, else cpu."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {name!r} requested but torch sees no GPU")
    return name


def optimiser_to_arrays(optimiser: torch.optim.Optimizer) -> dict[str, np.ndarray]:
    """Adadelta's per-parameter state as arrays (for checkpoints), keyed `index.name`."""
    out = {}
    params = optimiser.param_groups[0]["params"]
    for i, p in enumerate(params):
        for name, value in optimiser.state.get(p, {}).items():
            out[f"{i}.{name}"] = torch.as_tensor(value).detach().cpu().numpy()
    return out


def optimiser_from_arrays(optimiser: torch.optim.Optimizer, arrays: dict[str, np.ndarray]) -> None:
    """Restore what `optimiser_to_arrays` saved."""
    params = optimiser.param_groups[0]["params"]
    for key, value in arrays.items():
        i, _, name = key.partition(".")
        p = params[int(i)]
        tensor = torch.from_numpy(np.array(value))
        optimiser.state[p][name] = tensor if name == "step" else tensor.to(p.device)


def training_state(
    model: nn.Module, optimiser: torch.optim.Optimizer, extra: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """A training checkpoint as arrays: weights (`w.`), optimiser state (`o.`) and `extra`."""
    state = {f"w.{k}": v for k, v in weights_to_arrays(model).items()}
    state.update({f"o.{k}": v for k, v in optimiser_to_arrays(optimiser).items()})
    state.update(extra)
    return state


def restore_training_state(
    model: nn.Module, optimiser: torch.optim.Optimizer, saved: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Load what `training_state` saved into `model` and `optimiser`; returns the extras."""
    model.load_state_dict(
        {k[2:]: torch.from_numpy(np.asarray(v)) for k, v in saved.items() if k.startswith("w.")}
    )
    optimiser_from_arrays(optimiser, {k[2:]: v for k, v in saved.items() if k.startswith("o.")})
    return {k: v for k, v in saved.items() if not k.startswith(("w.", "o."))}
