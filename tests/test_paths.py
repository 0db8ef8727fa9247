import pytest

from parabit.paths import PROJECT_ROOT, DataNotFoundError, data_root


def test_default_data_root_is_shared_beside_the_project(monkeypatch):
    monkeypatch.delenv("PARABIT_DATA", raising=False)
    assert data_root() == PROJECT_ROOT.parent / "shared" / "data"


def test_parabit_data_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv("PARABIT_DATA", str(tmp_path))
    assert data_root() == tmp_path


def test_missing_data_root_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setenv("PARABIT_DATA", str(tmp_path / "absent"))
    with pytest.raises(DataNotFoundError, match="Set PARABIT_DATA"):
        data_root()
