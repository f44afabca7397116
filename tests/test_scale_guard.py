"""A typo in K must not take the machine down: the scenario's own checks run before any array
of size K, n or d exists (issue "check cost before allocating", item 1)."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from tests.helpers import write

#: Runs the command line in a child, then reports the child's own peak RSS (kB) on stderr:
#: VmHWM of its own address space (getrusage's ru_maxrss would carry the parent's peak
#: across fork and exec, and pytest's process is larger than the limit by itself).
CHILD = (
    "import sys\n"
    "from edgesim.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "hwm = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
    "print('PEAK_RSS_KB', hwm, file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


def _limit_memory():  # a regression fails with MemoryError here instead of exhausting the machine
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize(
    "extra", ["", "[network]\nfidelity = 'events'\n", "[mechanism]\nkind = 'dp-ffl'\n"]
)
def test_ten_to_the_eleven_agents_is_refused_before_anything_is_allocated(tmp_path, command, extra):
    line = _refused(tmp_path, command, "[agents]\ncount = 100000000000\n" + extra)
    assert "data.samples" in line and "100000000000 agents" in line


def _refused(tmp_path, command: str, text: str) -> str:
    """Run ``edgesim COMMAND`` on ``text`` in a child; check exit 2, one line, a small peak."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, command, str(write(tmp_path, text))],
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=_limit_memory,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    lines = [ln for ln in done.stderr.splitlines() if not ln.startswith("PEAK_RSS_KB")]
    assert len(lines) == 1, lines
    peak_kb = int(done.stderr.split("PEAK_RSS_KB")[1].split()[0])
    assert peak_kb < 200 * 1024, f"peak RSS {peak_kb} kB"
    return lines[0]


@pytest.mark.parametrize("command", ["run", "plan"])
def test_a_valid_scenario_that_cannot_fit_is_refused_before_anything_is_allocated(
    tmp_path, command
):
    # 1 000 samples per agent is valid; 10^9 rows of 1 000 features (8 TB) fit no machine
    text = "[agents]\ncount = 1000000\n[data]\nsamples = 1000000000\nfeatures = 1000\n"
    line = _refused(tmp_path, command, text)
    assert line.startswith("edgesim: error: data.samples:") and "--force" in line
