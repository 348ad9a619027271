#!/usr/bin/env python3
"""Zotero Desktop's WebDAV file format, written from its documentation and behaviour, independently of the
Rust code it checks (crates/cli/tests/webdav.rs runs it):

    read  ZIP PROP FILENAME   checks a <KEY>.zip + <KEY>.prop pair as Zotero Desktop would read it: the .prop is
                              `<properties version="1">` with <mtime> (epoch milliseconds) and <hash> (lower-case
                              hex MD5 of the uncompressed file); the archive's entries pass their CRC, the file is
                              the entry named FILENAME at the top level, and its MD5 is the .prop's hash. Prints
                              "ok <bytes> <md5> <mtime>".
    write DIR KEY FILENAME SRC lays SRC out as Zotero Desktop uploads it: DIR/KEY.zip with the file deflated,
                              preceded by the full-text cache files Desktop keeps beside it, and a compact
                              one-line DIR/KEY.prop.
"""
import hashlib
import re
import sys
import time
import zipfile

PROP = re.compile(
    r'^<properties version="1">\s*<mtime>(\d+)</mtime>\s*<hash>([0-9a-f]{32})</hash>\s*</properties>\s*$'
)


def read(zip_path, prop_path, filename):
    prop = open(prop_path, encoding="utf-8").read()
    match = PROP.match(prop)
    if not match:
        sys.exit(f"the .prop is not Zotero's shape: {prop!r}")
    mtime, md5 = int(match.group(1)), match.group(2)
    # Milliseconds since 1970: 13 digits for any date between 2001 and 2286.
    if not 10**12 <= mtime < 10**13:
        sys.exit(f"mtime {mtime} is not in milliseconds")
    with zipfile.ZipFile(zip_path) as archive:
        bad = archive.testzip()
        if bad is not None:
            sys.exit(f"entry {bad} fails its CRC")
        names = [i.filename for i in archive.infolist()]
        files = [n for n in names if not n.endswith("/") and not n.rsplit("/", 1)[-1].startswith(".")]
        if filename not in files:
            sys.exit(f"no top-level entry named {filename!r}: {names}")
        data = archive.read(filename)
    actual = hashlib.md5(data).hexdigest()
    if actual != md5:
        sys.exit(f"the .prop's hash {md5} is not the file's MD5 {actual}")
    print(f"ok {len(data)} {md5} {mtime}")


def write(folder, key, filename, source):
    data = open(source, "rb").read()
    mtime = int(time.time() * 1000)
    with zipfile.ZipFile(f"{folder}/{key}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(".zotero-ft-cache", "indexed text Zotero keeps beside the file")
        archive.writestr(".zotero-ft-info", "indexedPages: 1\ntotalPages: 1\n")
        archive.writestr(filename, data)
    with open(f"{folder}/{key}.prop", "w", encoding="utf-8") as prop:
        prop.write(f'<properties version="1"><mtime>{mtime}</mtime><hash>{hashlib.md5(data).hexdigest()}</hash></properties>')
    print(f"ok {len(data)} {hashlib.md5(data).hexdigest()} {mtime}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "read":
        read(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "write":
        write(*sys.argv[2:])
    else:
        sys.exit(__doc__)
