"""The results folder: whole or nothing (no cluster needed)."""

import pandas as pd
import pytest

from maxent_privacy import OutputError
from maxent_privacy.distributed.output import ResultFolder, write_part


def test_a_missing_part_writes_nothing(tmp_path):
    folder = ResultFolder(tmp_path / "answer")
    write_part(folder.temp / "posterior", "part-0", pd.DataFrame({"person": [1]}))
    with pytest.raises(OutputError, match=r"parts are missing \(posterior: 1 of 2 parts\); "
                       "nothing was written"):  # fmt: skip
        folder.commit({"posterior": 2}, {})
    assert list(tmp_path.iterdir()) == []


def test_an_old_folder_is_replaced_whole(tmp_path):
    target = tmp_path / "answer"
    target.mkdir()
    (target / "old.txt").write_text("old")
    folder = ResultFolder(target)
    write_part(folder.temp / "risk", "part-0", pd.DataFrame({"person": [1]}))
    assert (target / "old.txt").exists()  # untouched until the commit
    folder.commit({"risk": 1}, {"entropy": 0.5})
    assert sorted(p.name for p in target.iterdir()) == ["certificate.json", "risk"]
    assert [p.name for p in tmp_path.iterdir()] == ["answer"]


def test_a_file_in_the_way(tmp_path):
    (tmp_path / "answer").write_text("x")
    with pytest.raises(OutputError, match="it is a file, not a folder"):
        ResultFolder(tmp_path / "answer")
    with pytest.raises(OutputError, match="does not exist"):
        ResultFolder(tmp_path / "nowhere" / "answer")
