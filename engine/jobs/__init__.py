"""Shared clusters: several jobs on one fabric, placed (`placement`) and timed alone and
together (`interference`)."""
