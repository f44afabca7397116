"""``python -m edgesim.scenario``: print the scenario-key table of docs/reference.md (Markdown)."""

from edgesim.scenario.reference import reference_markdown

print(reference_markdown(), end="")
