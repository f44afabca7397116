"""Uplink sharing schemes against their closed forms (edgesim/network/access.py)."""

from __future__ import annotations

import pytest
import simpy

from edgesim.cli import main
from edgesim.network.access import ProcessorSharing, make_access
from tests.helpers import write


def _finish_times(medium, env, airtimes, starts=None):
    done = {}

    def sender(i, a, at):
        yield env.timeout(at)
        yield from medium.transmit(a)
        done[i] = env.now

    for i, a in enumerate(airtimes):
        env.process(sender(i, a, 0 if starts is None else starts[i]))
    env.run()
    return [done[i] for i in range(len(airtimes))]


@pytest.mark.parametrize("N, R", [(10, 3), (40, 40), (100, 7)])
def test_round_robin_n_uploads_on_r_blocks_finish_at_n_s_over_r_r(N, R):
    # N >= R uploads of S bytes at per-block rate r: airtime a = 8 S / r each, all done at N a / R
    env = simpy.Environment()
    a = 1_000_000  # ns
    times = _finish_times(make_access(env, "round-robin", R), env, [a] * N)
    assert max(times) == pytest.approx(N * a / R, abs=1)
    assert min(times) == pytest.approx(N * a / R, abs=1)  # equal sizes: together


def test_round_robin_with_spare_blocks_sends_at_full_rate():
    env = simpy.Environment()
    times = _finish_times(ProcessorSharing(env, 8), env, [500, 1000, 2000])
    assert times == [500, 1000, 2000]


def test_round_robin_late_joiner_shares_only_while_over_capacity():
    # 2 blocks; three senders of 1000 ns from t = 0, 0, 500: from 500 to the end each gets 2/3
    env = simpy.Environment()
    times = _finish_times(ProcessorSharing(env, 2), env, [1000, 1000, 1000], [0, 0, 500])
    # first two: 500 done by t = 500, the remaining 500 at rate 2/3 -> 750 more: t = 1250;
    # the third: 500 of work at 2/3 (333.3) by 1250, then alone at full rate: 1250 + 666.7
    assert times[0] == pytest.approx(1250, abs=1) and times[1] == pytest.approx(1250, abs=1)
    assert times[2] == pytest.approx(1250 + 1000 - 2 / 3 * 750, abs=1)


def test_waves_of_whole_messages_are_the_first_come_model():
    env = simpy.Environment()
    times = _finish_times(make_access(env, "ofdma", 3), env, [1000] * 7)
    assert sorted(times) == [1000] * 3 + [2000] * 3 + [3000]  # ceil(N / R) waves


def test_batched_refuses_a_shared_round_robin_cell(tmp_path, capsys):
    text = (
        "[agents]\ncount = 10\n[network]\nfidelity = 'batched'\n"
        "[network.radio]\naccess = 'round-robin'\nresource_blocks = 3\n"
    )
    assert main(["validate", str(write(tmp_path, text))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network.fidelity" in err[0], err


def test_round_robin_with_a_block_per_device_is_batched_and_equals_ofdma():
    from edgesim.scenario import from_dict
    from edgesim.simulate import run

    texts = []
    for access in ("ofdma", "round-robin"):
        raw = {
            "agents": {"count": 6},
            "mechanism": {"kind": "fedavg", "phase1_rounds": 3},
            "network": {"fidelity": "batched", "radio": {"access": access, "resource_blocks": 6}},
        }
        result = run(from_dict(raw))
        texts.append((result["model"], result["sim_time_s"], result["communication"]))
    assert texts[0] == texts[1]
