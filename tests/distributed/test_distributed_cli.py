"""``maxent-privacy distributed --scheduler ADDRESS``: CSV releases (every cell text)
solved on a running cluster; a Parquet release (numbers) pooled with a CSV one (text) and
a scheduler that cannot be reached are one line each, exit 2."""

import numpy as np
import pandas as pd
import pytest

from maxent_privacy import Bucketized, MaxEntModel
from maxent_privacy.cli import main
from maxent_privacy.distributed.synthetic import QI, SA, pooled_frames, write_synthetic

pytestmark = pytest.mark.heavy


def test_the_command_on_a_running_scheduler(client, tmp_path, capsys):
    paths = write_synthetic(tmp_path / "in", 2000, releases=2, regions=4, chunk=1000, seed=5)
    csv = [tmp_path / "release-1.csv", tmp_path / "release-2.csv"]
    for path, target in zip(paths, csv, strict=True):
        pd.read_parquet(path).to_csv(target, index=False)
    out = tmp_path / "answer"
    args = ["--qi", *QI, "--sa", SA, "--group", "group", "--person", "pid", "--out", str(out),
            "--scheduler", client.scheduler.address]  # fmt: skip
    code = main(["distributed", str(paths[0]), str(csv[1]), *args])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err == (
        "error: release 2: column 'pid' holds text (string), in release 1 numbers (int64); "
        "convert one of them\n"
    )
    code = main(["distributed", *map(str, csv), *args])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "2 releases" in printed.out and "certificate: residual" in printed.out
    post = pd.read_parquet(out / "posterior")
    # the CSV is read as text: person ids of both releases are compared as text
    frames = pooled_frames(2000, releases=2, regions=4, seed=5)
    frames = [f.astype(str) for f in frames]
    model = MaxEntModel([Bucketized(f, QI, SA, "group", person="pid") for f in frames])
    ref = model.solve(progress=False).person_posterior()
    ref.columns = [str(c) for c in ref.columns]
    post = post.set_index("person").sort_index()
    ref = ref.sort_index()
    assert post.index.equals(ref.index)
    assert np.abs(post[ref.columns].to_numpy() - ref.to_numpy()).max() <= 1e-9


def test_an_unreachable_scheduler_is_one_line(tmp_path, capsys):
    frame = pooled_frames(100, releases=1)[0]
    frame.to_parquet(tmp_path / "r.parquet")
    code = main(
        ["distributed", str(tmp_path / "r.parquet"), "--qi", *QI, "--sa", SA, "--group",
         "group", "--person", "pid", "--out", str(tmp_path / "out"),
         "--scheduler", "tcp://127.0.0.1:9", "--connect-timeout", "1"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: cannot reach the Dask scheduler at tcp://127.0.0.1:9")
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
