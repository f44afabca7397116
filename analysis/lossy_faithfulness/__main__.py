"""``python -m analysis.lossy_faithfulness [--quick] [--out DIR] [--workers N]``."""

from analysis.lossy_faithfulness import main

main()
