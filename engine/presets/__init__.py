"""The shipped preset scenarios, built from the topology generators."""
