"""An MCP server that requires OAuth, on the official Python SDK (PyPI `mcp`), for the sign-in
tests of corvid's MCP client (crates/corvid-mcp/tests, crates/corvid-cli/tests/mcp.rs).

Two HTTP servers on ephemeral 127.0.0.1 ports, in one process:

- the authorization server: the SDK's own OAuth routes (RFC 8414 metadata, dynamic client
  registration, /authorize, /token with its PKCE check, refresh) over the small in-memory
  provider below, whose /authorize approves at once and redirects straight to the client's
  callback (the test plays the browser by GETting the authorization URL);
- the resource server: an SDK MCPServer at /mcp that answers 401 with a `WWW-Authenticate`
  challenge (RFC 9728 protected resource metadata) unless the bearer token is one the
  authorization server issued and has not expired.

    python oauth_server.py --log events.jsonl [--access-ttl S] [--refuse-refresh]
        [--refuse-code] [--no-registration] [--client ID=REDIRECT_URI]

Prints one line of JSON once both listen: {"as": PORT, "rs": PORT}. Every registration,
authorization and token grant is appended to the log as a JSON line; the events carry no
token.

Tools: echo (returns its text), whoami (the client id the token was issued to).
"""

import argparse
import asyncio
import json
import secrets
import socket
import sys
import time

import logging

import uvicorn
from pydantic import AnyHttpUrl
from starlette.applications import Starlette

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    ProviderTokenVerifier,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

try:  # the SDK's high-level server: `MCPServer` in newer releases, `FastMCP` before
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # pragma: no cover - depends on the installed SDK
    from mcp.server.fastmcp import Context
    from mcp.server.fastmcp import FastMCP as Server

SCOPE = "mcp"


class Events:
    def __init__(self, path):
        self.path = path

    def add(self, kind, **fields):
        with open(self.path, "a") as log:
            log.write(json.dumps({"event": kind, **fields}) + "\n")


class Provider:
    """An in-memory authorization server that approves every request at once."""

    def __init__(self, events, access_ttl, refuse_refresh, refuse_code):
        self.events = events
        self.access_ttl = access_ttl
        self.refuse_refresh = refuse_refresh
        self.refuse_code = refuse_code
        self.clients = {}
        self.codes = {}
        self.access = {}
        self.refresh = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull):
        self.clients[client_info.client_id] = client_info
        self.events.add(
            "register",
            client_id=client_info.client_id,
            client_name=client_info.client_name,
            redirect_uris=[str(uri) for uri in client_info.redirect_uris or []],
        )

    async def authorize(self, client, params: AuthorizationParams):
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [SCOPE],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        self.events.add(
            "authorize",
            client_id=client.client_id,
            redirect_uri=str(params.redirect_uri),
            scopes=params.scopes,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(self, client, authorization_code):
        self.codes.pop(authorization_code.code, None)
        if self.refuse_code:
            self.events.add("code_refused", client_id=client.client_id)
            raise TokenError("invalid_grant", "this code is refused on purpose")
        return self.issue(client.client_id, authorization_code.scopes, "authorization_code")

    async def load_refresh_token(self, client, refresh_token):
        found = self.refresh.get(refresh_token)
        if found is None or found.client_id != client.client_id:
            return None
        return found

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        if self.refuse_refresh:
            self.events.add("refresh_refused", client_id=client.client_id)
            raise TokenError("invalid_grant", "this refresh token was revoked")
        self.refresh.pop(refresh_token.token, None)
        return self.issue(client.client_id, scopes or refresh_token.scopes, "refresh_token")

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def issue(self, client_id, scopes, grant):
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        expires_at = int(time.time()) + self.access_ttl
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires_at
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes)
        self.events.add("token", grant=grant, client_id=client_id, scopes=scopes)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.access_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )


def listen():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock, sock.getsockname()[1]


async def main():
    logging.getLogger("mcp").setLevel(logging.WARNING)
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--access-ttl", type=int, default=3600)
    parser.add_argument("--refuse-refresh", action="store_true")
    parser.add_argument("--refuse-code", action="store_true")
    parser.add_argument("--no-registration", action="store_true")
    parser.add_argument("--client", action="append", default=[], help="ID=REDIRECT_URI")
    args = parser.parse_args()

    events = Events(args.log)
    provider = Provider(events, args.access_ttl, args.refuse_refresh, args.refuse_code)
    for client in args.client:
        client_id, redirect_uri = client.split("=", 1)
        provider.clients[client_id] = OAuthClientInformationFull(
            client_id=client_id,
            redirect_uris=[redirect_uri],
            token_endpoint_auth_method="none",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=SCOPE,
        )

    as_socket, as_port = listen()
    rs_socket, rs_port = listen()
    issuer = AnyHttpUrl(f"http://127.0.0.1:{as_port}")
    resource = f"http://127.0.0.1:{rs_port}/mcp"

    authorization_server = Starlette(
        routes=create_auth_routes(
            provider=provider,
            issuer_url=issuer,
            client_registration_options=ClientRegistrationOptions(
                enabled=not args.no_registration,
                valid_scopes=[SCOPE],
                default_scopes=[SCOPE],
            ),
        )
    )

    mcp = Server(
        "corvid-oauth-fixture",
        auth=AuthSettings(
            issuer_url=issuer,
            resource_server_url=resource,
            required_scopes=[SCOPE],
            validate_token_resource=False,
        ),
        token_verifier=ProviderTokenVerifier(provider),
    )

    @mcp.tool()
    def echo(text: str) -> str:
        """Returns the text."""
        return text

    @mcp.tool()
    def whoami(ctx: Context) -> str:
        """The client id the caller's token was issued to."""
        from mcp.server.auth.middleware.auth_context import get_access_token

        token = get_access_token()
        return token.client_id if token else "<anonymous>"

    servers = [
        uvicorn.Server(uvicorn.Config(authorization_server, log_level="warning")),
        uvicorn.Server(uvicorn.Config(mcp.streamable_http_app(), log_level="warning")),
    ]
    tasks = [
        asyncio.create_task(servers[0].serve(sockets=[as_socket])),
        asyncio.create_task(servers[1].serve(sockets=[rs_socket])),
    ]
    while not all(server.started for server in servers):
        await asyncio.sleep(0.02)
    print(json.dumps({"as": as_port, "rs": rs_port}), flush=True)
    await asyncio.gather(*tasks)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:  # pragma: no cover
        sys.exit(0)
