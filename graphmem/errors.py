"""Errors with a machine-readable code, an HTTP status and a sentence for people.

Every error a user can cause is one of these; the API turns them into
{"error": {"code": ..., "message": ...}} with the status given here.
"""

from __future__ import annotations


class GraphmemError(Exception):
    code: str = "GRAPHMEM_ERROR"
    status: int = 500

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status

    def to_dict(self) -> dict[str, dict[str, str]]:
        return {"error": {"code": self.code, "message": self.message}}


class InvalidInput(GraphmemError):
    code = "INVALID_INPUT"
    status = 422


class InvalidCatalog(GraphmemError):
    code = "INVALID_CATALOG"
    status = 422


class NotFound(GraphmemError):
    code = "NOT_FOUND"
    status = 404


class ContextLoopDetected(GraphmemError):
    code = "CONTEXT_LOOP_DETECTED"
    status = 409


class CriticalCompressionFailure(GraphmemError):
    code = "CRITICAL_COMPRESSION_FAILURE"
    status = 409


class StoreUnavailable(GraphmemError):
    code = "STORE_UNAVAILABLE"
    status = 503


class ModelMissing(GraphmemError):
    code = "SPACY_MODEL_MISSING"
    status = 503


class TurnIdConflict(GraphmemError):
    """A turn id already stored for the user with other text, role or session."""

    code = "TURN_ID_CONFLICT"
    status = 409
