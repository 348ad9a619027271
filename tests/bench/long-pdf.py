#!/usr/bin/env python3
"""Writes a text PDF of N pages (default 300) to PATH: 44 lines of running prose a page in Helvetica, words drawn
from a fixed vocabulary by a fixed seed (the same file every run), and on every 25th page one sentence the
retrieval bench asks for. For scripts/bench-retrieve.sh: a long paper, without needing a corpus file."""
import random
import sys

path = sys.argv[1]
pages = int(sys.argv[2]) if len(sys.argv) > 2 else 300
rng = random.Random(300)
vocabulary = (
    "protein structure residue contact folding energy landscape sequence alignment coevolution network "
    "attention layer embedding sampling temperature stability mutation binding pocket ligand affinity "
    "solvent membrane helix strand loop domain interface assembly kinetics equilibrium measurement error "
    "model training validation benchmark accuracy baseline ensemble prediction uncertainty calibration"
).split()


def sentence():
    words = [rng.choice(vocabulary) for _ in range(rng.randint(8, 16))]
    return " ".join(words).capitalize() + "."


def lines_of(page):
    text = []
    if page % 25 == 0:
        text.append(f"Stomatal conductance fell sharply under heat stress in trial {page}.")
    while sum(len(t) + 1 for t in text) < 44 * 78:
        text.append(sentence())
    words, lines, line = " ".join(text).split(), [], ""
    for word in words:
        if len(line) + len(word) + 1 > 78:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return lines[:44]


def escape(text):
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


objects = []  # bodies; object n is objects[n - 1]
objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
objects.append(b"")  # the page tree, once the kids are known
objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
kids = []
for page in range(1, pages + 1):
    stream = "BT /F1 10 Tf 13 TL 56 740 Td\n" + "".join(f"({escape(l)}) '\n" for l in lines_of(page)) + "ET"
    stream = stream.encode("latin-1")
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    content = len(objects)
    objects.append(
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
        b"/Contents %d 0 R >>" % content
    )
    kids.append(len(objects))
objects[1] = b"<< /Type /Pages /Count %d /Kids [%s] >>" % (pages, b" ".join(b"%d 0 R" % k for k in kids))

out = bytearray(b"%PDF-1.4\n")
offsets = []
for number, body in enumerate(objects, start=1):
    offsets.append(len(out))
    out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
with open(path, "wb") as f:
    f.write(out)
