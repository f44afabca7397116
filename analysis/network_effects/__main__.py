"""``python -m analysis.network_effects [--quick] [--out DIR] [--workers N]``."""

from analysis.network_effects import main

main()
