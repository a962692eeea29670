#!/bin/bash
# usage: run.sh LABEL [extra env...]   (runs from /work/wt-storm)
label=$1; shift
cd /work/wt-storm
out=/tmp/storm-work/$label; rm -rf $out; mkdir -p $out
export TUNNEL2_PUBLIC_PORT=12550 TUNNEL2_TUNNEL_PORT=12551 TUNNEL2_BACKEND_PORT=12557 TUNNEL2_RUN_DIR=/tmp/storm-run \
  STORM_NGINX_PORT=12560 STORM_BACKEND_PORT=12561 TUNNEL2_PHASE_TRACE=$out/phase
for kv in "$@"; do export "$kv"; done
# GET and HTTP answers on the public port and the slow backend's port (the uploads are POSTs: only probes match)
tcpdump -i lo -n -s 200 -w $out/cap.pcap "tcp and (port 12550 or port 12561) and ((tcp[tcpflags] & tcp-syn != 0 and dst port 12550) or tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x47455420 or ((src port 12550 or src port 12561) and (ip[2:2] - ((ip[0]&0xf)<<2) - ((tcp[12]&0xf0)>>2)) > 0))" 2>$out/tcpdump.err &
tp=$!
sleep 1
uptime > $out/load.txt
nice -n 10 tunnel2-load-tests/scripts/storm.sh --callers 1000 --seconds 20 --direction upload --push \
  --targets "tunnel" --no-plot --probe-interval 0.1 > $out/storm.out 2>&1
echo "rc $?" >> $out/storm.out
uptime >> $out/load.txt
kill $tp; wait $tp 2>/dev/null
ls -d tunnel2-load-tests/reports/*-storm | tail -1 > $out/report.txt
