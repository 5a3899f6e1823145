"""The fabric as arrays: generators of the standard topologies, expansion of a scenario into
nodes and directed links, and the graph kernels (components, distances) that work on them."""
