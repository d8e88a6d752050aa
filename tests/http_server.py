"""Runs the real API in a uvicorn server on a free loopback port (tests only)."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass

import httpx
import uvicorn

from graphmem.api.app import create_app
from graphmem.api.http_protocol import JsonErrorHttpProtocol
from graphmem.settings import Settings


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningAPI:
    base_url: str
    server: uvicorn.Server
    thread: threading.Thread
    app: object

    def client(self, key: str | None = None, timeout: float = 60.0) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def start_api(settings: Settings, ready_timeout_s: float = 180.0) -> RunningAPI:
    port = free_port()
    app = create_app(settings)
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", http=JsonErrorHttpProtocol)
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    api = RunningAPI(f"http://127.0.0.1:{port}", server, thread, app)
    deadline = time.monotonic() + ready_timeout_s
    with httpx.Client(base_url=api.base_url, timeout=5) as client:
        while time.monotonic() < deadline:
            try:
                if client.get("/readyz").status_code == 200:
                    return api
            except httpx.TransportError:
                pass
            time.sleep(0.3)
    api.stop()
    raise RuntimeError("the API did not become ready")
