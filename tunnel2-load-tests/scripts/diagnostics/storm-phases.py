import struct, sys, json, glob, os, statistics
d = sys.argv[1]; PUB = 12550; BE = 12561
def pcap(path):
    f = open(path, 'rb'); h = f.read(24)
    magic = struct.unpack('<I', h[:4])[0]; nano = magic == 0xa1b23c4d
    link = struct.unpack('<I', h[20:24])[0]
    while True:
        ph = f.read(16)
        if len(ph) < 16: return
        ts, tf, incl, orig = struct.unpack("<IIII", ph); data = f.read(incl)
        if len(data) < incl or len(data) < 40: return
        t = ts + tf / (1e9 if nano else 1e6)
        off = 14 if link == 1 else 16
        ip = data[off:]; ihl = (ip[0] & 15) * 4
        tcp = ip[ihl:]; sp, dp = struct.unpack('>HH', tcp[:4]); doff = (tcp[12] >> 4) * 4
        yield t, sp, dp, tcp[doff:]
gets_pub = []; resp_pub = {}; be = []; syn = {}
for t, sp, dp, pl in pcap(d + '/cap.pcap'):
    if dp == PUB and not pl: syn.setdefault(sp, []).append(t); continue
    if dp == PUB and pl.startswith(b'GET') and b'/loadtest/ping' in pl: gets_pub.append((t, sp))
    elif sp == PUB: resp_pub.setdefault(dp, []).append(t)
    elif dp == BE and pl.startswith(b'GET'): be.append(('get', t, sp))
    elif sp == BE: be.append(('resp' if pl.startswith(b'HTTP') else 'more', t, dp))
ev = {}
for p in glob.glob(d + '/phase.*'):
    for line in open(p):
        t, ph, i = line.strip().split(','); ev.setdefault(ph, []).append((float(t), int(i)))
for k in ev: ev[k].sort()
# the storm's TunnelClient: the phase file whose cli.* events are most numerous
rep = open(d + '/report.txt').read().strip(); J = json.load(open("/work/wt-storm/" + rep + '/tunnel.json'))
probes = J['probes']
gets_pub.sort()
# backend: each GET answered by the next HTTP on the same client port
be_get = []; pend = {}
for kind, t, port in be:
    if kind == 'get': pend[port] = t; be_get.append([t, None, port, None])
    elif kind == 'more':
        for row in reversed(be_get):
            if row[2] == port and row[1] is not None: row[3] = t; break
    else:
        for row in reversed(be_get):
            if row[2] == port and row[1] is None: row[1] = t; break
used_be = set()
def first_after(lst, t0, used):
    for j, x in enumerate(lst):
        if j not in used and x[0] >= t0: used.add(j); return x
    return None
sentry = {}; sopen = {}; sresp = {}
for k, lst in ev.items():
    for t, i in lst:
        if k == 'srv.entry': sentry.setdefault(i, []).append(t)
        elif k.startswith('srv.opened:'): sopen.setdefault(i, []).append((t, int(k.split(':')[1])))
        elif k == 'srv.resphead': sresp.setdefault(i, []).append(t)
def after(lst, t0):
    c = [x for x in (lst or []) if (x[0] if isinstance(x, tuple) else x) >= t0 - 0.0005]
    return min(c) if c else None
cli = {}
for ph in ('cli.opened', 'cli.relaystart', 'cli.admitted', 'cli.resphead'):
    for t, i in ev.get(ph, []): cli.setdefault((ph, i), []).append(t)
rows = []; ue = set(); uo = set()
extra = len(gets_pub) - len(probes)
print('extra GETs (readiness checks before the probes):', extra)
for n, (tg, port) in enumerate(gets_pub):
    seq = n - extra; pr = probes[seq] if 0 <= seq < len(probes) else None
    if pr is None: continue
    ent = after(sentry.get(port), tg); op = after(sopen.get(port), tg)
    sid = op[1] if op else None
    def c(ph):
        if sid is None: return None
        ts = [x for x in cli.get((ph, sid), []) if x >= (op[0] - 0.001)]
        return min(ts) if ts else None
    co, crs, cad, crh = c('cli.opened'), c('cli.relaystart'), c('cli.admitted'), c('cli.resphead')
    bg = None
    if cad and crh:
        c = [x for x in be_get if cad - 0.0005 <= x[0] <= crh + 0.0005]
        bg = max(c) if c else None
    sr = after(sresp.get(port), tg)
    rs = [x for x in resp_pub.get(port, []) if tg <= x <= tg + 30]; rp = rs[0] if rs else None; rs = [x for x in rs if x <= rp + 1]; rl = rs[-1] if rs else None
    rows.append(dict(syn=max([x for x in syn.get(port, []) if x <= tg] or [None], key=lambda x: x or 0), seq=seq, t=pr['t'] if pr else None, ms=pr['ms'] if pr else None, get=tg, entry=ent, opened=op[0] if op else None,
                     copened=co, crelay=crs, cadmit=cad, beget=bg[0] if bg else None, beresp=bg[1] if bg else None, cresph=crh, sresph=sr, resp=rp, respend=rl, sock=pr.get('socket_ms')))
phases = [('caller connect+send: SYN -> GET', 'syn', 'get'), ('kestrel: GET at port -> ProxyEntry', 'get', 'entry'), ('route/admit/open', 'entry', 'opened'), ('uplink: head queued -> client reader', 'opened', 'copened'),
          ('client hand-off to pool', 'copened', 'crelay'), ('client admission', 'crelay', 'cadmit'), ('backend conn + head write', 'cadmit', 'beget'),
          ('slow backend answers', 'beget', 'beresp'), ('client reads resp head', 'beresp', 'cresph'), ('uplink back: -> server owner', 'cresph', 'sresph'),
          ('server writes answer', 'sresph', 'resp'), ('answer head -> last answer packet', 'resp', 'respend'), ('TOTAL at server port', 'get', 'respend'), ('SYN -> answer', 'syn', 'respend')]
def ms(r, a, b): return None if r[a] is None or r[b] is None else (r[b] - r[a]) * 1000
def show(sel, title):
    v=[r['ms'] for r in sel if r['ms'] is not None]
    sk=[r['sock'] for r in sel if r.get('sock') is not None]
    print(f'## {title}: {len(sel)} probes; storm.py ms p50 {statistics.median(v):.1f} max {max(v):.1f}; storm.py minus SYN->answer max {max([(r["ms"] or 0) - (ms(r,"syn","resp") or 0) for r in sel]):.1f}')
    for name, a, b in phases:
        v = [ms(r, a, b) for r in sel]; v = [x for x in v if x is not None]
        if v: print(f'  {name:40s} p50 {statistics.median(v):7.1f}  max {max(v):7.1f}  (n={len(v)})')
first = [r for r in rows if r['t'] is not None and 0 <= r['t'] < 1.0]
second = [r for r in rows if r['t'] is not None and 1.0 <= r['t'] < 2.0]
later = [r for r in rows if r['t'] is not None and r['t'] >= 2.0]
before = [r for r in rows if r['t'] is not None and r['t'] < 0]
show(before, 'before the storm'); show(first, 'second 0'); show(second, 'second 1'); show(later, 'after 2 s')
if '-v' in sys.argv:
    for r in first + second:
        print(r['seq'], r['t'], r['ms'], r['sock'], ' '.join(f'{name.split(":")[0][:10]}={ms(r,a,b):.0f}' if ms(r,a,b) is not None else f'{name[:10]}=?' for name, a, b in phases))
