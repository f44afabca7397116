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
    "2026-11-27 21:58 UTC; 2 CPUs (x86_64), load average 3.3, 3.7, 4.6; Python 3.11.7, numpy 2.4.6"
)

#: What the simulated network adds to a run, by fidelity, access scheme, link class
#: (``equal``/``rates``/``staggered``) and exchange kind (``steady``/``others``/``general``):
#: seconds per exchange, per recipient, per cell an exchange reaches.
NETWORK = {
    "batched": {
        "ofdma": {
            "equal": {
                "general": (0.000467, 3.08e-07, 6.76e-06),
                "others": (0.000564, 1.06e-07, 7.7e-06),
                "steady": (2.59e-05, 1.01e-08, 1.01e-06),
            },
            "rates": {
                "general": (0.000612, 3.54e-07, 0.0),
                "others": (0.000547, 4.86e-07, 4.66e-06),
                "steady": (2.13e-05, 1.78e-08, 1.76e-07),
            },
            "staggered": {
                "general": (0.000452, 4.36e-07, 3e-05),
                "others": (0.00045, 3.3e-07, 4.9e-06),
                "steady": (0.000243, 1.8e-07, 0.0),
            },
        },
        "proportional-fair": {
            "equal": {
                "general": (0.000659, 1.91e-05, 3.98e-05),
                "others": (0.000636, 1.8e-05, 0.0),
                "steady": (0.000817, 1.58e-05, 0.0),
            },
            "rates": {
                "general": (0.000659, 1.91e-05, 3.98e-05),
                "others": (0.000636, 1.8e-05, 0.0),
                "steady": (0.000817, 1.58e-05, 0.0),
            },
            "staggered": {
                "general": (0.000659, 1.91e-05, 3.98e-05),
                "others": (0.000636, 1.8e-05, 0.0),
                "steady": (0.000817, 1.58e-05, 0.0),
            },
        },
        "round-robin": {
            "equal": {
                "general": (0.000742, 3.12e-07, 6.05e-06),
                "others": (0.00039, 1.79e-07, 1.28e-05),
                "steady": (2.21e-05, 1.5e-08, 0.0),
            },
            "rates": {
                "general": (0.000597, 3.75e-07, 3.59e-06),
                "others": (0.000633, 3.71e-07, 2.16e-06),
                "steady": (1.84e-05, 2.04e-08, 0.0),
            },
            "staggered": {
                "general": (0.000646, 6.68e-07, 0.0),
                "others": (0.000537, 4.62e-07, 4.79e-06),
                "steady": (0.000271, 1.7e-07, 0.0),
            },
        },
        "tdma": {
            "equal": {
                "general": (0.000453, 3.15e-07, 9.84e-06),
                "others": (0.000767, 4.75e-07, 1.73e-05),
                "steady": (3.43e-05, 3.26e-08, 0.0),
            },
            "rates": {
                "general": (0.0005, 3.04e-07, 1.45e-05),
                "others": (0.000404, 5.46e-07, 8.21e-06),
                "steady": (2.11e-05, 1.72e-08, 6.24e-08),
            },
            "staggered": {
                "general": (0.000505, 3.87e-07, 1.16e-05),
                "others": (0.000467, 3.74e-07, 8.92e-06),
                "steady": (0.000291, 1.96e-07, 4.33e-07),
            },
        },
        "wifi": {
            "equal": {
                "general": (0.000499, 1.95e-06, 0.0),
                "others": (0.000345, 3.37e-07, 3.86e-05),
                "steady": (2.37e-05, 2.04e-08, 2.97e-07),
            },
            "rates": {
                "general": (0.000485, 1.35e-06, 1.25e-05),
                "others": (0.000529, 9.45e-07, 1.97e-05),
                "steady": (2.46e-05, 3.23e-08, 0.0),
            },
            "staggered": {
                "general": (0.000659, 1.08e-06, 7.53e-06),
                "others": (0.000549, 1.06e-06, 1.76e-05),
                "steady": (0.000466, 9.05e-07, 1.72e-05),
            },
        },
    },
    "events": {
        "ofdma": {
            "equal": {
                "general": (0.000607, 1.01e-06, 4.23e-05),
                "others": (0.000351, 1.03e-06, 1.32e-05),
                "steady": (3.82e-05, 7.62e-07, 0.0),
            },
            "rates": {
                "general": (0.000585, 3.23e-06, 4.86e-06),
                "others": (0.000912, 5.09e-06, 0.0),
                "steady": (3.5e-05, 4.56e-06, 0.0),
            },
            "staggered": {
                "general": (0.000893, 1.84e-06, 5.39e-05),
                "others": (0.00041, 2.46e-06, 5.6e-05),
                "steady": (0.000381, 2.11e-06, 0.0),
            },
        },
        "proportional-fair": {
            "equal": {
                "general": (0.000994, 1.49e-05, 3.15e-05),
                "others": (0.000624, 1.52e-05, 0.0),
                "steady": (0.00126, 1.46e-05, 0.0),
            },
            "rates": {
                "general": (0.000994, 1.49e-05, 3.15e-05),
                "others": (0.000624, 1.52e-05, 0.0),
                "steady": (0.00126, 1.46e-05, 0.0),
            },
            "staggered": {
                "general": (0.000994, 1.49e-05, 3.15e-05),
                "others": (0.000624, 1.52e-05, 0.0),
                "steady": (0.00126, 1.46e-05, 0.0),
            },
        },
        "round-robin": {
            "equal": {
                "general": (0.000562, 1.16e-06, 4.51e-05),
                "others": (0.000453, 8.97e-07, 1.74e-05),
                "steady": (7.89e-05, 8.39e-07, 8.53e-06),
            },
            "rates": {
                "general": (0.000611, 3.23e-06, 8.35e-07),
                "others": (0.000825, 2.98e-06, 1.54e-05),
                "steady": (1.89e-05, 4.61e-06, 3.06e-06),
            },
            "staggered": {
                "general": (0.000692, 2.04e-06, 1.66e-06),
                "others": (0.000573, 2.42e-06, 0.0),
                "steady": (0.000291, 1.89e-06, 0.0),
            },
        },
        "tdma": {
            "equal": {
                "general": (0.000568, 1.91e-06, 0.0),
                "others": (0.000623, 2.01e-06, 0.0),
                "steady": (0.000219, 6.69e-07, 0.0),
            },
            "rates": {
                "general": (0.00101, 2.92e-06, 2.67e-06),
                "others": (0.000719, 3.88e-06, 4.41e-05),
                "steady": (0.0, 2.79e-06, 4.84e-05),
            },
            "staggered": {
                "general": (0.000744, 2.63e-06, 0.0),
                "others": (0.000719, 2.78e-06, 0.0),
                "steady": (0.000301, 2.54e-06, 0.0),
            },
        },
        "wifi": {
            "equal": {
                "general": (0.000489, 1.57e-06, 3.01e-05),
                "others": (0.000333, 1.09e-06, 3.54e-05),
                "steady": (4.6e-05, 6.15e-07, 3.94e-07),
            },
            "rates": {
                "general": (0.000483, 3.66e-06, 1.59e-05),
                "others": (0.000496, 3.56e-06, 7.82e-06),
                "steady": (3.73e-05, 2.56e-06, 5.47e-06),
            },
            "staggered": {
                "general": (0.000437, 2.92e-06, 3.51e-06),
                "others": (0.000451, 3.14e-06, 0.0),
                "steady": (0.000469, 2.71e-06, 9.33e-06),
            },
        },
    },
}

