"""`berth bench`: throughput and latency of the scheduler on scheduler_perf-style workloads."""
