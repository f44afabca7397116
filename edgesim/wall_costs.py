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
    "2026-12-07 13:29 UTC; 2 CPUs (x86_64), load average 1.2, 1.2, 1.4; Python 3.11.7, numpy 2.4.6"
)

#: What the simulated network adds to a run, by fidelity, access scheme, link class
#: (``equal``/``rates``/``staggered``) and exchange kind (``steady``/``others``/``general``):
#: seconds per exchange, per recipient, per cell an exchange reaches.
NETWORK = {
    "batched": {
        "ofdma": {
            "equal": {
                "general": (0.000409, 5.15e-07, 6.24e-06),
                "others": (0.000316, 4.17e-07, 0.0),
                "steady": (3.71e-05, 2.99e-09, 0.0),
            },
            "rates": {
                "general": (0.000436, 4.36e-07, 0.0),
                "others": (0.000511, 2.23e-07, 0.0),
                "steady": (5.68e-05, 0.0, 0.0),
            },
            "staggered": {
                "general": (0.000501, 4.44e-07, 0.0),
                "others": (0.000426, 3.48e-07, 1.76e-07),
                "steady": (0.000254, 2.33e-07, 0.0),
            },
        },
        "proportional-fair": {
            "equal": {
                "general": (0.000365, 2.87e-05, 0.0),
                "others": (0.000556, 1.56e-05, 8.19e-06),
                "steady": (0.00041, 1.62e-05, 8.52e-05),
            },
            "rates": {
                "general": (0.000365, 2.87e-05, 0.0),
                "others": (0.000556, 1.56e-05, 8.19e-06),
                "steady": (0.00041, 1.62e-05, 8.52e-05),
            },
            "staggered": {
                "general": (0.000365, 2.87e-05, 0.0),
                "others": (0.000556, 1.56e-05, 8.19e-06),
                "steady": (0.00041, 1.62e-05, 8.52e-05),
            },
        },
        "round-robin": {
            "equal": {
                "general": (0.000511, 6.08e-08, 3.96e-06),
                "others": (0.000326, 1.35e-07, 7.01e-06),
                "steady": (3.9e-05, 0.0, 6.79e-07),
            },
            "rates": {
                "general": (0.000487, 4.8e-07, 4.73e-06),
                "others": (0.000468, 5.36e-07, 2.01e-06),
                "steady": (4.37e-05, 0.0, 1.07e-07),
            },
            "staggered": {
                "general": (0.00075, 2.28e-07, 0.0),
                "others": (0.000626, 4.6e-07, 1.71e-06),
                "steady": (0.000306, 2.77e-07, 0.0),
            },
        },
        "tdma": {
            "equal": {
                "general": (0.000597, 2.71e-07, 1.8e-06),
                "others": (0.000566, 2.17e-08, 1.05e-05),
                "steady": (3.1e-05, 9.1e-09, 0.0),
            },
            "rates": {
                "general": (0.000488, 2.48e-07, 4.58e-06),
                "others": (0.000474, 1.47e-07, 4.65e-06),
                "steady": (3.4e-05, 3.52e-08, 2.45e-07),
            },
            "staggered": {
                "general": (0.000642, 3.46e-07, 3.92e-06),
                "others": (0.000547, 1.88e-07, 3.89e-06),
                "steady": (0.00029, 1.67e-07, 1.74e-06),
            },
        },
        "wifi": {
            "equal": {
                "general": (0.000668, 1.14e-06, 0.0),
                "others": (0.00037, 1.35e-07, 4.04e-05),
                "steady": (3.96e-05, 0.0, 1.53e-07),
            },
            "rates": {
                "general": (0.000495, 7.53e-07, 1.54e-05),
                "others": (0.000459, 6.95e-07, 1.53e-05),
                "steady": (3.28e-05, 2.92e-08, 1.13e-06),
            },
            "staggered": {
                "general": (0.000509, 8.05e-07, 2.19e-05),
                "others": (0.000454, 6.63e-07, 2.34e-05),
                "steady": (0.000442, 6.08e-07, 2.06e-05),
            },
        },
    },
    "events": {
        "ofdma": {
            "equal": {
                "general": (0.000441, 9.63e-07, 0.0),
                "others": (0.000332, 1.03e-06, 0.0),
                "steady": (6.34e-05, 5.05e-07, 1.51e-05),
            },
            "rates": {
                "general": (0.000457, 2.24e-06, 0.0),
                "others": (0.000411, 2.09e-06, 5.22e-06),
                "steady": (8.2e-05, 1.62e-06, 0.0),
            },
            "staggered": {
                "general": (0.000475, 1.31e-06, 0.0),
                "others": (0.000447, 9.71e-07, 2.32e-06),
                "steady": (0.000292, 8.33e-07, 8e-07),
            },
        },
        "proportional-fair": {
            "equal": {
                "general": (0.00074, 3.23e-05, 0.0),
                "others": (0.000889, 2.82e-05, 0.000108),
                "steady": (0.00126, 2.74e-05, 0.0),
            },
            "rates": {
                "general": (0.00074, 3.23e-05, 0.0),
                "others": (0.000889, 2.82e-05, 0.000108),
                "steady": (0.00126, 2.74e-05, 0.0),
            },
            "staggered": {
                "general": (0.00074, 3.23e-05, 0.0),
                "others": (0.000889, 2.82e-05, 0.000108),
                "steady": (0.00126, 2.74e-05, 0.0),
            },
        },
        "round-robin": {
            "equal": {
                "general": (0.000479, 8.01e-07, 3.6e-06),
                "others": (0.000453, 9.84e-07, 0.0),
                "steady": (0.000116, 4.79e-07, 3.78e-06),
            },
            "rates": {
                "general": (0.000534, 2.42e-06, 5e-07),
                "others": (0.000564, 2.24e-06, 0.0),
                "steady": (6.61e-05, 2.05e-06, 0.0),
            },
            "staggered": {
                "general": (0.000596, 9.46e-07, 1.08e-05),
                "others": (0.000452, 1.26e-06, 0.0),
                "steady": (0.000329, 8.24e-07, 0.0),
            },
        },
        "tdma": {
            "equal": {
                "general": (0.000595, 1.9e-06, 0.0),
                "others": (0.000743, 1.02e-06, 0.0),
                "steady": (0.000116, 7.7e-07, 0.0),
            },
            "rates": {
                "general": (0.000539, 2.8e-06, 0.0),
                "others": (0.000646, 2.29e-06, 0.0),
                "steady": (8.89e-05, 2.02e-06, 7.99e-06),
            },
            "staggered": {
                "general": (0.000704, 1.41e-06, 0.0),
                "others": (0.000612, 1.3e-06, 0.0),
                "steady": (0.000405, 1.1e-06, 0.0),
            },
        },
        "wifi": {
            "equal": {
                "general": (0.000484, 1.71e-06, 1.78e-05),
                "others": (0.000503, 1.02e-06, 4.69e-05),
                "steady": (0.000102, 6.69e-07, 7.93e-06),
            },
            "rates": {
                "general": (0.000573, 3.99e-06, 1.8e-05),
                "others": (0.000346, 3.38e-06, 0.000106),
                "steady": (4.55e-05, 2.31e-06, 2.29e-05),
            },
            "staggered": {
                "general": (0.000927, 2.34e-06, 9.29e-05),
                "others": (0.000507, 2.08e-06, 0.000118),
                "steady": (0.000421, 2.06e-06, 6.68e-05),
            },
        },
    },
}

