"""Unit costs of a run's wall time, read by :mod:`edgesim.plan_wall` (``edgesim plan``).

Written by ``python analysis/benchmarks/bench_plan.py --write``, which measures
each cost on the machine it runs on (analysis/benchmarks/plan_calibration.py says
how): rerun it after a change to the driver, the network or the mechanisms, rather
than editing the numbers. Each cost is seconds per count; the plan multiplies it by
its own counts of exchanges, recipients and cells (docs/performance.md, "Know
before you run").
"""

#: Where and when the costs were measured.
MEASURED_ON = (
    "2026-11-28 03:35 UTC; 2 CPUs (x86_64), load average 0.9, 0.8, 0.9; Python 3.11.7, numpy 2.4.6"
)

#: What the simulated network adds to a run, by fidelity, access scheme, link class
#: (``equal``/``rates``/``staggered``) and exchange kind (``steady``/``others``/``general``):
#: seconds per exchange, per recipient, per cell an exchange reaches.
NETWORK = {
    "batched": {
        "ofdma": {
            "equal": {
                "general": (0.000721, 5.41e-07, 1.27e-05),
                "others": (0.000282, 8.61e-07, 8.09e-06),
                "steady": (2.44e-05, 1.49e-08, 4.3e-08),
            },
            "rates": {
                "general": (0.000785, 6.09e-07, 3.07e-06),
                "others": (0.000704, 4.61e-07, 7.64e-06),
                "steady": (3.68e-05, 1.02e-08, 7.46e-08),
            },
            "staggered": {
                "general": (0.000832, 4.45e-07, 0.0),
                "others": (0.000418, 5.07e-07, 2.17e-05),
                "steady": (0.000318, 1.04e-07, 8.09e-07),
            },
        },
        "proportional-fair": {
            "equal": {
                "general": (0.00083, 2.24e-05, 0.0),
                "others": (0.000658, 2.06e-05, 0.0),
                "steady": (0.000682, 1.91e-05, 0.0),
            },
            "rates": {
                "general": (0.00083, 2.24e-05, 0.0),
                "others": (0.000658, 2.06e-05, 0.0),
                "steady": (0.000682, 1.91e-05, 0.0),
            },
            "staggered": {
                "general": (0.00083, 2.24e-05, 0.0),
                "others": (0.000658, 2.06e-05, 0.0),
                "steady": (0.000682, 1.91e-05, 0.0),
            },
        },
        "round-robin": {
            "equal": {
                "general": (0.000555, 2.11e-07, 8.95e-06),
                "others": (0.00035, 1.17e-07, 1.4e-05),
                "steady": (2.84e-05, 0.0, 0.0),
            },
            "rates": {
                "general": (0.000519, 4.27e-07, 5.09e-06),
                "others": (0.000505, 3.68e-07, 1.98e-05),
                "steady": (2.25e-05, 4.92e-09, 5.71e-09),
            },
            "staggered": {
                "general": (0.000804, 2.88e-07, 0.0),
                "others": (0.000584, 6.46e-07, 9.55e-07),
                "steady": (0.000278, 2.18e-07, 0.0),
            },
        },
        "tdma": {
            "equal": {
                "general": (0.000399, 4.52e-07, 1.04e-05),
                "others": (0.000392, 1.73e-07, 1.12e-05),
                "steady": (2.19e-05, 3.58e-09, 1.67e-07),
            },
            "rates": {
                "general": (0.000706, 4.19e-07, 1.47e-06),
                "others": (0.000429, 2.08e-07, 9.93e-06),
                "steady": (2.4e-05, 6.41e-09, 0.0),
            },
            "staggered": {
                "general": (0.000698, 4.65e-07, 1.52e-05),
                "others": (0.000689, 4.01e-07, 1.35e-05),
                "steady": (0.000237, 4.61e-07, 9.02e-07),
            },
        },
        "wifi": {
            "equal": {
                "general": (0.00068, 2.75e-06, 0.0),
                "others": (0.000409, 3.35e-07, 6.93e-05),
                "steady": (3.39e-05, 1.04e-08, 4.27e-07),
            },
            "rates": {
                "general": (0.000688, 1.37e-06, 2.48e-05),
                "others": (0.00063, 1.31e-06, 2.78e-05),
                "steady": (3.8e-05, 2.63e-08, 0.0),
            },
            "staggered": {
                "general": (0.000647, 1.45e-06, 2.72e-05),
                "others": (0.000646, 1.3e-06, 3.05e-05),
                "steady": (0.000639, 1.32e-06, 1.89e-05),
            },
        },
    },
    "events": {
        "ofdma": {
            "equal": {
                "general": (0.000662, 1.73e-06, 1.27e-05),
                "others": (0.00046, 1.61e-06, 1.29e-05),
                "steady": (7.09e-05, 9.28e-07, 9.96e-07),
            },
            "rates": {
                "general": (0.000642, 3.77e-06, 7.76e-05),
                "others": (0.000482, 5.22e-06, 0.0),
                "steady": (0.000131, 2.8e-06, 4.55e-06),
            },
            "staggered": {
                "general": (0.000383, 2.79e-06, 4.53e-05),
                "others": (0.000774, 3.41e-06, 0.0),
                "steady": (0.000551, 3.64e-06, 0.0),
            },
        },
        "proportional-fair": {
            "equal": {
                "general": (0.000425, 1.95e-05, 0.0),
                "others": (0.000441, 1.57e-05, 0.0),
                "steady": (0.000573, 1.49e-05, 0.0),
            },
            "rates": {
                "general": (0.000425, 1.95e-05, 0.0),
                "others": (0.000441, 1.57e-05, 0.0),
                "steady": (0.000573, 1.49e-05, 0.0),
            },
            "staggered": {
                "general": (0.000425, 1.95e-05, 0.0),
                "others": (0.000441, 1.57e-05, 0.0),
                "steady": (0.000573, 1.49e-05, 0.0),
            },
        },
        "round-robin": {
            "equal": {
                "general": (0.000601, 1.43e-06, 8.35e-06),
                "others": (0.000548, 1.57e-06, 0.0),
                "steady": (8.84e-05, 9.91e-07, 3.07e-06),
            },
            "rates": {
                "general": (0.000755, 6.32e-06, 1.11e-05),
                "others": (0.000605, 3.56e-06, 0.0),
                "steady": (9.61e-05, 2.95e-06, 0.0),
            },
            "staggered": {
                "general": (0.000527, 2.46e-06, 3.96e-05),
                "others": (0.000539, 2.83e-06, 4.73e-05),
                "steady": (0.000279, 2.57e-06, 0.0),
            },
        },
        "tdma": {
            "equal": {
                "general": (0.000544, 1.98e-06, 0.0),
                "others": (0.00068, 1.71e-06, 0.0),
                "steady": (0.000223, 1.02e-06, 0.0),
            },
            "rates": {
                "general": (0.000459, 3.02e-06, 1.12e-05),
                "others": (0.000432, 2.82e-06, 1.57e-05),
                "steady": (5.48e-05, 2.47e-06, 8.06e-06),
            },
            "staggered": {
                "general": (0.000394, 4.25e-06, 1.49e-05),
                "others": (0.000462, 2.65e-06, 0.0),
                "steady": (0.000338, 2.26e-06, 0.0),
            },
        },
        "wifi": {
            "equal": {
                "general": (0.000785, 2.69e-06, 3.38e-05),
                "others": (0.000511, 1.47e-06, 6.92e-05),
                "steady": (7.95e-05, 9.9e-07, 4.22e-06),
            },
            "rates": {
                "general": (0.00077, 6.91e-06, 2.87e-05),
                "others": (0.000718, 6.57e-06, 3.46e-05),
                "steady": (7.7e-05, 5.01e-06, 1.29e-07),
            },
            "staggered": {
                "general": (0.000769, 4.94e-06, 2.57e-05),
                "others": (0.00046, 5.24e-06, 1.98e-05),
                "steady": (0.000531, 2.41e-06, 1.73e-05),
            },
        },
    },
}

