"""loadkit: the parts of the load-test engines (storm.py and friends), Python 3 standard library only.

  stats        percentile (nearest rank, p in 0..100) and mean, used by every engine and report
  http         HTTP/1.1 on loopback: URLs, request and response heads, head parsing, body decoding, a GET
  pacing       one timer (Ticker) for every rate-limited socket, and the token-bucket Flow they share
  slowcallers  the storm's callers: slow downloads and slow uploads, rate-limited, all on one event loop
  slowbackend  a backend that reads every request body slowly (the upload storm's far end)
  sampler      the fresh-connection probes and the RSS sampler, run in a process of their own
  run          one storm against one target, written as JSON
  summary      the figures of one run (delivered fractions, probe percentiles, RSS growth)
  report       summary.md and the CSV files of a report folder
  plot         storm.png (matplotlib, optional)
"""
