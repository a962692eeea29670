import subprocess, re, sys, json
runs = sys.argv[1:]
def phases(r):
    out = subprocess.run(['python3', '/tmp/storm-work/analyze.py', '/tmp/storm-work/' + r], capture_output=True, text=True).stdout
    sec = {}; cur = None
    for line in out.splitlines():
        m = re.match(r'## (.*?):', line)
        if m: cur = m.group(1); sec[cur] = {}; continue
        m = re.match(r'\s+(.*?)\s+p50\s+(-?[\d.]+)\s+max\s+(-?[\d.]+)', line)
        if m and cur: sec[cur][m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return sec
print('| run | load | delivered | probes p99 / max | slowest probe s0 / s1 / s2 (storm.py) | SYN→answer max s0 / s1 | Kestrel: GET→ProxyEntry max s0 / s1 | head queued→client reader max s0 / s1 | client hand-off max s0 / s1 | answer: client→server owner max s0 / s1 | request heads at backend p50 / max | RSS growth server / client |')
print('|---|---|---|---|---|---|---|---|---|---|---|---|')
for r in runs:
    load = open(f'/tmp/storm-work/{r}/load.txt').read().split('load average: ')
    l0 = load[1].split(',')[0]; l1 = load[2].split(',')[0]
    so = open(f'/tmp/storm-work/{r}/storm.out').read()
    m = re.search(r'delivered mean ([\d.]+).*?p99 ([\d.]+ m?s) max ([\d.]+ m?s)', so)
    hd = re.search(r'request head at the backend p50 ([\d.]+ m?s), max ([\d.]+ m?s)', so)
    rep = open(f'/tmp/storm-work/{r}/report.txt').read().strip()
    J = json.load(open('/work/wt-storm/' + rep + '/tunnel.json'))
    pr = J['probes']
    def slow(s): 
        v = [p['ms'] for p in pr if s <= p['t'] < s + 1 and p['ms'] is not None]; return f"{max(v):.0f}" if v else '-'
    rss = re.search(r'TunnelServer \+([\d.]+), TunnelClient-storm \+([\d.]+)', so)
    P = phases(r)
    def mx(ph, s): 
        x = P.get(s, {}).get(ph); return f"{x[1]:.0f}" if x else '-'
    s0, s1 = 'second 0', 'second 1'
    print(f"| {r} | {l0}→{l1} | {m.group(1)} | {m.group(2)} / {m.group(3)} | {slow(0)} / {slow(1)} / {slow(2)} ms | {mx('SYN -> answer', s0)} / {mx('SYN -> answer', s1)} ms | "
          f"{mx('kestrel: GET at port -> ProxyEntry', s0)} / {mx('kestrel: GET at port -> ProxyEntry', s1)} | {mx('uplink: head queued -> client reader', s0)} / {mx('uplink: head queued -> client reader', s1)} | "
          f"{mx('client hand-off to pool', s0)} / {mx('client hand-off to pool', s1)} | {mx('uplink back: -> server owner', s0)} / {mx('uplink back: -> server owner', s1)} | {hd.group(1)} / {hd.group(2)} | +{rss.group(1)} / +{rss.group(2)} MiB |")
