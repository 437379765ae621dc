"""python/tests/test_example.py — the README's NumPy example runs as written.

Contract: examples/python/numpy_gemm.py is the text the README shows; it is
run unchanged (runpy), then its results are checked against float64.
"""
import pathlib
import runpy

import numpy as np

from reference import TOL, attention_ref, gemm_ref, rel_error

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python" / "numpy_gemm.py"


def test_readme_numpy_example_runs_as_written():
    code = [line for line in EXAMPLE.read_text().splitlines() if line and not line.startswith("#")]
    assert len(code) <= 5  # the README shows these lines
    done = runpy.run_path(str(EXAMPLE))
    a, c, q, out = done["a"], done["c"], done["q"], done["out"]
    assert c.dtype == np.float32 and rel_error(c, gemm_ref(a, a.T)) < TOL["float32"]
    assert out.dtype == np.float32 and rel_error(out, attention_ref(q, q, q, causal=True)[0]) < TOL["float32"]
