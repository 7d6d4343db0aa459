-- harness/run/wrk_report.lua: wrk's end-of-run summary as one JSON line (chapter 01).
-- Role: lets the harness read wrk's counts and latency percentiles (in µs) without
-- scraping its human-readable text. The line starts with "WRK-JSON " so the harness
-- can find it among wrk's own output.
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK-JSON {"requests":%d,"bytes":%d,"duration_us":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"max":%d,"mean":%.3f,"stdev":%.3f,' ..
    '"p50":%d,"p90":%d,"p99":%d,"p99_9":%d}}\n',
    summary.requests, summary.bytes, summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.max, latency.mean, latency.stdev,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency:percentile(99.9)))
end
