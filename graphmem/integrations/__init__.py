"""Glue between graphmem and agent frameworks (each an optional extra, e.g. `graphmem[langgraph]`)."""
