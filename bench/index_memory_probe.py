#!/usr/bin/env python3
"""Index memory: VmRSS/VmHWM of a rootgrep server (watcher on) after `initialize`, when
`list_roots` first reports the root's index fresh (or over the limit), and 2 s later.

Usage: index_memory_probe.py BINARY ROOT [extra server flags...]
"""
import json, subprocess, sys, time
binary, root = sys.argv[1], sys.argv[2]
p = subprocess.Popen([binary, root] + sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
def send(m): p.stdin.write(json.dumps(m)+"\n"); p.stdin.flush()
def recv(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m
def mem():
    d = {}
    for l in open(f"/proc/{p.pid}/status"):
        if l.startswith(("VmRSS","VmHWM")): k,v = l.split(":"); d[k]=int(v.split()[0])//1024
    return d
send({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"m","version":"1"}}}); recv(1)
send({"jsonrpc":"2.0","method":"notifications/initialized"})
print("after init", mem())
t=time.time(); i=2
while True:
    send({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"list_roots","arguments":{}}})
    r = recv(i); i+=1
    st = r["result"]["structuredContent"]["roots"][0]
    if st["index"].startswith("fresh") or "more than" in st["index"]: break
    time.sleep(0.2)
print("fresh after %.1fs" % (time.time()-t), st["index"], mem())
time.sleep(2); print("rest", mem())
p.stdin.close(); p.wait()
