"""edgesim: faithful federated learning mechanisms on a simulated wireless edge network."""

__version__ = "0.1.0"
