"""Collective communication: the schedules of each algorithm (`schedules`), the technology
knobs in force (`technology`), rank placement (`placement`) and their timing on a routed
fabric (`timing`, returning a `result`)."""
