"""Recorded artifacts: a model test that replays what was recorded instead of generated inputs.
A folder holds `inputs` (the forward's tensor arguments, named arg0, arg1, ... in order),
optionally `weights` (a state_dict, loaded into the problem's Model and the candidate's ModelNew
alike) and `outputs` (the predictions recorded with them, named out0, out1, ...), each as .npz,
.npy (one array) or .safetensors (where the safetensors package is installed). The recorded
predictions are the case's reference and the golden is the Model in float64 with the recorded
weights, so the same policy judges it: the bound is k times how far the recorded predictions
are from the golden."""
from __future__ import annotations

import os
from typing import Optional

from kjudge.kernelbench.problem import ProblemError

_SUFFIXES = (".npz", ".npy", ".safetensors")


def read_tensors(folder: str, stem: str, *, required: bool) -> Optional[dict]:
    """{name: CPU tensor} from folder/stem.npz|.npy|.safetensors; None when absent and not
    required. ProblemError naming the file when it cannot be read."""
    import torch
    found = [stem + s for s in _SUFFIXES if os.path.isfile(os.path.join(folder, stem + s))]
    if not found:
        if required:
            raise ProblemError(f"{folder}: no {stem}.npz, {stem}.npy or {stem}.safetensors")
        return None
    path = os.path.join(folder, found[0])
    try:
        if path.endswith(".safetensors"):
            from safetensors.torch import load_file
            return dict(load_file(path))
        import numpy
        loaded = numpy.load(path, allow_pickle=False)
        if path.endswith(".npy"):
            return {"arg0" if stem == "inputs" else f"{stem[:-1]}0": torch.from_numpy(loaded)}
        return {name: torch.from_numpy(loaded[name]) for name in loaded.files}
    except ImportError as e:
        raise ProblemError(f"{path}: needs {e.name} to be read") from None
    except Exception as e:
        raise ProblemError(f"{path}: cannot be read: {e}") from None


def ordered(tensors: dict, prefix: str, path: str) -> list:
    """tensors named prefix0, prefix1, ... as a list in that order (none missing)."""
    names = sorted(tensors, key=lambda n: (len(n), n))
    expected = [f"{prefix}{i}" for i in range(len(names))]
    if names != expected:
        raise ProblemError(f"{path}: arrays must be named {', '.join(expected[:3])}, ... "
                           f"(found {', '.join(names[:5])})")
    return [tensors[n] for n in names]
