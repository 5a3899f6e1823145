"""numpy's huge-page advice is turned off exactly where the kernel would stall on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from numpy._core.multiarray import _set_madvise_hugepage

from engine.runtime import memory


@pytest.fixture
def thp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A fake /sys/kernel/mm/transparent_hugepage; numpy's advice restored afterwards."""
    monkeypatch.setattr(memory, "THP", str(tmp_path))
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    before = _set_madvise_hugepage(True)

    def write(enabled: str, defrag: str) -> None:
        (tmp_path / "enabled").write_text(enabled + "\n")
        (tmp_path / "defrag").write_text(defrag + "\n")

    yield write
    _set_madvise_hugepage(before)


def test_advice_off_where_madvise_regions_are_compacted_on_the_spot(thp):
    thp("always [madvise] never", "always defer defer+madvise [madvise] never")
    assert memory.plain_pages_for_numpy()
    assert _set_madvise_hugepage(True) is False  # it was off


@pytest.mark.parametrize(
    ("enabled", "defrag"),
    [
        ("[always] madvise never", "always defer defer+madvise [madvise] never"),
        ("always [madvise] never", "always [defer] defer+madvise madvise never"),
        ("always madvise [never]", "[always] defer defer+madvise madvise never"),
    ],
)
def test_advice_kept_where_it_does_not_stall(thp, enabled, defrag):
    thp(enabled, defrag)
    assert not memory.plain_pages_for_numpy()
    assert _set_madvise_hugepage(True) is True  # still on


def test_the_users_choice_stands(thp, monkeypatch):
    thp("always [madvise] never", "always defer defer+madvise [madvise] never")
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    assert not memory.plain_pages_for_numpy()
    assert _set_madvise_hugepage(True) is True


def test_no_such_setting_changes_nothing(thp, tmp_path, monkeypatch):
    monkeypatch.setattr(memory, "THP", str(tmp_path / "absent"))
    assert not memory.plain_pages_for_numpy()
    assert _set_madvise_hugepage(True) is True
