#!/usr/bin/env python3
"""What does rootgrep answer to a request sent right after `notifications/initialized`, before
the client's roots/list answer is in? (PRODUCT.md §2: a call that arrives first waits for it.)

    python3 bench/roots_race_probe.py BIN ROOT

Prints, per method, when the server asked roots/list and the start of its answer: a first URI
outside ROOT means the request was served from the fallback root (the server's cwd).
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver import Server  # noqa: E402

bin_, root = sys.argv[1], os.path.abspath(sys.argv[2])
for method, params in (("tools/call", {"name": "glob", "arguments": {"pattern": "*.md", "sort": "path"}}),
                       ("resources/list", {}),
                       ("completion/complete", {"ref": {"type": "ref/resource", "uri": "file:///{+path}"},
                                                "argument": {"name": "path", "value": "w"}})):
    s = Server([bin_], [root], 60)
    s.initialize()
    dt, r, _ = s.request(method, params)
    time.sleep(0.2)
    ra = s.first_roots_request_at
    print(f"{method}: roots/list asked {None if ra is None else round((ra - s.t_init) * 1000, 1)} ms after "
          f"initialized; answered in {dt * 1000:.1f} ms: {json.dumps(r.get('result'))[:220]}")
    s.close()
