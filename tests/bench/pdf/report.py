#!/usr/bin/env python3
"""Prints the figures of `make bench-pdf` (scripts/bench-pdf.sh) from its work directory: one row per file, then
the goals table of docs/pdf.md with ours beside each goal."""
import json
import os
import statistics
import sys

WORK = sys.argv[1]
RESULTS = os.path.join(WORK, 'results')
MB = 1024 * 1024


def lines(name):
    path = os.path.join(RESULTS, name)
    if not os.path.exists(path):
        return {}
    out = {}
    for line in open(path):
        row = json.loads(line)
        out.setdefault(row['name'], []).append(row['r'])
    return out


def first(table, name):
    rows = table.get(name) or [None]
    return rows[0] or {}


ours, unpdf, gate = lines('ours.jsonl'), lines('unpdf.jsonl'), lines('gate.jsonl')
outline_ours, outline_unpdf = lines('outline-ours.jsonl'), lines('outline-unpdf.jsonl')
quotes = lines('quotes.jsonl')
scores = {}
scores_path = os.path.join(WORK, 'out', 'scores_ref_ours_unpdf.json')
if os.path.exists(scores_path):
    scores = json.load(open(scores_path))


def fmt(value, spec='.2f', none='—'):
    return none if value is None else format(value, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


print(f"{'file':22} {'ours':>14} {'cold':>6} {'warm':>6} {'F1 ours':>8} {'F1 pdfjs':>8} {'order':>6} "
      f"{'q-hit':>5} {'MB ours':>8} {'MB pdfjs':>8} {'outline':>11} {'quotes':>7} {'IoU':>5}  worker (size gate)")
cold_ratios, warm_ratios, f1s, crashes, mems = [], [], [], [], []
outline_equal = outline_total = quotes_total = quotes_found = 0
ious = []
for name in sorted(ours):
    o, u, g = first(ours, name), first(unpdf, name), first(gate, name)
    s, su = scores.get(f'ours|{name}'), scores.get(f'unpdf|{name}')
    if o.get('status') == 'crash' or g.get('status') == 'crash':
        crashes.append(name)
    both_ok = o.get('status') == 'ok' and u.get('status') == 'ok'
    cold = ratio(o.get('total_ms'), u.get('total_ms')) if both_ok else None
    warm = ratio(o.get('warm_total_ms'), u.get('warm_total_ms')) if both_ok else None
    if cold is not None:
        cold_ratios.append(cold)
    if warm is not None:
        warm_ratios.append(warm)
    text_doc = s is not None and s['ref_tokens'] >= 50
    if text_doc:
        f1s.append(s['f1'])
    mem = o.get('mem_bytes')
    if mem is not None:
        mems.append((mem, name, os.path.getsize(os.path.join(WORK, 'out', 'ref', name + '.json')) if False else 0))
    u_mem = (u['peak_kb'] - u['base_kb']) / 1024 if u.get('peak_kb') and u.get('base_kb') else None
    oo, ou = first(outline_ours, name).get('count'), first(outline_unpdf, name).get('count')
    if first(outline_unpdf, name).get('status') == 'ok':
        outline_total += 1
        outline_equal += oo == ou
    q = first(quotes, name)
    if q.get('quotes'):
        quotes_total += q['quotes']
        quotes_found += q['found']
        if q.get('iou') is not None:
            ious.extend([q['iou']] * q['found'])
    status = o.get('status', '?') if o.get('status') != 'ok' else 'ok'
    g_status = g.get('status', '?')
    print(f"{name:22} {status[:14]:>14} {fmt(cold):>6} {fmt(warm):>6} {fmt(s and s['f1'], '.3f'):>8} "
          f"{fmt(su and su['f1'], '.3f'):>8} {fmt(s and s['order'], '.3f'):>6} {fmt(s and s['quote'], '.2f'):>5} "
          f"{fmt(mem and mem / MB, '.1f'):>8} {fmt(u_mem, '.0f'):>8} {str(oo) + '/' + str(ou):>11} "
          f"{(str(q['found']) + '/' + str(q['quotes'])) if q.get('quotes') else '—':>7} {fmt(q.get('iou')):>5}  {g_status}")

print()
median = lambda xs: statistics.median(xs) if xs else None
mean = lambda xs: statistics.fmean(xs) if xs else None
sizes = dict(part.split('=') for part in open(os.path.join(RESULTS, 'size.txt')).read().split())
added = (int(sizes['pdf_wasm_bench']) - int(sizes['pdf_wasm_floor'])) / 1024
range_ours = [r for r in lines('range-ours.jsonl').get('pgfmanual', []) if r.get('status') == 'ok']
range_unpdf = [r for r in lines('range-unpdf.jsonl').get('pgfmanual', []) if r.get('status') == 'ok']
pgf = '—'
if range_ours:
    t = median([r['total_ms'] for r in range_ours]) / 1000
    m = max(r['mem_bytes'] for r in range_ours) / MB
    tu = median([r['total_ms'] for r in range_unpdf]) / 1000 if range_unpdf else None
    pgf = f"{t:.2f} s, {m:.0f} MB (pdf.js {fmt(tu)} s, same run)"
small = [(m, n) for m, n, _ in mems]
peak = max(small) if small else (0, '—')
print('| figure | goal | ours (this run) |')
print('|---|---|---|')
print(f"| median time ratio vs unpdf, cold / warm, wasm | ≤ 0.25 warm | {fmt(median(cold_ratios))} / {fmt(median(warm_ratios))} ({len(warm_ratios)} files) |")
print(f"| F1 vs pdftotext, median / mean ({len(f1s)} text files) | ≥ 0.99 / ≥ 0.98 | {fmt(median(f1s), '.3f')} / {fmt(mean(f1s), '.3f')} |")
print(f"| crashes (panic, trap, stack overflow, OOM) on corpus + adversarial | 0 | {len(crashes)} {' '.join(crashes)} |")
print(f"| peak wasm memory, size gate lifted (largest: {peak[1]}) | ≤ 96 MB or a clear refusal | {peak[0] / MB:.0f} MB |")
print(f"| pages 3–5 of pgfmanual (limits as deployed) | ≤ 0.5 s, ≤ 64 MB | {pgf} |")
print(f"| outline count equal to pdf.js | 28/28 | {outline_equal}/{outline_total} |")
print(f"| quote location: found / mean IoU vs poppler word boxes | ≥ 85% / ≥ 0.8 | "
      f"{100 * quotes_found / max(1, quotes_total):.0f}% of {quotes_total} / {fmt(mean(ious))} |")
print(f"| wasm size added (wasm-opt -Oz, gzip) | ≤ 450 KiB | {added:.0f} KiB |")
refused = [n for n in sorted(gate) if first(gate, n).get('status', '').startswith('over-budget')]
print(f"\nRefused by the Worker's limits (as deployed): {', '.join(refused) or 'none'}")
sys.exit(1 if crashes else 0)
