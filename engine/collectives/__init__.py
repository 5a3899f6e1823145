"""Collective communication: the schedules of each algorithm (`schedules`) and their timing
on a routed fabric (`timing`)."""