#: What a simulated network costs once in a fresh process (imports, compiled code
#: loaded), by fidelity: seconds.
START_S = {"batched": 0.423, "events": 0.611}

#: The modules a run imports where it first needs them: seconds each.
IMPORT_S = {"scipy.optimize": 0.161, "scipy.special": 9.71e-06}

#: The in-memory driver and the mechanism's own work (reports excluded), by mechanism:
#: its rounds and its problems' rounds, seconds per exchange and per recipient.
MEMORY = {
    "dp-ffl": {"problem": (8.47e-05, 2.11e-07), "round": (7.75e-05, 2.76e-07)},
    "fedavg": {"problem": (5.04e-05, 5.67e-08), "round": (5.04e-05, 5.67e-08)},
    "ffl": {"problem": (7.29e-05, 9.52e-08), "round": (5.04e-05, 5.67e-08)},
    "vcg-federated": {"problem": (3.24e-05, 6.7e-08), "round": (5.04e-05, 5.67e-08)},
}

#: A run's output: seconds per run, and per agent as JSON or as a sidecar (the four
#: per-agent passes at each agent's model are counted apart).
OUTPUT = {"json_agent_s": 6e-06, "run_s": 0.0106, "sidecar_agent_s": 0.0}

#: Secure aggregation's masks: seconds per mask word (and pair's key work in words).
SECAGG_WORD_S = 3.6e-09
