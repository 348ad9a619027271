"""The native `zotero-mcp serve --stdio` driven by the official Python SDK (`mcp`): initialize, list the tools,
search the demo library, and check a read-only server refuses a write; then `serve --stdio --local` on the
simulator's Zotero 10 and Zotero 7 (its local-API mode). Run by scripts/e2e.sh, which sets ZOTERO_MCP_BIN,
SIM_URL and the LOCAL*_URL/LOCAL*_DATA pairs; prints one `ok - …` / `not ok - …` line per check (counted there) and exits non-zero
when any failed.

Every successful answer is held to its tool's outputSchema by the SDK itself: `ClientSession.call_tool` runs
`validate_tool_result`, which lists the tools on its own when it holds no schema for the name, and raises
RuntimeError when structuredContent is missing or does not validate (mcp 2.3.0, mcp/client/session.py). `call`
below turns that into a failure naming the tool, the failing path and the arguments; the first check shows,
against a stand-in that answers wrongly, that the SDK does refuse such an answer."""

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from typing import Any

from jsonschema.exceptions import ValidationError
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# A stdio MCP server in a few lines (raw JSON-RPC, one message a line): its tool's outputSchema wants
# `items[].key` to be a string, and its answer has a number there.
STANDIN = r"""
import json, sys
TOOL = {
    "name": "fixture_count",
    "inputSchema": {"type": "object", "properties": {"mode": {"type": "string"}}},
    "outputSchema": {
        "type": "object",
        "properties": {"count": {"type": "integer"}, "items": {"type": "array", "items": {"type": "object", "properties": {"key": {"type": "string"}}}}},
        "required": ["count", "items"],
    },
}
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message.get("method")
    reply = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        version = message["params"]["protocolVersion"]
        reply["result"] = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": {"name": "output-schema-standin", "version": "1.0.0"}}
    elif method == "tools/list":
        reply["result"] = {"tools": [TOOL]}
    elif method == "tools/call":
        reply["result"] = {"content": [{"type": "text", "text": "no count"}], "structuredContent": {"count": 1, "items": [{"key": 7}]}}
    elif method == "ping":
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": f"no {method} here"}
    print(json.dumps(reply), flush=True)
"""


class OutputSchemaMismatch(AssertionError):
    pass


async def call(session: ClientSession, name: str, arguments: dict[str, Any]) -> Any:
    """`session.call_tool`, a refusal by the SDK's output-schema check turned into a failure naming the arguments."""
    try:
        return await session.call_tool(name, arguments)
    except RuntimeError as error:
        if "structured content" not in str(error):
            raise
        cause = error.__cause__
        # The SDK's message carries jsonschema's whole report; the path and the reason are enough here.
        detail = f"{cause.json_path} {cause.message}" if isinstance(cause, ValidationError) else str(error)
        raise OutputSchemaMismatch(
            f"{name} answer does not match its outputSchema: {detail}; arguments: {json.dumps(arguments, ensure_ascii=False)}"
        ) from error


def server(data_dir: str, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=os.environ["ZOTERO_MCP_BIN"],
        args=["serve", "--stdio", *extra],
        env={
            "PATH": os.environ.get("PATH", ""),
            "ZOTERO_API_BASE": os.environ["SIM_URL"],
            "ZOTERO_API_KEY": "demo",
            "ZOTERO_LIBRARY_ID": "1234567",
            "ZOTERO_MCP_DATA_DIR": data_dir,
        },
    )


async def check_standin() -> str:
    standin = StdioServerParameters(command=sys.executable, args=["-c", STANDIN], env={"PATH": os.environ.get("PATH", "")})
    async with stdio_client(standin) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            # No list_tools here: the SDK lists by itself before it validates.
            try:
                result = await call(session, "fixture_count", {"mode": "wrong"})
            except OutputSchemaMismatch as mismatch:
                expected = 'fixture_count answer does not match its outputSchema: $.items[0].key 7 is not of type \'string\'; arguments: {"mode": "wrong"}'
                assert str(mismatch) == expected, str(mismatch)
            else:
                raise AssertionError(f"the SDK accepted an answer that does not match its outputSchema: {result}")
    return "the SDK refuses an answer that does not match its outputSchema (stand-in server)"


