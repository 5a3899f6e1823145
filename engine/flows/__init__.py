"""Traffic on routed paths: demand patterns, max-min fair rates, the fluid simulation and
link utilization summaries per tier."""
