#!/usr/bin/env python3
"""Writes demo-library-guide.epub, the demo library's EPUB: a short EPUB 3 book about the demo library.

    python3 crates/sim/demo/files/make-epub.py [OUT]   (default: demo-library-guide.epub beside this script)

The text is written for this project and dedicated to the public domain (CC0 1.0, see LICENSES.md). The output
is byte-for-byte reproducible: every entry is stored (not compressed), with a fixed date and fixed attributes,
in a fixed order, so running the script again gives the committed file, whose md5 the demo library records
(crates/sim/demo/library.json, attachment ED5HAQHQ). Change the text, run the script, and update that md5.

Layout, as EPUB 3 asks: `mimetype` first, stored, with no extra field; META-INF/container.xml naming the
package document; the package (OPF) with metadata, a manifest and a spine; a navigation document; three
XHTML chapters. Only the Python standard library is used.
"""

import sys
import zipfile
from pathlib import Path

TITLE = "How to Use the zotero-mcp Demo Library"
AUTHOR = "zotero-mcp contributors"
IDENTIFIER = "urn:uuid:6b1f3c52-8d0e-4f7a-9c41-2e5d7a90b3c8"
LANGUAGE = "en"
DATE = "2026"
MODIFIED = "2026-02-02T09:00:00Z"
# Every entry's date in the archive (the earliest a ZIP can hold is 1980).
ZIP_DATE = (2026, 2, 2, 9, 0, 0)

CHAPTERS = [
    (
        "chapter-1.xhtml",
        "What Is in the Demo Library",
        [
            "The demo library is a made-up researcher’s Zotero library that ships with zotero-mcp. It lets you "
            "try every tool of the server with no Zotero account and no API key: the Zotero simulator serves it "
            "through the same Web API that zotero.org offers, and a small WebDAV server beside it holds its "
            "stored files the way Zotero Desktop lays them out.",
            "Most of its items are invented: journal articles, preprints, books, theses and reports on protein "
            "structure prediction, climate and agriculture, the history of science in Song China, and urban "
            "sociology. Their PDFs are generated from the library’s own full text, so every read path works, "
            "but they are not real papers.",
            "The collection called Demo files is different. It holds a few real documents, each freely licensed "
            "and stored unmodified: the instructions for Springer’s llncs class, a specimen article typeset with "
            "Elsevier’s elsarticle class, a sample paper made with the apa7 class, and this book. Use them to see "
            "what reading, highlighting and renaming look like on genuine PDFs, with real fonts, two-column "
            "layouts, footnotes and outlines.",
        ],
    ),
    (
        "chapter-2.xhtml",
        "Reading, Highlighting and Renaming",
        [
            "Start the server in demo mode with make dev. Without a Zotero API key in .dev.vars it starts the "
            "simulator with this library and a WebDAV server with its files, and points the server at both.",
            "Ask your assistant to search the library, for example for items in the Demo files collection, and "
            "to open one of them. The server reads an attachment’s text from Zotero’s full-text index when the "
            "index has it, and otherwise downloads the stored file from WebDAV and reads the PDF or EPUB itself. "
            "A PDF with bookmarks also has an outline, so you can ask for a single section instead of the whole "
            "document.",
            "Highlights and notes that you ask for are written back as Zotero annotations on the attachment. "
            "Renaming gives a stored file the name Zotero 7 would give it, built from the parent item’s first "
            "creator, year and title. Because the demo library lives in memory, every change disappears when "
            "the simulator stops, and the next start gives you the library as it was.",
        ],
    ),
    (
        "chapter-3.xhtml",
        "Where the Files Come From",
        [
            "The three PDFs are documentation files of LaTeX packages, copied byte for byte from Debian’s "
            "texlive-publishers-doc package. The llncs instructions are licensed by Springer under Creative "
            "Commons Attribution 4.0; the elsarticle specimen and the apa7 sample are distributed under the "
            "LaTeX Project Public License, which allows them to be passed on unchanged as long as their origin "
            "is stated. The file LICENSES.md beside them in the repository gives each file’s origin, copyright "
            "holder and licence.",
            "This book was written for the project and is dedicated to the public domain under CC0 1.0: copy it, "
            "change it and share it without asking. It is built by a short script, make-epub.py, which uses "
            "nothing but Python’s standard library.",
        ],
    ),
]

CSS = """body { font-family: serif; line-height: 1.4; margin: 1em; }
h1 { font-size: 1.4em; }
"""


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def chapter_xhtml(title, paragraphs):
    body = "\n".join(f"    <p>{escape(p)}</p>" for p in paragraphs)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{LANGUAGE}" lang="{LANGUAGE}">
<head>
  <meta charset="UTF-8"/>
  <title>{escape(title)}</title>
  <link rel="stylesheet" type="text/css" href="style.css"/>
</head>
<body>
  <section epub:type="chapter">
    <h1>{escape(title)}</h1>
{body}
  </section>
</body>
</html>
"""


def nav_xhtml():
    items = "\n".join(
        f'        <li><a href="{name}">{escape(title)}</a></li>' for name, title, _ in CHAPTERS
    )
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" xml:lang="{LANGUAGE}" lang="{LANGUAGE}">
<head>
  <meta charset="UTF-8"/>
  <title>Contents</title>
</head>
<body>
  <nav epub:type="toc" id="toc">
    <h1>Contents</h1>
    <ol>
{items}
    </ol>
  </nav>
</body>
</html>
"""


def package_opf():
    manifest = "\n".join(
        f'    <item id="c{i}" href="{name}" media-type="application/xhtml+xml"/>'
        for i, (name, _, _) in enumerate(CHAPTERS, 1)
    )
    spine = "\n".join(f'    <itemref idref="c{i}"/>' for i in range(1, len(CHAPTERS) + 1))
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="book-id" xml:lang="{LANGUAGE}">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="book-id">{IDENTIFIER}</dc:identifier>
    <dc:title>{escape(TITLE)}</dc:title>
    <dc:creator>{escape(AUTHOR)}</dc:creator>
    <dc:language>{LANGUAGE}</dc:language>
    <dc:date>{DATE}</dc:date>
    <dc:rights>CC0 1.0 Universal (public domain dedication)</dc:rights>
    <meta property="dcterms:modified">{MODIFIED}</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="css" href="style.css" media-type="text/css"/>
{manifest}
  </manifest>
  <spine>
{spine}
  </spine>
</package>
"""


CONTAINER = """<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles>
    <rootfile full-path="EPUB/package.opf" media-type="application/oebps-package+xml"/>
  </rootfiles>
</container>
"""


def entries():
    yield "mimetype", "application/epub+zip"
    yield "META-INF/container.xml", CONTAINER
    yield "EPUB/package.opf", package_opf()
    yield "EPUB/nav.xhtml", nav_xhtml()
    yield "EPUB/style.css", CSS
    for name, title, paragraphs in CHAPTERS:
        yield f"EPUB/{name}", chapter_xhtml(title, paragraphs)


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("demo-library-guide.epub")
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as book:
        for name, text in entries():
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_STORED
            info.create_system = 3  # Unix, whatever the platform, so the bytes do not depend on it
            info.external_attr = 0o100644 << 16
            book.writestr(info, text.encode("utf-8"))
    print(f"{out}: {out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
