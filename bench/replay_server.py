"""An API server whose GraphMemory replays one recorded IngestResult (bench/api_overhead.py).

Run as a script with PYTHONPATH naming the checkout whose API to serve, so that two versions of the
API can be measured side by side: ``python bench/replay_server.py RESULT.json PORT``. It imports
nothing from bench/ for that reason.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


class ReplayMemory:
    """Stands in for GraphMemory inside the API process: answers ingest with a recorded result."""

    schema_applied = True
    models_loaded = True
    last_extraction_seconds = 0.0

    def __init__(self, result_json: str) -> None:
        from graphmem.models import IngestResult

        self.result = IngestResult.model_validate_json(result_json)

    def ingest(self, tenant: str, user_id: str, session_id: str, turns: Any, **options: Any) -> Any:
        if options.get("edit_log") is False:
            return self.result.model_copy(update={"edits": []})
        return self.result

    def ready(self) -> dict[str, bool]:
        return {"neo4j": True, "schema": True, "models": True, "ready": True}

    def close(self) -> None:
        pass


def main(result_path: str, port: int) -> None:
    import uvicorn

    from graphmem.api.app import create_app
    from graphmem.settings import Settings

    memory = ReplayMemory(Path(result_path).read_text())
    app = create_app(Settings(api_keys=""), memory=memory)  # type: ignore[arg-type]
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
