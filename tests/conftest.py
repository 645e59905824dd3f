"""Every test keeps the learner's progress in its own folder, never in the real data dir."""
import pytest


@pytest.fixture(autouse=True)
def _private_progress(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("RADIXVIZ_DATA_DIR", str(tmp_path_factory.mktemp("radixviz-data")))
