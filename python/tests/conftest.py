"""python/tests/conftest.py — one random seed per run, printed; TESSEL_SEED replays it.

Contract: the `rng` fixture is a NumPy Generator seeded from the run seed
(TESSEL_SEED, or a fresh one) mixed with the test's id, so each test's inputs
are fresh on every run and reproducible from the printed seed alone.
"""
import os
import secrets
import zlib

import numpy as np
import pytest

RUN_SEED = int(os.environ.get("TESSEL_SEED") or secrets.randbits(32))


def pytest_report_header(config):
    return f"TESSEL_SEED={RUN_SEED} (set TESSEL_SEED={RUN_SEED} to replay these inputs)"


def pytest_terminal_summary(terminalreporter):
    terminalreporter.write_line(f"TESSEL_SEED={RUN_SEED}")


def pytest_runtest_logreport(report):
    if report.failed:
        report.sections.append(("seed", f"TESSEL_SEED={RUN_SEED}"))


@pytest.fixture
def rng(request):
    return np.random.default_rng([RUN_SEED, zlib.crc32(request.node.nodeid.encode())])
