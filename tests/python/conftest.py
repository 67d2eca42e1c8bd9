"""pytest markers for the suites (suites.txt, which ctest's labels also come from):
`pytest -m matcher tests/python` runs one area."""
import os

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))


def _labels():
    labels = {}
    with open(os.path.join(_HERE, "suites.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("test_"):
                module, marks = line.split()
                labels[module] = marks.split(",")
    return labels


_LABELS = _labels()


def pytest_configure(config):
    for mark in sorted({m for marks in _LABELS.values() for m in marks}):
        config.addinivalue_line("markers", f"{mark}: see tests/python/suites.txt")


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.module.__name__ if item.module else ""
        for mark in _LABELS.get(module, ()):
            item.add_marker(getattr(pytest.mark, mark))
