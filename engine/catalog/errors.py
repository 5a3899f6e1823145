"""The error of a catalog that cannot be used: missing, malformed or unsourced."""

from __future__ import annotations


class CatalogError(Exception):
    """The device catalog file is missing, malformed or lacks a source for a figure."""
