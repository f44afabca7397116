"""The version of edgesim (one place; the package, the JSON output and the sweep records read it)."""

__version__ = "0.1.0"
