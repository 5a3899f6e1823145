"""One training step: layout, compute, communication per parallelism and their overlap."""
