"""The API's routes, one APIRouter per resource; `graphmem.api.app.create_app` includes them all."""

from fastapi import APIRouter

from . import attempts, catalog, context, ops, turns, users

ROUTERS: tuple[APIRouter, ...] = (
    ops.router,
    turns.router,
    context.router,
    users.router,
    attempts.router,
    catalog.router,
)
