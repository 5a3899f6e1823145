"""Open formats in and out: a scenario's expanded fabric and traffic written for the
packet-level and system simulators (ns-3 RDMA/HPCC and SimAI, htsim, ASTRA-sim) and for
graph tools (GraphML), and topologies and traffic matrices read back into a scenario.

Each writer has a reader, so every export is re-read and compared before it is handed
over (docs/formats.md says what each format keeps and what it loses).
"""
