"""python/tests/test_plot.py — `python -m tessel.plot` on the results committed under bench/results.

Contract: every JSON file in bench/results is of a kind tessel.plot knows
and loads; one file of each kind renders to a PNG (header checked, not
empty), beside its input by default, and through `python -m tessel.plot`;
a memory-bound row is drawn in GB/s; an unknown, non-JSON or missing file is
refused with one line naming it; without matplotlib (its import made to
fail) tessel.plot says how to install it, and `import tessel` never needs it.
"""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from tessel import plot
from tessel.plot import _read

RESULTS = pathlib.Path(__file__).resolve().parents[2] / "bench" / "results"
PNG = b"\x89PNG\r\n\x1a\n"
ONE_OF_EACH_KIND = [
    "cpu_gemm_2026-11-22.json",                                  # tessel-bench gemm (CPU)
    "cuda_h100_gemm_issue8_v4_epilogue_halves_2026-11-22_batch.json",  # tessel-bench gemm (CUDA, batched)
    "cpu_attention_2026-11-22_issue7_seq32k.json",               # tessel-bench attention (CPU)
    "cuda_h100_attention_vs_sdpa_c_abi_2026-11-22.json",         # attention_vs_sdpa.py
    "cuda_h100_attention_ab_issue7_final_2026-11-22.json",       # attention_vs_sdpa.py with tessel:<variant>s
    "cpu_gemm_packed_schedule_2026-11-22.json",                  # CPU GEMM schedule summary
    "cuda_h100_gemm_clock_power_2026-11-24.json",                # gemm_clock.py (sustained, with clock/power)
]


def assert_png(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:8] == PNG and len(data) > 10_000


@pytest.mark.parametrize("path", sorted(RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_committed_results_file_loads(path):
    charts = _read.load(path)
    assert charts and all(chart.cases and chart.series for chart in charts)
    assert any(chart.ratio(case, peer) for chart in charts for case in chart.cases for peer in chart.peers)


@pytest.mark.parametrize("name", ONE_OF_EACH_KIND)
def test_each_kind_renders_a_png_beside_its_input(name, tmp_path):
    pytest.importorskip("matplotlib")
    src = shutil.copy(RESULTS / name, tmp_path / name)
    assert plot.main([str(src)]) == 0
    assert_png(tmp_path / name.replace(".json", ".png"))


def test_several_files_make_one_figure_and_o_names_it(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "combined.png"
    assert plot.render([RESULTS / ONE_OF_EACH_KIND[0], RESULTS / ONE_OF_EACH_KIND[3]], out) == out
    assert_png(out)


def test_python_dash_m_tessel_plot(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "sdpa.png"
    done = subprocess.run([sys.executable, "-m", "tessel.plot", str(RESULTS / ONE_OF_EACH_KIND[3]), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    assert_png(out)


def test_memory_bound_rows_are_drawn_in_gbps(tmp_path):
    pytest.importorskip("matplotlib")
    doc = json.loads((RESULTS / ONE_OF_EACH_KIND[0]).read_text())
    doc["rows"][0].update(memory_bound=True, tessel_gbps=40.0, peer_gbps=20.0)
    doc["rows"][1].update(bound="memory", bytes=8e6)
    (tmp_path / "mixed.json").write_text(json.dumps(doc))
    cases = _read.load(tmp_path / "mixed.json")[0].cases
    assert [c.unit for c in cases[:3]] == ["GB/s", "GB/s", "TFLOP/s"]
    assert cases[0].values["tessel"] == 40.0
    assert cases[1].values["tessel"] == pytest.approx(8e6 / (doc["rows"][1]["tessel_ms"] * 1e-3) / 1e9)
    assert plot.main([str(tmp_path / "mixed.json")]) == 0
    assert_png(tmp_path / "mixed.png")


@pytest.mark.parametrize("content, message", [
    ('{"rows": [{"shape": "1x1x1"}]}', "not a results file tessel.plot knows"),
    ('[1, 2, 3]', "not a results file tessel.plot knows"),
    ('{"meta": {"tool": "tessel-bench", "op": "conv"}, "rows": []}', "tessel-bench op 'conv'"),
    ('{"meta": {"tool": "tessel-bench", "op": "gemm"}, "rows": [{"shape": "1x1x1"}]}', "malformed row"),
    ('{"meta": {"tool": "tessel-bench", "op": "gemm"}, "rows": []}', "no rows to draw"),
    ("not json at all", "not JSON"),
])
def test_unknown_files_are_refused_with_a_message(tmp_path, capsys, content, message):
    path = tmp_path / "odd.json"
    path.write_text(content)
    with pytest.raises(plot.PlotError, match=message):
        plot.render(path)
    assert plot.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tessel.plot: {path}: ") and message in err
    assert not (tmp_path / "odd.png").exists()


def test_a_missing_file_is_named(tmp_path, capsys):
    assert plot.main([str(tmp_path / "nowhere.json")]) == 1
    assert "nowhere.json: cannot read" in capsys.readouterr().err


def test_missing_matplotlib_says_how_to_install_it(monkeypatch, tmp_path, capsys):
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    with pytest.raises(plot.PlotError, match="needs matplotlib.*pip install matplotlib"):
        plot.render(RESULTS / ONE_OF_EACH_KIND[0], tmp_path / "x.png")
    assert plot.main([str(RESULTS / ONE_OF_EACH_KIND[0]), "-o", str(tmp_path / "x.png")]) == 1
    assert "pip install matplotlib" in capsys.readouterr().err
    assert not (tmp_path / "x.png").exists()


def test_import_tessel_does_not_import_matplotlib():
    code = "import sys, tessel, tessel.plot; assert 'matplotlib' not in sys.modules"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