async def check_library(data_dir: str) -> str:
    async with stdio_client(server(data_dir)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "zotero-mcp", init.server_info
            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            assert "zotero_search" in names and "zotero_notes" in names, names
            assert all(t.output_schema for t in tools), [t.name for t in tools if not t.output_schema]
            found = await call(session, "zotero_search", {"query": "宋代", "limit": 3})
            assert not found.is_error, found
            items = found.structured_content["items"]
            assert len(items) >= 1, found.structured_content
            item = await call(session, "zotero_get_item", {"key": items[0]["key"]})
            assert not item.is_error and item.structured_content["item"]["key"] == items[0]["key"], item
    return "initialize, tools/list, search and get_item, answers matching their outputSchemas"


async def check_read_only(data_dir: str) -> str:
    async with stdio_client(server(data_dir, "--read-only")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            refused = await call(
                session, "zotero_create_items", {"items": [{"itemType": "book", "title": "Python should not write"}]}
            )
            assert refused.is_error, refused
            assert "read-only" in refused.content[0].text, refused.content
    return "a read-only server refuses a write"


@contextlib.asynccontextmanager
async def desktop(data_dir: str, flavour: str):
    """A session with `serve --stdio --local` on the simulator's Zotero 10 or Zotero 7 (LOCAL10_URL / LOCAL7_URL
    and their data directories, set by scripts/e2e.sh), initialized and past a search of the desktop's library."""
    server = StdioServerParameters(
        command=os.environ["ZOTERO_MCP_BIN"],
        args=["serve", "--stdio", "--local"],
        env={
            "PATH": os.environ.get("PATH", ""),
            "HOME": data_dir,
            "ZOTERO_LOCAL_URL": os.environ[f"LOCAL{flavour}_URL"] + "/api",
            "ZOTERO_DATA_DIR": os.environ[f"LOCAL{flavour}_DATA"],
            "ZOTERO_MCP_DATA_DIR": data_dir,
        },
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            found = await call(session, "zotero_search", {"query": "宋代", "limit": 3})
            assert not found.is_error and found.structured_content["items"], found
            yield session


async def check_desktop_10(data_dir: str) -> str:
    async with desktop(data_dir, "10") as session:
        pages = await call(session, "zotero_read_attachment", {"itemKey": "A6JVMAK4", "fromPage": 1, "toPage": 5})
        assert not pages.is_error, pages.content
        assert pages.structured_content["source"] == "zotero-desktop", pages.structured_content["source"]
        read = pages.structured_content["pages"]
        # A read longer than the answer's budget stops at a page boundary; the rest is one call further.
        assert read and read[0] == 1 and (read == [1, 2, 3, 4] or pages.structured_content.get("truncated")), read
        assert pages.structured_content["totalPages"] == 4, pages.structured_content["totalPages"]
        title = "Python desktop note"
        note = await call(session, "zotero_notes", {"action": "create", "itemKey": "6FEP7ILJ", "title": title, "note": "from Python"})
        assert not note.is_error, note.content
        listed = await call(session, "zotero_notes", {"action": "list", "itemKey": "6FEP7ILJ"})
        keys = [n["key"] for n in listed.structured_content["notes"]]
        assert note.structured_content["noteKey"] in keys, keys
    return "on Zotero 10 (--local): search, a PDF read by pages from disk, a note written through the local API"


async def check_desktop_7(data_dir: str) -> str:
    async with desktop(data_dir, "7") as session:
        refused = await call(session, "zotero_notes", {"action": "create", "itemKey": "6FEP7ILJ", "note": "no"})
        assert refused.is_error, refused
        assert "takes no writes on its local API" in refused.content[0].text, refused.content
    return "on Zotero 7 (--local): reads, and a write refused with what to configure"


def main() -> int:
    failures = 0
    checks = [
        check_standin,
        lambda: check_library(data_dir),
        lambda: check_read_only(data_dir),
        lambda: check_desktop_10(data_dir),
        lambda: check_desktop_7(data_dir),
    ]
    with tempfile.TemporaryDirectory() as data_dir:
        for check in checks:
            try:
                said = asyncio.run(asyncio.wait_for(check(), timeout=120))
                print(f"ok - python mcp stdio client: {said}")
            except Exception as error:  # noqa: BLE001 - any failure fails the check, with its story
                failures += 1
                print(f"not ok - python mcp stdio client: {type(error).__name__}: {error}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
