#!/usr/bin/env python3
"""Prints where the Worker's wasm bytes are, by crate and by module of our own crates, as an estimated share of
the deployed gzip size (scripts/size-breakdown.sh prepares the inputs).

Usage: breakdown.py NAMED_WASM RAW_WASM LINKER_MAP DEPLOYED_WASM

NAMED_WASM is wasm-bindgen's output for the deployed build, before wasm-opt: its function names are kept, and
wasm-opt's inlining has not yet merged functions into their callers. Each function body goes to one crate, read
from its name: the first crate other than core/alloc/std that the name mentions (so
`drop_in_place<zotero_mcp_server::…>` and `<serde_json::…>::deserialize_map` count where the type lives), else
core/alloc/std. Legacy symbol names carry
no generic arguments, so `Vec<T>::push` and the like stay under alloc/core whoever instantiated them.

Constant data is attributed with the linker's map (RAW_WASM's memory image, by the input section each range came
from); `<internal>` is the string constants the linker merged across all crates.

The gzip share: each group's bytes are deflated alone, and the results are scaled so that they sum to the
deployed file's gzip -9 size (wasm-opt shrinks every group, not all alike). A group's share is an estimate of
what it costs, not what removing it would save exactly (callers and shared strings go with it, or stay)."""
import gzip
import re
import sys
import zlib
from collections import defaultdict

WORKSPACE = {'zotero_mcp', 'zotero_mcp_core', 'zotero_mcp_server'}
STD = {'core', 'alloc', 'std'}
KIB = 1024.0


def leb(b, i):
    result = shift = 0
    while True:
        x = b[i]
        i += 1
        result |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return result, i


def sections(b):
    i = 8
    while i < len(b):
        sid = b[i]
        size, j = leb(b, i + 1)
        yield sid, b[j:j + size], b[i:j + size]
        i = j + size


def skip_limits(s, j):
    flags, j = leb(s, j)
    _, j = leb(s, j)
    if flags & 1:
        _, j = leb(s, j)
    return j


def read_const_expr(s, j):
    """An i32.const offset expression: returns (value, index after `end`)."""
    op = s[j]
    if op != 0x41:
        raise ValueError('data segment offset is not an i32.const')
    value, j = leb(s, j + 1)
    return value, j + 1


def parse(path):
    """Function bodies by index, function names, data segments (address, bytes), and the other sections' bytes."""
    b = open(path, 'rb').read()
    imported = 0
    bodies, names, data, rest = [], {}, [], bytearray()
    for sid, s, whole in sections(b):
        if sid == 2:
            n, j = leb(s, 0)
            for _ in range(n):
                for _ in range(2):
                    length, j = leb(s, j)
                    j += length
                kind = s[j]
                j += 1
                if kind == 0:
                    _, j = leb(s, j)
                    imported += 1
                elif kind == 1:
                    j = skip_limits(s, j + 1)
                elif kind == 2:
                    j = skip_limits(s, j)
                elif kind == 3:
                    j += 2
                elif kind == 4:
                    _, j = leb(s, j + 1)
            rest += whole
        elif sid == 10:
            n, j = leb(s, 0)
            for _ in range(n):
                length, j = leb(s, j)
                bodies.append(s[j:j + length])
                j += length
        elif sid == 11:
            n, j = leb(s, 0)
            for _ in range(n):
                flags, j = leb(s, j)
                address = None
                if flags == 0:
                    address, j = read_const_expr(s, j)
                elif flags == 2:
                    _, j = leb(s, j)
                    address, j = read_const_expr(s, j)
                length, j = leb(s, j)
                data.append((address, s[j:j + length]))
                j += length
        elif sid == 0:
            length, j = leb(s, 0)
            if s[j:j + length] == b'name':
                j += length
                while j < len(s):
                    sub = s[j]
                    size, j = leb(s, j + 1)
                    if sub == 1:
                        n, k = leb(s, j)
                        for _ in range(n):
                            index, k = leb(s, k)
                            length, k = leb(s, k)
                            names[index] = s[k:k + length].decode('utf-8', 'replace')
                            k += length
                    j += size
        else:
            rest += whole
    return imported, bodies, names, data, bytes(rest)


PATH_START = re.compile(r'(?:^|[<\s,(&*;\[])([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)?')


def owner(name):
    """(crate, module) a function name belongs to."""
    n = re.sub(r'\[[0-9a-f]+\]', '', name)
    found = PATH_START.findall(n)
    if not found:
        if name.startswith(('__wbindgen', '__wbg', '__externref')):
            return 'wasm_bindgen', ''
        return '(unnamed: allocator, intrinsics)', ''
    for crate, module in found:
        if crate not in STD and crate[0].islower():
            return crate, module
    return found[0][0], found[0][1]


