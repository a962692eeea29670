import sys, subprocess, importlib.util, io, contextlib
names = {'caller connect+send: SYN -> GET':'caller: SYN→GET','kestrel: GET at port -> ProxyEntry':'server: Kestrel accept/read/parse → ProxyEntry','route/admit/open':'server: route, access, stream open',
 'uplink: head queued -> client reader':'head queued → client reader (server loop writes, client loop reads)','client hand-off to pool':'client: hand-off to the pool','client admission':'client: admission (concurrency slot)',
 'backend conn + head write':'client: backend connection + head written','slow backend answers':'slow backend answers','client reads resp head':'client: reads the answer head',
 'uplink back: -> server owner':'answer: client → uplink → server owner (pool)','server writes answer':'server: writes the answer to the caller'}
def rows(run):
    src = open('/tmp/storm-work/analyze.py').read()
    g = {'__name__':'x'}; sys.argv = ['x', '/tmp/storm-work/' + run]
    with contextlib.redirect_stdout(io.StringIO()):
        exec(src, g)
    return g['rows'], g['phases'], g['ms']
for label, runs in (('base', sys.argv[1].split(',')), ('lane', sys.argv[2].split(','))):
    tot = {}; total = 0; n = 0; allp = 0
    for r in runs:
        R, phases, ms = rows(r)
        for row in R:
            if row['t'] is None or not (0 <= row['t'] < 2): continue
            allp += 1
            T = ms(row, 'syn', 'respend')
            if T is None or T <= 50: continue
            n += 1; total += T
            for name, a, b in phases:
                if name in names:
                    v = ms(row, a, b)
                    if v is not None: tot[name] = tot.get(name, 0) + v
    print(f'### {label} ({",".join(runs)}): {n} of {allp} probes of the first 2 s over 50 ms at the server port, {total:.0f} ms in all')
    for name in names:
        print(f'| {names[name]} | {tot.get(name,0):.0f} ms | {tot.get(name,0)/total*100:.0f} % |')
