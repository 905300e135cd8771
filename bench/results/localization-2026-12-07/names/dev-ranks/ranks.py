import sys, json, os, subprocess, time, collections
# usage: ranks.py TASKS TREES SERVER QKEY  -> jsonl: id, first gold rank (0 = not in 200)
tasks_path, trees, server, qkey = sys.argv[1:5]
tasks=[json.loads(l) for l in open(tasks_path)]
def hit(r, t):
    return any(r[0]==g["path"] and ((r[1] <= g["end"] and g["line"] <= max(r[1], r[2])) or (r[3] and r[3]==g["name"])) for g in t["gold"])
groups = collections.OrderedDict()
for t in tasks: groups.setdefault(t['cutoff'], []).append(t)
for cutoff, ts in groups.items():
    tree = os.path.join(trees, cutoff)
    p = subprocess.Popen([server, tree], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    rid=[0]
    def req(method, params):
        rid[0]+=1
        p.stdin.write((json.dumps({"jsonrpc":"2.0","id":rid[0],"method":method,"params":params})+"\n").encode()); p.stdin.flush()
        while True:
            m=json.loads(p.stdout.readline())
            if m.get('id')==rid[0]: return m
    req('initialize',{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
    while True:
        rs=(req('tools/call',{"name":"list_roots","arguments":{}}).get('result',{}).get('structuredContent') or {}).get('roots') or []
        if rs and all('fresh' in str(x.get('index')) and str(x.get('search','')).startswith('ready') and str(x.get('history','ready')).startswith(('ready','none','off')) for x in rs): break
        time.sleep(0.5)
    for t in ts:
        if not t['gold']: continue
        rows=[]
        for off in (0,100):
            r = req('tools/call',{"name":"search","arguments":{"query":t[qkey],"head_limit":100,"offset":off}})
            sc = r.get('result',{}).get('structuredContent') or {}
            items = next((v for v in sc.values() if isinstance(v, list) and v and isinstance(v[0], dict) and 'path' in v[0]), [])
            flat = [dict(sub, path=it['path']) for it in items for sub in it['results']] if items and 'results' in items[0] else items
            for it in flat:
                path = os.path.relpath(it['path'], tree) if os.path.isabs(it['path']) else it['path']
                st=int(it.get('line') or 0); rows.append((path, st, int(it.get('end_line') or st), it.get('name') or ''))
        rank = next((i+1 for i,r in enumerate(rows) if hit(r,t)), 0)
        print(json.dumps({'id': t.get('sha'), 'rank': rank, 'n': len(rows)}), flush=True)
    p.stdin.close(); p.wait()
