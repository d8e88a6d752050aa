"""uvicorn's HTTP protocol with the 400 it sends itself in the error shape.

Requests that the HTTP parser refuses before the application sees them (a NUL or other control
byte in a header, a URL beyond the parser's ~64 KB, a malformed request line) were answered by
uvicorn with plain text "Invalid HTTP request received."; every other error is JSON. Used by
`graphmem serve` and the tests' server.
"""

from __future__ import annotations

import json

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

_BODY = json.dumps(
    {
        "error": {
            "code": "BAD_HTTP_REQUEST",
            "message": (
                "the HTTP request could not be parsed (a control character in a header or the request line, a URL "
                "over 64 KB, or malformed HTTP)"
            ),
        }
    }
).encode("ascii")


class JsonErrorHttpProtocol(HttpToolsProtocol):
    def send_400_response(self, msg: str) -> None:
        content = [b"HTTP/1.1 400 Bad Request\r\n"]
        for name, value in self.server_state.default_headers:
            content.extend([name, b": ", value, b"\r\n"])
        content.extend(
            [
                b"content-type: application/json\r\n",
                b"content-length: " + str(len(_BODY)).encode("ascii") + b"\r\n",
                b"connection: close\r\n",
                b"\r\n",
                _BODY,
            ]
        )
        self.transport.write(b"".join(content))
        self.transport.close()
