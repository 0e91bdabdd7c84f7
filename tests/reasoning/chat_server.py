"""A local HTTP server speaking OpenAI's Chat Completions API with scripted answers: a stand-in for a hosted
model (none is reachable here), so the protocol around it (structured output, validation, timeouts, rate limits,
caching, fallback) is tested over real HTTP through the real ``openai`` SDK."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    """One scripted reply: ``content`` as the message text (any string, JSON or not), or an HTTP ``status``
    error, after ``delay`` seconds."""

    content: str | dict | None = None
    status: int = 200
    delay: float = 0.0

    def body(self) -> bytes:
        if self.status != 200:
            return json.dumps({"error": {"message": "scripted error", "type": "rate_limit_exceeded"
                                         if self.status == 429 else "server_error"}}).encode()
        text = self.content if isinstance(self.content, str) else json.dumps(self.content)
        return json.dumps({"id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()),
                           "model": "scripted", "choices": [{"index": 0, "finish_reason": "stop",
                                                            "message": {"role": "assistant", "content": text}}],
                           "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}).encode()


@dataclass
class ScriptedModel:
    """Replies in order (the last one repeats); ``requests`` keeps every request's body and headers (names in
    lower case)."""

    replies: list[Reply]
    requests: list[dict] = field(default_factory=list)
    url: str = ""

    def reply(self) -> Reply:
        return self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]

    def prompt(self, index: int = -1) -> str:
        return "\n".join(m["content"] for m in self.requests[index]["body"]["messages"])


@contextmanager
def chat_server(*replies: Reply) -> Iterator[ScriptedModel]:
    model = ScriptedModel(list(replies))

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            headers = {name.lower(): value for name, value in self.headers.items()}
            model.requests.append({"path": self.path, "body": body, "headers": headers})
            reply = model.reply()
            time.sleep(reply.delay)
            payload = reply.body()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                if reply.status == 429:
                    self.send_header("Retry-After", "0")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (timeout tests)
                pass

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    model.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
