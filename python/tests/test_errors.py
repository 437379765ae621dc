"""python/tests/test_errors.py — every refusal is a tessel.Error naming its argument.

Covers wrong dtypes, shapes, ranks, devices (a DLPack array on a CUDA
device, with no GPU backend built or mixed with host arrays), objects without
__dlpack__, read-only outputs, bad option values; that tessel.Error is a
ValueError carrying the C++ message unchanged; and that outputs are left
untouched when a call is refused.
"""
import numpy as np
import pytest

import tessel
from fake_device import DeviceArray

F32 = np.float32


def raises(fn, name, *fragments):
    """fn() raises tessel.Error whose message holds "argument '<name>'" (name None: the fragments alone)."""
    with pytest.raises(tessel.Error) as info:
        fn()
    message = str(info.value)
    assert isinstance(info.value, ValueError)
    for fragment in ((f"argument '{name}'",) if name else ()) + fragments:
        assert fragment in message, message
    return message


def test_error_is_value_error_with_the_cpp_message():
    assert issubclass(tessel.Error, ValueError)
    message = raises(lambda: tessel.gemm(np.ones((4, 8), F32), np.ones((7, 3), F32)), "b")
    assert message == "tessel::gemm: argument 'b': expected b with 8 rows (K, from the columns of a), got shape [7, 3]"


@pytest.mark.parametrize("name", ["a", "b", "c"])
@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.complex64])
def test_gemm_wrong_dtype(name, dtype):
    args = {"a": np.ones((4, 8), F32), "b": np.ones((8, 3), F32), "c": np.ones((4, 3), F32)}
    args[name] = args[name].astype(dtype)
    raises(lambda: tessel.gemm(args["a"], args["b"], c=args["c"]), name, "expected dtype float32, float16 or bfloat16")


def test_gemm_dtype_combination():
    raises(lambda: tessel.gemm(np.ones((4, 8), F32), np.ones((8, 3), np.float16)), None,
           "unsupported dtype combination a=fp32, b=fp16, c=fp32")


@pytest.mark.parametrize("name,a_shape,b_shape,c_shape", [
    ("a", (8,), (8, 3), None),
    ("b", (4, 8), (2, 2, 2, 8, 3), None),
    ("b", (4, 8), (9, 3), None),
    ("c", (4, 8), (8, 3), (3, 4)),
    ("a", (2, 4, 8), (3, 8, 3), None),
])
def test_gemm_wrong_shape(name, a_shape, b_shape, c_shape):
    c = None if c_shape is None else np.ones(c_shape, F32)
    raises(lambda: tessel.gemm(np.ones(a_shape, F32), np.ones(b_shape, F32), c=c), name)


def test_gemm_unsupported_strides_and_overlap():
    a = np.ones((8, 12), F32)
    raises(lambda: tessel.gemm(a[:, ::2], np.ones((6, 3), F32)), "a", "row- or column-major")
    raises(lambda: tessel.gemm(a[::-1], np.ones((12, 3), F32)), "a", ">= 0")
    raises(lambda: tessel.gemm(a[:, :4], a[:4, 4:8], c=a[:, 8:12]), "c", "overlap")


@pytest.mark.parametrize("name", ["a", "b", "c"])
@pytest.mark.parametrize("obj", [[[1.0]], None, "x", bytearray(16), 3.0])
def test_gemm_non_dlpack_object(name, obj):
    args = {"a": np.ones((1, 1), F32), "b": np.ones((1, 1), F32), "c": np.ones((1, 1), F32)}
    args[name] = obj
    if name == "c" and obj is None:
        return  # c=None: a new output
    raises(lambda: tessel.gemm(args["a"], args["b"], c=args["c"]), name, "__dlpack__")


def test_gemm_device_errors():
    host = np.ones((4, 8), F32)
    raises(lambda: tessel.gemm(host, DeviceArray((8, 3)), c=np.ones((4, 3), F32)), "b", "device cuda")
    raises(lambda: tessel.gemm(host, DeviceArray((8, 3), device_type=7)), "b", "DLPack device type 7")


@pytest.mark.skipif("cuda" in tessel.built_backends(), reason="the cuda backend is built here")
def test_gemm_device_backend_not_built():
    raises(lambda: tessel.gemm(DeviceArray((4, 8)), DeviceArray((8, 3)), c=DeviceArray((4, 3))), "a", "cuda")