#: What a simulated network costs once in a fresh process (imports, compiled code
#: loaded), by fidelity: seconds.
START_S = {"batched": 0.595, "events": 0.737}

#: The modules a run imports where it first needs them: seconds each.
IMPORT_S = {"scipy.optimize": 0.191, "scipy.special": 0.272}

#: The in-memory driver and the mechanism's own work (reports excluded), by mechanism:
#: its rounds and its problems' rounds, seconds per exchange and per recipient.
MEMORY = {
    "dp-ffl": {"problem": (0.000171, 5.71e-07), "round": (0.000179, 3.72e-07)},
    "fedavg": {"problem": (4.88e-05, 1.01e-07), "round": (4.88e-05, 1.01e-07)},
    "ffl": {"problem": (7.82e-05, 2.88e-07), "round": (4.88e-05, 1.01e-07)},
    "vcg-federated": {"problem": (6.78e-05, 7.52e-08), "round": (4.88e-05, 1.01e-07)},
}

#: A run's output: seconds per run, and per agent as JSON or as a sidecar (the four
#: per-agent passes at each agent's model are counted apart).
OUTPUT = {"json_agent_s": 1.33e-05, "run_s": 0.0164, "sidecar_agent_s": 4.98e-06}

#: Secure aggregation's masks: seconds per mask word (and pair's key work in words).
SECAGG_WORD_S = 3.6e-09
