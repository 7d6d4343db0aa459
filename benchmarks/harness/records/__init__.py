"""harness.records: the measurements that are not specs, one module per record (chapter 01).

Role: the micro-benchmarks (micro), handoff-probe (probe), the probes that write one JSON
report each (tools), the loop peers (loop_peers), the loop profile and flame graphs
(loop_profile, flame_graph), failover behind HAProxy (failover) and the Prometheus panel
(panel).
"""
