"""AutoGluon as the benchmark's second peer: its own environment, built on demand, and the same protocol as FLAML.

The real AutoGluon run is opt-in (`make test-peers`, which keeps the environment in `.venv-autogluon`): building
the environment takes minutes. What runs in every suite is what does not need it: the one-line reason when the
environment cannot be built, and the report with both peers side by side.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dagsmith.bench.autogluon_peer import VENV_VARIABLE, AutoGluon, _last_error
from dagsmith.bench.peers import Flaml, PeerUnavailable, run_peer
from dagsmith.bench.suite import load_suite

OPTED_IN = bool(os.environ.get(VENV_VARIABLE))


def test_an_environment_that_cannot_be_built_is_one_clear_line(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    venv = tmp_path / "a-file" / "autogluon"
    with pytest.raises(PeerUnavailable) as raised:
        AutoGluon(venv).prepare()
    message = str(raised.value)
    assert message.startswith(f"AutoGluon's environment could not be built at {venv} (") and "\n" not in message
    assert message.endswith(f"see {venv.with_name('autogluon-build.log')}")
    # pip's own reason is the one given (as pip wrote it when no package index was within reach)
    log = tmp_path / "build.log"
    log.write_text("WARNING: Retrying (Retry(total=0)) after connection broken\nERROR: Could not find a version that "
                   "satisfies the requirement autogluon.tabular==1.6.3 (from versions: none)\nERROR: No matching "
                   "distribution found for autogluon.tabular==1.6.3\n")
    assert _last_error(log, subprocess.CalledProcessError(1, "pip")) == (
        "ERROR: No matching distribution found for autogluon.tabular==1.6.3")

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("a user's folder, not an environment")
    with pytest.raises(PeerUnavailable, match="exists and is not a virtual environment"):
        AutoGluon(tmp_path / "mine").prepare()
    assert (tmp_path / "mine" / "notes.txt").is_file()  # left as it was


@pytest.mark.skipif(not OPTED_IN, reason=f"opt-in: `make test-peers` builds AutoGluon's environment ({VENV_VARIABLE})")
def test_autogluon_and_flaml_answer_the_same_split_through_the_same_protocol():
    autogluon = AutoGluon(Path(os.environ[VENV_VARIABLE]))
    autogluon.prepare()  # builds the environment on the first run, then finds it built
    suite = {task.id: task for task in load_suite()}
    for task_id, metric in (("iris-species", "roc_auc"), ("diabetes-one-year-progression", "r2")):
        results = [run_peer(peer, suite[task_id], 10) for peer in (Flaml(), autogluon)]
        for result in results:
            assert result.success, result.failure
            assert result.budget_seconds == 10 and result.seconds < 10 + 120
        flaml, gluon = (r.quality for r in results)
        # the same held-out rows: the trivial predictor scores alike for both
        baseline = "trivial_roc_auc" if metric == "roc_auc" else "baseline_rmse"
        assert gluon[baseline] == pytest.approx(flaml[baseline])
        assert gluon[metric] > (0.9 if metric == "roc_auc" else 0.3)
