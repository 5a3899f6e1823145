"""FabricLab engine: everything that runs without Qt."""

__version__ = "0.1.0"
