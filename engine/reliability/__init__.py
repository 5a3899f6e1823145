"""Goodput under failures: job interruptions from a fabric's parts, and what they cost.

`parts` counts what can interrupt a job from the bill of materials (engine.cost), `model`
turns those counts and a training step into interruptions per day, the checkpoint interval
and effective goodput. It sits above `training` and `cost` and reads only their results.
"""