def map_ranges(path):
    """(address, size, crate) of each constant the linker placed, from its map's DATA part."""
    out = []
    in_data = False
    for line in open(path, errors='replace'):
        fields = line.split(None, 3)
        if len(fields) == 4 and fields[0] == '-' and fields[3].strip() in ('DATA', 'CODE', 'CUSTOM(name)'):
            in_data = fields[3].strip() == 'DATA'
            continue
        if not in_data or len(fields) != 4 or fields[0] == '-' or ':(' not in fields[3]:
            continue
        source = fields[3].split(':(')[0]
        if source == '<internal>':
            crate = '(merged string constants, all crates)'
        else:
            base = source.rsplit('/', 1)[-1]
            m = re.match(r'lib([A-Za-z0-9_]+)-[0-9a-f]+\.rlib', base) or re.match(r'([A-Za-z0-9_]+)\.', base)
            crate = m.group(1) if m else base
        out.append((int(fields[0], 16), int(fields[2], 16), crate))
    return out


def deflated(data):
    return len(zlib.compress(bytes(data), 9))


def table(title, rows, total_gz, limit):
    print(f'\n{title}')
    print(f'{"":>2} {"contributor":<44} {"code KiB":>9} {"data KiB":>9} {"gzip KiB":>9} {"share":>6}')
    shown = rows[:limit]
    for rank, (key, code, data, gz) in enumerate(shown, 1):
        print(f'{rank:>2} {key[:44]:<44} {code / KIB:>9.1f} {data / KIB:>9.1f} {gz / KIB:>9.1f} {100 * gz / total_gz:>5.1f}%')
    others = rows[limit:]
    if others:
        code = sum(r[1] for r in others)
        data = sum(r[2] for r in others)
        gz = sum(r[3] for r in others)
        print(f'{"":>2} {f"({len(others)} more)":<44} {code / KIB:>9.1f} {data / KIB:>9.1f} {gz / KIB:>9.1f} {100 * gz / total_gz:>5.1f}%')


def main():
    named, raw, linker_map, deployed = sys.argv[1:5]
    deployed_gz = len(gzip.compress(open(deployed, 'rb').read(), 9))

    imported, bodies, names, _, rest = parse(named)
    code = defaultdict(bytearray)
    module_code = defaultdict(bytearray)
    for i, body in enumerate(bodies):
        crate, module = owner(names.get(imported + i, ''))
        code[crate] += body
        if crate in WORKSPACE:
            module_code[f'{crate}::{module}'] += body

    # Constant data: the raw build's memory image, cut where the linker's map says each input section went.
    _, _, _, segments, _ = parse(raw)
    memory = {}
    for address, content in segments:
        if address is not None:
            memory[address] = content
    starts = sorted(memory)

    def read(address, size):
        for start in reversed(starts):
            if start <= address:
                return memory[start][address - start:address - start + size]
        return b''

    data = defaultdict(bytearray)
    tables = []
    for address, size, crate in map_ranges(linker_map):
        chunk = read(address, size)
        data[crate] += chunk
        tables.append((len(chunk), crate, address))

    groups = set(code) | set(data)
    structure = '(wasm structure: types, imports, exports)'
    deflate = {g: deflated(code[g] + data[g]) for g in groups}
    deflate[structure] = deflated(rest)
    scale = deployed_gz / sum(deflate.values())
    rows = [(g, len(code[g]), len(data[g]), deflate[g] * scale) for g in groups]
    rows.append((structure, len(rest), 0, deflate[structure] * scale))
    rows.sort(key=lambda r: -r[3])

    print(f'deployed wasm: {deployed_gz / KIB:.1f} KiB gzip -9; code {sum(map(len, bodies)) / KIB:.0f} KiB, '
          f'data {sum(len(v) for v in data.values()) / KIB:.0f} KiB raw (estimates scaled by {scale:.3f})')
    table('By crate (a generic function counts for the crate its name mentions first, past core/alloc/std):',
          rows, deployed_gz, 40)

    # Our crates by top-level module: the code share as above, scaled the same way; their data stays per crate.
    module_rows = []
    for key, content in module_code.items():
        module_rows.append((key, len(content), 0, deflated(content) * scale))
    module_rows.sort(key=lambda r: -r[3])
    table('Our crates by module (code only; their constants are in the crate rows above):', module_rows,
          deployed_gz, 30)

    tables.sort(reverse=True)
    print('\nLargest constants (raw KiB; the merged strings are one block):')
    for size, crate, address in tables[:12]:
        print(f'   {size / KIB:>7.1f}  {crate} at 0x{address:x}')


if __name__ == '__main__':
    main()
