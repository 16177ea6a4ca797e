"""A real HTTP server on 127.0.0.1 (an ephemeral port) for the tests that download or post: one place that starts
it in a thread and stops it quickly.

`serve_forever` looks for a shutdown request every `poll_interval` (0.5 s by default), so a test that stops its
server waited up to half a second in teardown; the suite starts about twenty of them."""
from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Callable, Iterator
from typing import Any

_POLL_SECONDS = 0.01


@contextlib.contextmanager
def serving(handler: Callable[..., Any]) -> Iterator[http.server.ThreadingHTTPServer]:
    """Serve with `handler` (a request handler class, or a partial of one) until the block ends."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": _POLL_SECONDS}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def base_url(server: http.server.ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"
