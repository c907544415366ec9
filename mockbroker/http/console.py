"""The web console's static files (mockbroker/http/ui/: HTML, CSS and JavaScript modules shipped as
package data), served at ``/ui`` by the HTTP control API's server.

The console is a client of the documented API and nothing else: its pages call the same endpoints
as curl would, with the same bearer token (entered in the page and sent as ``Authorization``),
so it has no data of its own to protect. Its files are the same for everyone (they are in the
wheel), so they are served without the token, like ``/healthz``; every call they make for data
is checked as any other (docs/http.md, "The web console"). A Content-Security-Policy keeps the
pages from loading or calling anything but this server.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from aiohttp import web

PREFIX = "/ui"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}
# 'self' only: no script, style, image or connection to any other host (and no inline script).
CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"


@cache
def assets() -> dict[str, bytes]:
    """The console's files by name, read once from the package."""
    root = resources.files("mockbroker.http") / "ui"
    return {f.name: f.read_bytes() for f in root.iterdir() if f.is_file() and f.name.endswith(tuple(_TYPES))}


def is_console(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


async def serve(request: web.Request) -> web.StreamResponse:
    name = request.match_info.get("name", "") or "index.html"
    body = assets().get(name)
    if body is None:
        raise web.HTTPNotFound()
    suffix = name[name.rfind(".") :]
    return web.Response(
        body=body,
        headers={"Content-Type": _TYPES[suffix], "Content-Security-Policy": CSP, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"},
    )


async def redirect(request: web.Request) -> web.StreamResponse:
    # The pages load their modules relative to /ui/, so /ui itself moves there.
    raise web.HTTPPermanentRedirect(PREFIX + "/")


def add_routes(app: web.Application) -> None:
    app.router.add_get(PREFIX, redirect, name="console_redirect")
    app.router.add_get(PREFIX + "/", serve, name="console_index")
    app.router.add_get(PREFIX + "/{name}", serve, name="console_asset")
