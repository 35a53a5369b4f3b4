"""`ncu-roofline mcp`: serve the analysis to agents over the Model Context Protocol (stdio); cli/mcp_server.py."""

from __future__ import annotations

from typing import List

import typer

from .common import PATH, user_errors


def mcp(root: List[str] = typer.Option([], "--root", click_type=PATH, help="A folder the server may read under (repeatable; "
                                                          "default: the working folder). Paths outside are "
                                                          "refused.")) -> None:
    """Serve analyze, show, compare, history, model and ceilings as MCP tools over stdio (needs the mcp extra)."""
    from .mcp_server import serve

    with user_errors():
        serve(root)