#: What a simulated network costs once in a fresh process (imports, compiled code
#: loaded), by fidelity: seconds.
START_S = {"batched": 0.965, "events": 0.833}

#: The modules a run imports where it first needs them: seconds each.
IMPORT_S = {"scipy.optimize": 0.29, "scipy.special": 0.371}

#: The in-memory driver and the mechanism's own work (reports excluded), by mechanism:
#: its rounds and its problems' rounds, seconds per exchange and per recipient.
MEMORY = {
    "dp-ffl": {"problem": (0.000145, 8.18e-07), "round": (0.00012, 4.5e-07)},
    "fedavg": {"problem": (5.71e-05, 1.85e-08), "round": (5.71e-05, 1.85e-08)},
    "ffl": {"problem": (0.000177, 0.0), "round": (5.71e-05, 1.85e-08)},
    "vcg-federated": {"problem": (5.33e-05, 4.17e-08), "round": (5.71e-05, 1.85e-08)},
}

#: A run's output: seconds per run, and per agent as JSON or as a sidecar (the four
#: per-agent passes at each agent's model are counted apart).
OUTPUT = {"json_agent_s": 1.31e-05, "run_s": 0.0164, "sidecar_agent_s": 3.12e-06}

#: Secure aggregation's masks: seconds per mask word (and pair's key work in words).
SECAGG_WORD_S = 3.6e-09