def test_gemm_device_output_needs_c():
    raises(lambda: tessel.gemm(DeviceArray((4, 8)), DeviceArray((8, 3))), "c", "pass c=")


def test_gemm_read_only_output_untouched():
    c = np.full((4, 3), 7, F32)
    c.flags.writeable = False
    raises(lambda: tessel.gemm(np.ones((4, 8), F32), np.ones((8, 3), F32), c=c), "c", "writable")
    assert np.all(c == 7)


def test_gemm_refused_call_leaves_c_untouched():
    c = np.full((4, 3), 7, F32)
    raises(lambda: tessel.gemm(np.ones((4, 8), F32), np.ones((9, 3), F32), c=c, beta=1.0), "b")
    assert np.all(c == 7)


@pytest.mark.parametrize("kwargs,name", [
    ({"beta": 0.5}, "beta"),
    ({"out_dtype": "float64"}, "out_dtype"),
    ({"c": np.ones((4, 3), F32), "out_dtype": np.float16}, "out_dtype"),
    ({"threads": -1}, "threads"),
    ({"threads": "2"}, "threads"),
    ({"threads": 2**40}, "threads"),
    ({"stream": -1}, "stream"),
    ({"stream": "default"}, "stream"),
    ({"path": "quick"}, "path"),
    ({"path": None}, "path"),
    ({"alpha": "one"}, "alpha"),
    ({"beta": [1.0]}, "beta"),
])
def test_gemm_bad_options(kwargs, name):
    raises(lambda: tessel.gemm(np.ones((4, 8), F32), np.ones((8, 3), F32), **kwargs), name)


def qkv(dtype=F32, q_shape=(1, 8, 4, 64), kv_shape=(1, 8, 2, 64)):
    return np.ones(q_shape, dtype), np.ones(kv_shape, dtype), np.ones(kv_shape, dtype)


@pytest.mark.parametrize("name", ["q", "k", "v", "out"])
def test_attention_wrong_dtype(name):
    args = dict(zip("qkv", qkv()), out=np.ones((1, 8, 4, 64), F32))
    args[name] = args[name].astype(np.float64)
    raises(lambda: tessel.attention(args["q"], args["k"], args["v"], out=args["out"]), name, "float64")


@pytest.mark.parametrize("name,q_shape,kv_shape", [
    ("q", (8, 4, 64), (1, 8, 2, 64)),
    ("k", (1, 8, 4, 64), (1, 8, 3, 64)),
    ("k", (1, 8, 4, 64), (2, 8, 2, 64)),
    ("q", (1, 8, 4, 32), (1, 8, 2, 32)),
])
def test_attention_wrong_shape(name, q_shape, kv_shape):
    q, k, v = qkv(q_shape=q_shape, kv_shape=kv_shape)
    raises(lambda: tessel.attention(q, k, v), name)


def test_attention_wrong_out_and_lse():
    q, k, v = qkv()
    raises(lambda: tessel.attention(q, k, v, out=np.ones((1, 8, 4, 128), F32)), "out", "expected the shape of q")
    raises(lambda: tessel.attention(q, k, v, out=q), "out", "overlap")


@pytest.mark.parametrize("name", ["q", "k", "v"])
def test_attention_non_dlpack_and_device(name):
    args = dict(zip("qkv", qkv()))
    args[name] = args[name].tolist()
    raises(lambda: tessel.attention(**args), name, "__dlpack__")
    args = dict(zip("qkv", qkv()))
    args[name] = DeviceArray(args[name].shape)
    out = np.ones((1, 8, 4, 64), F32)
    raises(lambda: tessel.attention(**args, out=out), name, "cuda")


@pytest.mark.parametrize("kwargs,name", [
    ({"layout": "sbhd"}, "layout"),
    ({"scale": 0.0}, "scale"),
    ({"scale": -1.0}, "scale"),
    ({"scale": "0.1"}, "scale"),
    ({"scale": float("nan")}, "scale"),
    ({"threads": -2}, "threads"),
    ({"path": ""}, "path"),
])
def test_attention_bad_options(kwargs, name):
    raises(lambda: tessel.attention(*qkv(), **kwargs), name)
