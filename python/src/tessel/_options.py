"""tessel._options — the options both ops share, checked and normalised.

Contract: threads(None | int >= 0) -> int (0: all cores; CPU only);
stream(None | int | an object with .cuda_stream (PyTorch) or .ptr (CuPy), like)
-> the native handle as an int (GPU arrays only; host arrays run before the
call returns and ignore it). None: PyTorch's current stream on `like`'s device
where `like` (the op's first array) is a PyTorch CUDA tensor, so the call is
ordered with the caller's PyTorch work and CUDA graph capture; otherwise 0,
the default stream; number(x) -> float (alpha,
beta, scale); portable(path) -> whether path is "portable" rather than
"fastest". Bad values raise tessel.Error naming the argument.
"""
import operator

from ._tessel import Error


def _non_negative(value, op, name, expected, limit):
    """value as an int in [0, limit] (bool refused), else tessel.Error naming the argument."""
    try:
        n = -1 if isinstance(value, bool) else operator.index(value)
    except TypeError:
        n = -1
    if not 0 <= n <= limit:
        raise Error(f"{op}: argument '{name}': expected {expected}, got {value!r}")
    return n


def threads(value, op):
    if value is None:
        return 0
    return _non_negative(value, op, "threads", "None or an integer >= 0 (0 or None: all cores)", 2**31 - 1)


def _torch_cuda_tensor(x):
    return type(x).__module__.split(".")[0] == "torch" and getattr(x, "is_cuda", False)


def stream(value, op, like=None):
    if value is None:
        if like is not None and _torch_cuda_tensor(like):
            import torch
            return torch.cuda.current_stream(like.device).cuda_stream
        return 0
    for attr in ("cuda_stream", "ptr"):
        if hasattr(value, attr):
            value = getattr(value, attr)
            break
    return _non_negative(value, op, "stream", "None, a native stream handle (int) or a stream object with "
                         ".cuda_stream or .ptr", 2**64 - 1)


def number(value, op, name):
    try:
        if isinstance(value, (str, bytes)):
            raise TypeError("a string is not a number here")
        return float(value)
    except (TypeError, ValueError):
        raise Error(f"{op}: argument '{name}': expected a number, got {value!r}") from None


def portable(path, op):
    if path not in ("fastest", "portable"):
        raise Error(f"{op}: argument 'path': expected 'fastest' or 'portable', got {path!r}")
    return path == "portable"
