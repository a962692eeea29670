import sys, io, contextlib
run = sys.argv[1]
src = open('/tmp/storm-work/analyze.py').read(); g = {'__name__': 'x'}; sys.argv = ['x', '/tmp/storm-work/' + run]
with contextlib.redirect_stdout(io.StringIO()):
    exec(src, g)
ev, rows, ms = g['ev'], g['rows'], g['ms']
up = sorted(t for t, _ in ev.get('srv.upload', []))
cup = sorted(t for t, _ in ev.get('cli.upload', []))
r0 = [r for r in rows if r['t'] is not None and abs(r['t']) < 0.05][0]
t0 = r0['get'] - max(0.0, 0)  # the probe sent at t=0 is the storm's start, near enough
print(f'{run}: {len(up)} upload heads at ProxyEntry: first {1000*(up[0]-t0):.0f} ms, p50 {1000*(up[len(up)//2]-t0):.0f} ms, last {1000*(up[-1]-t0):.0f} ms after the storm started; at the client: p50 {1000*(cup[len(cup)//2]-t0):.0f}, last {1000*(cup[-1]-t0):.0f} ms')
for r in rows:
    if r['t'] is None or not (0 <= r['t'] < 2) or r['entry'] is None: continue
    ahead = sum(1 for x in up if r['get'] < x < r['entry'])
    k = ms(r, 'get', 'entry'); T = ms(r, 'syn', 'respend')
    print(f"  probe t={r['t']:.1f}: GET at port {1000*(r['get']-t0):.0f} ms, Kestrel phase {k:.0f} ms, {ahead} upload heads reached ProxyEntry meanwhile; SYN->answer {T if T is None else round(T)} ms")
