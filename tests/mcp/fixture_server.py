"""An MCP server on the official Python SDK (PyPI `mcp`) that misbehaves on request, for the
failure tests of corvid's MCP client (crates/corvid-mcp/tests).

    python fixture_server.py serve   # stdio; tools below
    python fixture_server.py hang    # never answers `initialize`

Tools: echo, fail (a tool error), huge (a very long text), crash (the process exits mid-call),
sleep (for the tool timeout), env (reads one environment variable), pid, write (tries to write a
file), grow (adds a tool and sends notifications/tools/list_changed).
"""

import os
import sys
import time

try:  # the SDK's high-level server: `MCPServer` in newer releases, `FastMCP` before
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # pragma: no cover - depends on the installed SDK
    from mcp.server.fastmcp import FastMCP as Server

try:
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError:  # pragma: no cover
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp.exceptions import ToolError


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "serve"
    if mode == "hang":
        print("fixture: hanging before initialize", file=sys.stderr, flush=True)
        time.sleep(3600)
        return

    server = Server("corvid-fixture")

    @server.tool()
    def echo(text: str) -> str:
        """Returns the text."""
        return text

    @server.tool()
    def fail(message: str) -> str:
        """Always fails with the message (a ToolError: the one error the SDK passes on as written)."""
        raise ToolError(message)

    @server.tool()
    def huge(size: int) -> str:
        """Returns `size` characters: a head marker, filler, a tail marker."""
        body = "HEAD" + "x" * max(0, size - 8) + "TAIL"
        return body[:size]

    @server.tool()
    def crash() -> str:
        """Exits the whole process in the middle of the call."""
        print("fixture: crashing on purpose", file=sys.stderr, flush=True)
        os._exit(7)

    @server.tool()
    def sleep(seconds: float) -> str:
        """Sleeps, then answers."""
        time.sleep(seconds)
        return "slept"

    @server.tool()
    def env(name: str) -> str:
        """The value of one environment variable, or <unset>."""
        return os.environ.get(name, "<unset>")

    @server.tool()
    def pid() -> str:
        """This process's id."""
        return str(os.getpid())

    @server.tool()
    def write(path: str) -> str:
        """Tries to write a file; says what happened."""
        try:
            with open(path, "w") as handle:
                handle.write("written by the fixture")
            return "written"
        except OSError as err:
            return f"refused: {err}"

    @server.tool()
    async def grow(ctx: Context) -> str:
        """Adds the tool `grown` and tells the client its tool list changed."""

        def grown() -> str:
            """A tool that appeared later."""
            return "grown"

        server.add_tool(grown)
        await ctx.session.send_tool_list_changed()
        return "added"

    server.run()


if __name__ == "__main__":
    main()
