"""The three SimPy internals the events fidelity relies on (why SimPy is pinned to 4.1.x)."""

from __future__ import annotations

import simpy
from simpy.events import Timeout

from edgesim.network.server import _fire_at


def test_fire_at_triggers_a_waited_event_at_the_instant_with_its_value():
    env = simpy.Environment()
    inbox = env.event()
    log = []

    def waiter():
        value = yield inbox
        log.append((env.now, value))

    env.process(waiter())
    _fire_at(env, inbox, "plan", 250)
    env.run()
    assert log == [(250, "plan")]
    assert inbox.triggered and inbox.ok and inbox.value == "plan"


def test_moving_a_resume_callback_onto_a_shared_instant_resumes_each_waiter_once():
    env = simpy.Environment()
    inboxes = [env.event() for _ in range(3)]  # never triggered
    log = []

    def device(i):
        value = yield inboxes[i]
        log.append((i, env.now, value))

    for i in range(3):
        env.process(device(i))
    env.run(until=1)  # every device now waits on its inbox
    assert all(len(box.callbacks) == 1 for box in inboxes)
    arrival = Timeout(env, 40, "msg")
    for box in inboxes[:2]:  # two messages share the instant: one event
        arrival.callbacks.append(box.callbacks.pop())
    env.run()
    assert log == [(0, 41, "msg"), (1, 41, "msg")]
    assert not inboxes[2].triggered and len(inboxes[2].callbacks) == 1


def test_the_private_clock_is_the_public_one():
    env = simpy.Environment(initial_time=5)
    env.run(until=Timeout(env, 37))
    assert env._now == env.now == 42


def test_simpy_is_the_pinned_series():
    assert simpy.__version__.startswith("4.1."), simpy.__version__
