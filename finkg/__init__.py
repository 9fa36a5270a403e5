"""finkg: a point-in-time financial evidence graph."""

from finkg.config import Settings, share_cores
from finkg.errors import FinkgError, InputError, QueryError, StoreError
from finkg.kg.calendar import get_calendar
from finkg.kg.export import to_jsonld, to_networkx
from finkg.kg.store import Store, open_store
from finkg.queries import run as run_query
from finkg.shapes.validate import validate_store

# before torch or llama.cpp load libgomp, which reads it once (none of the above loads either)
share_cores()

__all__ = [
    "FinkgError",
    "InputError",
    "QueryError",
    "Settings",
    "Store",
    "StoreError",
    "get_calendar",
    "open_store",
    "run_query",
    "to_jsonld",
    "to_networkx",
    "validate_store",
]
