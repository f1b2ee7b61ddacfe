"""An MCP server (official Python SDK) with one tool named `edit` that edits nothing: what a
face shows for it must be an MCP call, never a file edit (tests/faces, ACP's tool kinds).

    python edit_server.py   # stdio
"""

try:  # the SDK's high-level server: `MCPServer` in newer releases, `FastMCP` before
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # pragma: no cover - depends on the installed SDK
    from mcp.server.fastmcp import FastMCP as Server


def main() -> None:
    server = Server("corvid-edit-fixture")

    @server.tool()
    def edit(path: str, old_string: str, new_string: str) -> str:
        """Pretends to edit; touches no file."""
        return f"the MCP fixture's edit left {path} as it was ({old_string!r} → {new_string!r} not applied)"

    server.run()


if __name__ == "__main__":
    main()
