#!/usr/bin/env python3
"""Markdown summary of a bench/run.sh results directory (mcp_bench JSON + hyperfine JSON).

    python3 bench/summarize.py bench/results > summary.md
"""
import glob
import json
import os
import re
import shlex
import statistics
import sys


def ms(x):
    if x is None:
        return "-"
    return f"{x:.2f}" if x < 1 else (f"{x:.1f}" if x < 100 else f"{x:.0f}")


def kib(b):
    if b is None:
        return "-"
    return f"{b / 1024:.1f}"


def cmd_str(argv):
    if not argv:
        return ""
    if argv[:2] == ["sh", "-c"]:
        s = argv[2]
    else:
        s = shlex.join(argv)
    return s


def short(s, root=None):
    """Corpus paths shown as ROOT."""
    return re.sub(r"'?/[^ ']*/bench-corpora/(medium|large)'?", "ROOT", s)


def cpu(s):
    return "-" if s is None else f"{s * 1000:.0f}"


def cell(s):
    return s.replace("|", "\\|")


def case_table(rep, root):
    rows = ["| case | rootgrep median ms | rg median ms | ratio (median of pairs) "
            "| rootgrep CPU ms/call | rg CPU ms | rootgrep resp KiB | rg stdout KiB | compared with | check |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for c in rep["cases"]:
        r = c.get("ratio_median_of_pairs")
        rows.append(
            f"| {cell(c['name'])} | {ms(c['server_ms']['median'])} | {ms(c['command_ms']['median'])} | "
            f"{'-' if r is None else f'{r:.2f}x'} | {cpu(c.get('server_cpu_s_per_call'))} | "
            f"{cpu(c.get('command_cpu_s'))} | {kib(c.get('response_bytes'))} | "
            f"{kib(c.get('command_stdout_bytes'))} | `{cell(short(cmd_str(c.get('command')), root))}` | "
            f"{'ok' if not c.get('problems') else '; '.join(c['problems'])[:80]} |")
    return "\n".join(rows)


def server_lines(rep):
    s = rep["server"]
    idle = s.get("rss_after_init_kib")
    return [
        f"- server: {s.get('name')} {s.get('version')}, protocol {s.get('protocolVersion')}, "
        f"{len(s.get('tools', []))} tools",
        f"- spawn → initialize answered: median {ms(s['startup_ms']['median'])} ms "
        f"(min {ms(s['startup_ms']['min'])}, max {ms(s['startup_ms']['max'])}, n={s['startup_ms']['n']}); "
        f"spawn → tools/list answered: median {ms(s['startup_to_tools_list_ms']['median'])} ms",
        f"- ping round trip: median {ms(s['ping_ms']['median'])} ms "
        f"(n={s['ping_ms']['n']}); tools/list: median {ms(s['tools_list_ms']['median'])} ms",
        f"- RSS after initialize + pings + tools/list (idle, VmHWM): "
        f"{'-' if idle is None else f'{idle / 1024:.1f} MiB'}; peak RSS over the whole run: "
        f"{s['peak_rss_kib'] / 1024:.1f} MiB",
    ]


def load(out, label):
    p = os.path.join(out, f"{label}.json")
    return json.load(open(p)) if os.path.exists(p) else None


def warm_table(rep, cold):
    """Warm (index fresh) cases with the cold ratio of the same case next to them."""
    cold_by = {c["name"]: c for r in cold if r for c in r["cases"]}
    rows = ["| case | rootgrep median ms | rg median ms | ratio warm (median of pairs) | ratio cold, same run "
            "| rootgrep CPU ms/call | rg CPU ms | rootgrep resp KiB | compared with | check |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for c in rep["cases"]:
        r = c.get("ratio_median_of_pairs")
        cc = cold_by.get(c["name"], {}).get("ratio_median_of_pairs")
        rows.append(
            f"| {cell(c['name'])} | {ms(c['server_ms']['median'])} | {ms(c['command_ms']['median'])} | "
            f"{'-' if r is None else f'{r:.2f}x'} | {'-' if cc is None else f'{cc:.2f}x'} | "
            f"{cpu(c.get('server_cpu_s_per_call'))} | {cpu(c.get('command_cpu_s'))} | "
            f"{kib(c.get('response_bytes'))} | `{cell(short(cmd_str(c.get('command'))))}` | "
            f"{'ok' if not c.get('problems') else '; '.join(c['problems'])[:80]} |")
    return "\n".join(rows)


def live_lines(lp):
    f = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    lines = [f"- roots answered → index fresh: **{f(lp.get('roots_to_fresh_ms'))} ms** "
             f"({lp.get('list_roots_polls')} list_roots polls, every {lp.get('poll_ms')} ms); final state "
             f"`{lp.get('fresh_state')}`; server CPU to fresh {f(lp.get('cpu_s_to_fresh'))} s",
             f"- roots/list asked {f(lp.get('roots_requested_after_initialized_ms'))} ms after `initialized`",
             f"- RSS when fresh {lp['rss_when_fresh_kib'] / 1024:.1f} MiB (VmHWM {lp['hwm_when_fresh_kib'] / 1024:.1f}); "
             f"1 s later {lp['rss_idle_with_index_kib'] / 1024:.1f} MiB; after the requests below "
             f"{lp['rss_after_kib'] / 1024:.1f} MiB; peak {lp['peak_rss_kib'] / 1024:.1f} MiB"]
    r = lp.get("resources_list_ms")
    if r:
        lines.append(f"- `resources/list` first page ({lp.get('resources_list_items')} items, cursor: "
                     f"{lp.get('resources_list_has_cursor')}): p50 {f(r['p50'])} ms, p99 {f(r['p99'])}, max {f(r['max'])} (n={r['n']})")
    lines += ["", "| completion value | values (total) | n | p50 ms | p90 | p99 | max |", "|---|---:|---:|---:|---:|---:|---:|"]
    for c in lp.get("completion", []):
        m = c.get("ms") or {}
        lines.append(f"| `{c['value']}` | {c['values_returned']} ({c['total']}) | {m.get('n', 0)} | {f(m.get('p50'))} | "
                     f"{f(m.get('p90'))} | {f(m.get('p99'))} | {f(m.get('max'))} |")
    return lines


def anchors_table(off, rg):
    rg_by = {c["name"]: c for c in rg["cases"]}
    rows = ["| task | official median ms | rootgrep median ms | official / rootgrep | official resp KiB | rootgrep resp KiB | official check | rootgrep check |",
            "|---|---:|---:|---:|---:|---:|---|---|"]
    names = [c["name"] for c in off["cases"]] + [n for n in rg_by if n not in {c["name"] for c in off["cases"]}]
    off_by = {c["name"]: c for c in off["cases"]}
    for n in names:
        if n.startswith("index fresh"):
            continue
        o, r = off_by.get(n), rg_by.get(n)
        om = o["server_ms"]["median"] if o else None
        rm = r["server_ms"]["median"] if r else None
        sp = f"{om / rm:.0f}x" if om and rm and om / rm >= 10 else (f"{om / rm:.1f}x" if om and rm else "-")
        chk = lambda c: "-" if c is None else ("ok" if not c.get("problems") else "; ".join(c["problems"])[:60])  # noqa: E731
        rows.append(f"| {cell(n)} | {ms(om)} | {ms(rm)} | {sp} | {kib(o and o.get('response_bytes'))} | "
                    f"{kib(r and r.get('response_bytes'))} | {chk(o)} | {chk(r)} |")
    return rows


def main():
    out = sys.argv[1]
    parts = []
    meta = os.path.join(out, "meta.txt")
    if os.path.exists(meta):
        parts += ["```", open(meta).read().rstrip(), "```", ""]
    titles = {"medium": "cold (--no-watch)", "medium_cold_extra": "cold (--no-watch), extra",
              "large": "cold (--no-watch)", "large_cold_extra": "cold (--no-watch), extra"}
    for label in ("medium", "medium_cold_extra", "large", "large_cold_extra"):
        rep = load(out, label)
        if not rep:
            continue
        parts += [f"## {label}: {titles[label]} (k={rep['k']}, warm-up {rep['warmup']}, cpus={rep['cpus']})", ""]
        if rep["server"].get("startup_ms", {}).get("n", 0) > 1:
            parts += server_lines(rep) + [""]
        parts += [case_table(rep, None), ""]
    for label, cold in (("warm_medium", ("medium", "medium_cold_extra")), ("warm_large", ("large", "large_cold_extra"))):
        rep = load(out, label)
        if not rep:
            continue
        s = rep["server"]
        parts += [f"## {label}: watcher + index, index fresh (k={rep['k']}, warm-up {rep['warmup']})", "",
                  f"- peak RSS over the run {s['peak_rss_kib'] / 1024:.1f} MiB; RSS after init "
                  f"{(s.get('rss_after_init_kib') or 0) / 1024:.1f} MiB", "",
                  warm_table(rep, [load(out, c) for c in cold]), ""]
    known = {"medium", "medium_cold_extra", "large", "large_cold_extra", "warm_medium", "warm_large",
             "live_medium", "live_large", "official_medium", "rootgrep_official_medium",
             "official_large", "rootgrep_official_large", "oneshot"}
    for p in sorted(glob.glob(os.path.join(out, "*.json"))):
        label = os.path.basename(p)[:-5]
        if label in known or label.startswith("first_call."):
            continue
        rep = json.load(open(p))
        if "cases" in rep:  # a partial rerun (mcp_bench --only ...)
            parts += [f"## {label} (partial rerun, k={rep['k']}, warm-up {rep['warmup']})", "", case_table(rep, None), ""]
    for label in ("live_medium", "live_large"):
        lp = load(out, label)
        if lp:
            parts += [f"## {label}: live index (bench/live_probe.py)", ""] + live_lines(lp) + [""]
    for corpus in ("medium", "large"):
        off, rg = load(out, f"official_{corpus}"), load(out, f"rootgrep_official_{corpus}")
        if not off or not rg:
            continue
        so = off["server"]
        parts += [f"## official filesystem server vs rootgrep (warm), {corpus} corpus", "",
                  f"- official: {so.get('name')} {so.get('version')}, k={off['k']}, warm-up {off['warmup']}; "
                  f"rootgrep k={rg['k']}, warm-up {rg['warmup']}; sessions one after the other",
                  ]
        if so.get("startup_ms", {}).get("n", 0) > 1:
            parts += [f"- official spawn → initialize: median {ms(so['startup_ms']['median'])} ms "
                      f"(min {ms(so['startup_ms']['min'])}, max {ms(so['startup_ms']['max'])}, n={so['startup_ms']['n']}); "
                      f"ping {ms(so['ping_ms']['median'])} ms; idle RSS (VmHWM after init) "
                      f"{(so.get('rss_after_init_kib') or 0) / 1024:.1f} MiB; peak {so['peak_rss_kib'] / 1024:.1f} MiB"]
        else:
            parts += [f"- official peak RSS {so['peak_rss_kib'] / 1024:.1f} MiB"]
        parts += [f"- rootgrep peak RSS {rg['server']['peak_rss_kib'] / 1024:.1f} MiB", ""]
        parts += anchors_table(off, rg) + [""]
    # first call in fresh servers
    fc = {}
    for p in sorted(glob.glob(os.path.join(out, "first_call.*.json"))):
        rep = json.load(open(p))
        for c in rep["cases"]:
            fc.setdefault(c["name"], []).append(c)
    if fc:
        parts += ["## first call in a fresh server (one call per server, no warm-up)", "",
                  "| case | n | rootgrep median ms | rg median ms | ratio (median of pairs) |",
                  "|---|---:|---:|---:|---:|"]
        for name, cs in fc.items():
            s = [c["server_ms"]["median"] for c in cs]
            r = [c["command_ms"]["median"] for c in cs]
            q = [c["ratio_median_of_pairs"] for c in cs if c["ratio_median_of_pairs"]]
            parts.append(f"| {cell(name)} | {len(cs)} | {ms(statistics.median(s))} | {ms(statistics.median(r))} | "
                         f"{statistics.median(q):.2f}x |")
        parts.append("")
    p = os.path.join(out, "oneshot.json")
    if os.path.exists(p):
        res = json.load(open(p))["results"]
        parts += ["## one-shot process: `rootgrep call` (fresh process, in-process server) vs rg (hyperfine)",
                  "", "| command | median ms | min | max |", "|---|---:|---:|---:|"]
        for r in res:
            c = r["command"]
            c = short(re.sub(r"^/\S*/rootgrep ", "rootgrep ", c))
            parts.append(f"| `{c}` | {ms(r['median'] * 1000)} | {ms(r['min'] * 1000)} | {ms(r['max'] * 1000)} |")
        parts.append("")
    print("\n".join(parts))


if __name__ == "__main__":
    main()
