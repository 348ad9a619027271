#!/usr/bin/env python3
"""Quote-location figures for `make bench-pdf`: quotes taken from poppler's word boxes, and how well our engine
puts them back on the page.

    quotes.py make  <pdf> <quotes.json>               8-word quotes from up to 4 pages, with poppler's boxes
    quotes.py score <quotes.json> <located.json>      prints {"quotes", "found", "iou"} as JSON

poppler (`pdftotext -bbox-layout`) gives each word's box from the top-left of the crop box, y downwards; the
expected rectangles are one per line (the union of the quote's words on it), moved into PDF user space, the space
a Zotero highlight's rects are in. IoU compares the area covered by our rectangles with the area covered by the
expected ones."""
import html
import json
import random
import re
import subprocess
import sys

WORDS_PER_QUOTE = 8
PAGES_PER_FILE = 4
QUOTES_PER_PAGE = 2

PAGE = re.compile(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', re.S)
BLOCK = re.compile(r'<block [^>]*>(.*?)</block>', re.S)
LINE = re.compile(r'<line [^>]*>(.*?)</line>', re.S)
WORD = re.compile(r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">(.*?)</word>', re.S)
BOX = re.compile(r'Page\s+(\d+) CropBox:\s+([\d.-]+)\s+([\d.-]+)\s+([\d.-]+)\s+([\d.-]+)')
ROT = re.compile(r'Page\s+(\d+) rot:\s+(\d+)')


def crop_boxes(pdf, pages):
    out = subprocess.run(['pdfinfo', '-box', '-f', '1', '-l', str(pages), pdf], capture_output=True, text=True).stdout
    boxes = {int(m[1]): tuple(map(float, m.groups()[1:])) for m in BOX.finditer(out)}
    rotated = {int(m[1]) for m in ROT.finditer(out) if m[2] != '0'}
    return boxes, rotated


def make(pdf, out_path):
    layout = subprocess.run(['pdftotext', '-bbox-layout', pdf, '-'], capture_output=True, text=True).stdout
    pages = PAGE.findall(layout)
    boxes, rotated = crop_boxes(pdf, len(pages))
    rnd = random.Random(7)
    candidates = []
    for number, (_, _, body) in enumerate(pages, 1):
        blocks = []
        for block in BLOCK.findall(body):
            words = []
            for line_no, line in enumerate(LINE.findall(block)):
                for w in WORD.findall(line):
                    words.append((line_no, tuple(map(float, w[:4])), html.unescape(w[4])))
            if len(words) >= WORDS_PER_QUOTE:
                blocks.append(words)
        if blocks and number in boxes and number not in rotated:
            candidates.append((number, blocks))
    step = max(1, len(candidates) // PAGES_PER_FILE)
    quotes = []
    for number, blocks in candidates[::step][:PAGES_PER_FILE]:
        x0, _, _, y1 = boxes[number]
        for _ in range(QUOTES_PER_PAGE):
            words = rnd.choice(blocks)
            start = rnd.randrange(0, len(words) - WORDS_PER_QUOTE + 1)
            chosen = words[start:start + WORDS_PER_QUOTE]
            # A word broken at a line end reads differently in every tool; such quotes measure nothing here.
            if any(text.endswith('-') for _, _, text in chosen[:-1]):
                continue
            # Dot leaders of a table of contents (". . . . . . . .") occur all over a page: not a quote.
            if sum(c.isalpha() for _, _, text in chosen for c in text) < 12:
                continue
            lines = {}
            for line_no, (a, b, c, d), _ in chosen:
                r = lines.setdefault(line_no, [a, b, c, d])
                r[:] = [min(r[0], a), min(r[1], b), max(r[2], c), max(r[3], d)]
            rects = [[x0 + a, y1 - d, x0 + c, y1 - b] for a, b, c, d in lines.values()]
            quotes.append({'quote': ' '.join(t for _, _, t in chosen), 'page': number, 'expected': rects})
    json.dump(quotes, open(out_path, 'w'), ensure_ascii=False)


def area_of_union(rects, inside):
    """Area of the cells (from all rectangles' edges) that `inside` says are covered."""
    xs = sorted({x for r in rects for x in (r[0], r[2])})
    ys = sorted({y for r in rects for y in (r[1], r[3])})
    total = 0.0
    for i in range(len(xs) - 1):
        for j in range(len(ys) - 1):
            cx, cy = (xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2
            if inside(cx, cy):
                total += (xs[i + 1] - xs[i]) * (ys[j + 1] - ys[j])
    return total


def covers(rects, x, y):
    return any(min(r[0], r[2]) <= x <= max(r[0], r[2]) and min(r[1], r[3]) <= y <= max(r[1], r[3]) for r in rects)


def iou(a, b):
    both = a + b
    inter = area_of_union(both, lambda x, y: covers(a, x, y) and covers(b, x, y))
    union = area_of_union(both, lambda x, y: covers(a, x, y) or covers(b, x, y))
    return inter / union if union else 0.0


def score(quotes_path, located_path):
    quotes = json.load(open(quotes_path))
    located = json.load(open(located_path))
    found, ious = 0, []
    for q, got in zip(quotes, located):
        if got and got.get('page') == q['page']:
            found += 1
            ious.append(iou(got['rects'], q['expected']))
    print(json.dumps({'quotes': len(quotes), 'found': found, 'iou': sum(ious) / len(ious) if ious else None}))


if __name__ == '__main__':
    if sys.argv[1] == 'make':
        make(sys.argv[2], sys.argv[3])
    else:
        score(sys.argv[2], sys.argv[3])
