#!/usr/bin/env python3
"""Reads a bibliography feed with parsers written by others, for tests/e2e/feeds.test.mjs.

    check_feed.py FORMAT FILE        FORMAT: bibtex, biblatex, csljson or ris; FILE: a path, or - for stdin

BibTeX and BibLaTeX are read by bibtexparser 2 (titles decoded from LaTeX by pylatexenc, as a LaTeX run would
print them), RIS by rispy, CSL-JSON checked against the official CSL-JSON schema (csl-data.json beside this file,
from github.com/citation-style-language/schema, MIT: csl-data.LICENSE.txt) by jsonschema. On success it prints
one JSON object:

    {"format", "entries": N, "keys": [...], "titles": [...], "types": [...], "records": [{"key", "title", "type"}],
     "notes": [...]}

(`notes`: what a reader would warn about but still read). Otherwise it exits 1 and says what the parser or the
check refused, entry by entry; 2 for a wrong command line. The installed versions are pinned in scripts/setup.sh.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Entry types the standard BibTeX styles (plain, alpha, natbib's plainnat, …) define; any other is read by
# `bibtex` as an unknown type, with a warning, and formatted as something else.
BIBTEX_TYPES = {
    "article", "book", "booklet", "conference", "inbook", "incollection", "inproceedings", "manual",
    "mastersthesis", "misc", "phdthesis", "proceedings", "techreport", "unpublished",
}
# BibLaTeX's entry types (its manual, section 2.1), with the aliases it accepts for BibTeX's.
BIBLATEX_TYPES = {
    "article", "book", "mvbook", "inbook", "bookinbook", "suppbook", "booklet", "collection", "mvcollection",
    "incollection", "suppcollection", "dataset", "manual", "misc", "online", "patent", "periodical",
    "suppperiodical", "proceedings", "mvproceedings", "inproceedings", "reference", "mvreference",
    "inreference", "report", "set", "software", "thesis", "unpublished", "xdata", "artwork", "audio",
    "bibnote", "commentary", "image", "jurisdiction", "legislation", "legal", "letter", "movie", "music",
    "performance", "review", "standard", "video", "conference", "electronic", "mastersthesis", "phdthesis",
    "techreport", "www",
}
# What BibTeX does not allow in a key: it ends the key or breaks the entry.
BAD_KEY = re.compile(r"[\s,{}()=\"#%'\\~]")
# Fields BibLaTeX (and the url package) read verbatim: LaTeX's special characters are literal there.
VERBATIM_FIELDS = {"url", "doi", "eprint", "file", "pdf", "urlraw", "verba", "verbb", "verbc"}
# After escapes (a backslash and the next character) and math ($…$) are taken out, none of these may be left:
# LaTeX stops on each (a comment, an alignment tab, a parameter, a subscript outside math).
UNESCAPED = re.compile(r"[&%#_]")
RIS_LINE = re.compile(r"^([A-Z][A-Z0-9])  - ?(.*)$")


class Refused(Exception):
    """The feed is not one a reader of the format accepts; the message says why."""


def read_bib(text: str, dialect: str) -> dict:
    import bibtexparser
    from pylatexenc.latex2text import LatexNodes2Text

    # No middleware: the values as written, delimiters and all, so that their braces can be checked as BibTeX
    # reads them (bibtexparser takes `{A stray } brace}` for one value; BibTeX stops at `brace`).
    library = bibtexparser.parse_string(text, parse_stack=[])
    problems = []
    for block in library.failed_blocks:
        error = getattr(block, "error", None)
        reason = str(error) if error else type(block).__name__
        problems.append(f"line {block.start_line + 1}: {reason.strip()} [{block.raw[:120]!r}]")
    allowed = BIBTEX_TYPES if dialect == "bibtex" else BIBLATEX_TYPES
    seen: dict[str, str] = {}
    records = []
    notes = []
    to_text = LatexNodes2Text()
    for entry in library.entries:
        key = entry.key
        if not key or BAD_KEY.search(key):
            problems.append(f"entry {key!r}: the key has a character BibTeX does not allow in keys")
        folded = key.lower()
        if folded in seen:
            problems.append(f"entry {key!r}: the same key as {seen[folded]!r} (BibTeX compares keys ignoring case)")
        seen.setdefault(folded, key)
        entry_type = entry.entry_type.lower()
        if entry_type not in allowed:
            problems.append(f"entry {key!r}: @{entry_type} is not a {dialect} entry type")
        fields = {}
        for field in entry.fields:
            value = str(field.value)
            problem = delimited_problem(value)
            if problem:
                problems.append(f"entry {key!r}, field {field.key}: {problem} [{value[:80]!r}]")
            fields[field.key.lower()] = value[1:-1] if value[:1] in "{\"" else value
            if field.key.lower() not in VERBATIM_FIELDS:
                bare = re.sub(r"\$[^$]*\$", "", re.sub(r"\\.", "", value, flags=re.S))
                special = UNESCAPED.search(bare)
                if special:
                    problems.append(
                        f"entry {key!r}, field {field.key}: an unescaped {special.group()} (LaTeX reads it as "
                        f"markup) [{value[:80]!r}]"
                    )
        raw_title = fields.get("title")
        if raw_title is None:
            problems.append(f"entry {key!r}: no title field")
            raw_title = ""
        title = to_text.latex_to_text(raw_title)
        records.append({"key": key, "title": " ".join(title.split()), "type": entry_type})
    leftovers = [b for b in library.blocks if type(b).__name__ == "ImplicitComment" and b.comment.strip()]
    if leftovers:
        notes.append(f"text outside any entry: {leftovers[0].comment.strip()[:80]!r}")
    if dialect == "bibtex" and not text.isascii():
        notes.append("non-ASCII characters in a BibTeX file (classic bibtex sorts and abbreviates them byte by byte)")
    if problems:
        raise Refused("\n".join(problems))
    return {"records": records, "notes": notes}


def delimited_problem(value: str) -> str | None:
    """What BibTeX would find wrong with a field's value as written: a braced or quoted value must be one group
    whose braces balance (BibTeX counts every brace, escaped or not); anything else is a number or a macro."""
    if value[:1] == "{":
        if value[-1:] != "}":
            return "the braced value ends before its last brace (an unbalanced brace inside)"
        inner = value[1:-1]
    elif value[:1] == '"':
        inner = value[1:-1]
    else:
        return None if re.fullmatch(r"[\w.:+/-]+(\s*#\s*[\w.:+/-]+)*", value.strip()) else "not a braced, quoted or bare value"
    depth = 0
    for char in inner:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return "a closing brace with no opening one"
    return "an opening brace never closed" if depth else None


def read_csl(text: str) -> dict:
    import jsonschema

    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise Refused(f"not JSON: {error}") from error
    schema = json.loads((HERE / "csl-data.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        shown = [f"at /{'/'.join(str(p) for p in e.absolute_path)}: {e.message}" for e in errors[:20]]
        more = f"\n… and {len(errors) - 20} more" if len(errors) > 20 else ""
        raise Refused("not CSL-JSON (csl-data.json schema):\n" + "\n".join(shown) + more)
    problems = []
    seen: dict[str, str] = {}
    records = []
    for item in data:
        key = str(item["id"])
        if key in seen:
            problems.append(f"item {key!r}: the same id as another item (a citation could not tell them apart)")
        seen[key] = key
        records.append({"key": key, "title": " ".join(str(item.get("title", "")).split()), "type": item["type"]})
    if problems:
        raise Refused("\n".join(problems))
    return {"records": records, "notes": []}


def read_ris(text: str) -> dict:
    import rispy

    lines = text.lstrip("\ufeff").splitlines()
    tagged = [RIS_LINE.match(line) for line in lines]
    starts = sum(1 for m in tagged if m and m.group(1) == "TY")
    ends = sum(1 for m in tagged if m and m.group(1) == "ER")
    first = next((line for line in lines if line.strip()), "")
    problems = []
    if starts and not first.startswith("TY  - "):
        problems.append(f"the file starts with {first[:60]!r}, not a TY line")
    if starts != ends:
        problems.append(f"{starts} records start (TY) and {ends} end (ER)")
    try:
        entries = rispy.loads(text.lstrip("\ufeff"))
    except Exception as error:  # rispy's complaint, whatever its kind
        raise Refused(f"rispy: {type(error).__name__}: {error}") from error
    if len(entries) != starts:
        problems.append(f"rispy read {len(entries)} records of the {starts} started")
    records = []
    unknown = set()
    for index, entry in enumerate(entries):
        entry_type = entry.get("type_of_reference", "")
        if entry_type not in rispy.TYPE_OF_REFERENCE_MAPPING:
            problems.append(f"record {index + 1}: TY {entry_type!r} is not a RIS reference type")
        unknown.update(entry.get("unknown_tag", {}).keys())
        title = entry.get("title") or entry.get("primary_title") or ""
        records.append({"key": entry.get("id"), "title": " ".join(title.split()), "type": entry_type})
    if problems:
        raise Refused("\n".join(problems))
    notes = [f"tags rispy does not know: {', '.join(sorted(unknown))}"] if unknown else []
    return {"records": records, "notes": notes}


def check(fmt: str, text: str) -> dict:
    if fmt in ("bibtex", "biblatex"):
        read = read_bib(text, fmt)
    elif fmt == "csljson":
        read = read_csl(text)
    elif fmt == "ris":
        read = read_ris(text)
    else:
        raise ValueError(fmt)
    records = read["records"]
    return {
        "format": fmt,
        "entries": len(records),
        "keys": [r["key"] for r in records],
        "titles": [r["title"] for r in records],
        "types": [r["type"] for r in records],
        "records": records,
        "notes": read["notes"],
    }


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("bibtex", "biblatex", "csljson", "ris"):
        print("usage: check_feed.py bibtex|biblatex|csljson|ris FILE (- for stdin)", file=sys.stderr)
        return 2
    raw = sys.stdin.buffer.read() if argv[2] == "-" else Path(argv[2]).read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        print(f"{argv[1]}: not UTF-8: {error}", file=sys.stderr)
        return 1
    try:
        result = check(argv[1], text)
    except Refused as refusal:
        print(f"{argv[1]}: refused:\n{refusal}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
