"""graphmem's HTTP API (FastAPI)."""
