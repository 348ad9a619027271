"""The native `zotero-mcp serve --stdio` driven by the official Python SDK (`mcp`): initialize, list the tools,
search the demo library, and check a read-only server refuses a write. Run by scripts/e2e.sh, which sets
ZOTERO_MCP_BIN and SIM_URL; exits non-zero on the first failure."""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


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


async def check(name: str, data_dir: str) -> None:
    async with stdio_client(server(data_dir)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "zotero-mcp", init.server_info
            tools = [t.name for t in (await session.list_tools()).tools]
            assert "zotero_search" in tools and "zotero_notes" in tools, tools
            found = await session.call_tool("zotero_search", {"query": "宋代", "limit": 3})
            assert not found.is_error, found
            items = found.structured_content["items"]
            assert len(items) >= 1, found.structured_content
            item = await session.call_tool("zotero_get_item", {"key": items[0]["key"]})
            assert not item.is_error and item.structured_content["item"]["key"] == items[0]["key"], item
    print(f"ok - {name}: initialize, tools/list, search and get_item")

    async with stdio_client(server(data_dir, "--read-only")) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            refused = await session.call_tool(
                "zotero_create_items", {"items": [{"itemType": "book", "title": "Python should not write"}]}
            )
            assert refused.is_error, refused
            assert "read-only" in refused.content[0].text, refused.content
    print(f"ok - {name}: a read-only server refuses a write")


def main() -> int:
    with tempfile.TemporaryDirectory() as data_dir:
        try:
            asyncio.run(asyncio.wait_for(check("python mcp stdio client", data_dir), timeout=120))
        except Exception as error:  # noqa: BLE001 - any failure fails the check, with its story
            print(f"not ok - python mcp stdio client: {error!r}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
