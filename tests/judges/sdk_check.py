#!/usr/bin/env python3
"""Drive `moat serve` over stdio with the official MCP Python SDK (`mcp`).

For each mode (legacy `initialize`, and the 2026-07-28 stateless era) it
connects once, walks every `tools/list` page, then calls every tool twice:
with valid arguments (the result must have isError false, and the SDK itself
validates structuredContent against the tool's published outputSchema) and
with a path traversal (the result must have isError true).

Usage: sdk_check.py MOAT_BINARY WORKSPACE [MODE ...]
Exit 0 when every check holds; prints one line per check and a summary.
"""

from __future__ import annotations

import sys

CALLS: dict[str, tuple[dict, dict]] = {
    "read_file": ({"path": "README.md"}, {"path": "../../etc/passwd"}),
    "list_directory": ({}, {"path": "../.."}),
    "search_code": ({"pattern": "def", "context_lines": 1}, {"pattern": "root", "path": "../../etc"}),
    "find_symbol": ({"symbol": "main"}, {"symbol": "main", "path": "../.."}),
    "project_overview": ({}, {"path": "../.."}),
    "git_log": ({"limit": 5}, {"path": "../../etc"}),
    "git_diff": ({"revision": "HEAD"}, {"path": "../../etc"}),
    "find_files": ({"glob": "**/*.py", "max_results": 1}, {"path": "../.."}),
    "directory_tree": ({"depth": 2}, {"path": "../.."}),
    "file_outline": ({"path": "src/demo/core.py"}, {"path": "../../etc/passwd"}),
    "find_references": ({"identifier": "Engine"}, {"identifier": "Engine", "path": "../.."}),
    "git_show": ({"revision": "HEAD"}, {"path": "../../etc/passwd"}),
    "git_blame": ({"path": "README.md", "start_line": 1, "end_line": 3}, {"path": "../../etc/passwd"}),
    "git_status": ({"max_entries": 50}, {"max_entries": 0}),
}


async def check_mode(binary: str, workspace: str, mode: str) -> list[tuple[str, bool, str]]:
    import anyio
    import mcp_types as types
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    results: list[tuple[str, bool, str]] = []
    stray: list[str] = []

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):
            stray.append(repr(message))
        await anyio.lowlevel.checkpoint()

    params = StdioServerParameters(
        command=binary,
        args=["serve", "--workspace", workspace],
        env={"MOAT_OBSERVABILITY__LOG_LEVEL": "warning"},
    )
    client = Client(
        params,
        mode=mode,
        read_timeout_seconds=30,
        message_handler=on_message,
        client_info=types.Implementation(name="moat-judges", version="1"),
        cache=None,
    )
    with anyio.fail_after(120):
        async with client:
            names: list[str] = []
            cursor = None
            for _ in range(100):
                page = await client.list_tools(cursor=cursor)
                names.extend(t.name for t in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            ok = sorted(names) == sorted(CALLS)
            results.append((f"{mode} tools/list", ok, ", ".join(names)))
            # A client that never follows a cursor must still see every tool.
            first = await client.list_tools()
            first_names = [t.name for t in first.tools]
            ok = sorted(first_names) == sorted(CALLS) and first.next_cursor is None
            results.append((f"{mode} tools/list first page only", ok, ", ".join(first_names)))
            for tool, (good, bad) in CALLS.items():
                if tool not in names:
                    continue
                try:
                    r = await client.call_tool(tool, good)
                    ok = not r.is_error
                    detail = "isError false, structuredContent valid" if ok else str(r.content)[:200]
                except Exception as e:  # the SDK raises when a result breaks its outputSchema
                    ok, detail = False, f"{type(e).__name__}: {e}"[:300]
                results.append((f"{mode} {tool} valid", ok, detail))
                try:
                    r = await client.call_tool(tool, bad)
                    code = (r.structured_content or {}).get("error")
                    ok = bool(r.is_error)
                    detail = f"isError true ({code})" if ok else "NOT refused"
                except Exception as e:
                    ok, detail = False, f"{type(e).__name__}: {e}"[:300]
                results.append((f"{mode} {tool} traversal", ok, detail))
            # The workspace's files as resources: listed, read, completed.
            try:
                listed = await client.list_resources()
                uris = [str(r.uri) for r in listed.resources]
                ok = "moat://workspace/README.md" in uris and not any(".git/" in u for u in uris)
                results.append((f"{mode} resources/list", ok, ", ".join(uris)[:200]))
                read = await client.read_resource("moat://workspace/README.md")
                text = getattr(read.contents[0], "text", "")
                ok = "# Demo" in text and "untrusted-file-content" in text
                results.append((f"{mode} resources/read", ok, text[:120]))
                templates = await client.list_resource_templates()
                ok = [t.uri_template for t in templates.resource_templates] == ["moat://workspace/{+path}"]
                results.append((f"{mode} resources/templates/list", ok, str(templates.resource_templates)[:120]))
                done = await client.complete(
                    types.ResourceTemplateReference(type="ref/resource", uri="moat://workspace/{+path}"),
                    {"name": "path", "value": "src/de"},
                )
                ok = done.completion.values == ["src/demo/"]
                results.append((f"{mode} completion/complete", ok, str(done.completion.values)))
                try:
                    await client.read_resource("moat://workspace/../../etc/passwd")
                    results.append((f"{mode} resources/read traversal", False, "NOT refused"))
                except Exception as e:
                    ok = "-32602" in repr(e) or "outside" in str(e)
                    results.append((f"{mode} resources/read traversal", ok, f"{type(e).__name__}: {e}"[:200]))
            except Exception as e:
                results.append((f"{mode} resources", False, f"{type(e).__name__}: {e}"[:300]))
    results.append((f"{mode} stdout clean", not stray, "; ".join(stray)[:300]))
    return results


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    import anyio

    binary, workspace = argv[0], argv[1]
    modes = argv[2:] or ["legacy", "2026-07-28"]
    failed = 0
    for mode in modes:
        try:
            results = anyio.run(check_mode, binary, workspace, mode)
        except Exception as e:
            results = [(f"{mode} connect", False, f"{type(e).__name__}: {e}"[:300])]
        for name, ok, detail in results:
            failed += 0 if ok else 1
            print(f"  {'ok  ' if ok else 'FAIL'}  {name}: {detail}")
    total = sum(1 for _ in modes)
    print(f"python SDK: {'all checks passed' if failed == 0 else f'{failed} check(s) failed'} ({total} mode(s))")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
