"""APIs and error codes named the ways a test may name them: by number, by Kafka's name, by enum."""

from __future__ import annotations

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS


def api_key_of(api: int | str) -> ApiKey:
    """An API key from its number or its name ("JoinGroup", case-insensitive); ValueError otherwise."""
    if isinstance(api, int):
        if api not in APIS:
            raise ValueError(f"unknown api key {api}")
        return ApiKey(api)
    wanted = api.replace("_", "").lower()
    for key, spec in APIS.items():
        if spec.name.lower() == wanted:
            return ApiKey(key)
    raise ValueError(f"unknown API {api!r}; known: {', '.join(sorted(s.name for s in APIS.values()))}")


def error_code_of(error: int | str | ErrorCode) -> int:
    if isinstance(error, str):
        try:
            return int(ErrorCode[error.upper()])
        except KeyError:
            import difflib

            close = difflib.get_close_matches(error.upper(), ErrorCode.__members__, n=5, cutoff=0.6)
            hint = f"; close matches: {', '.join(close)}" if close else " (use Kafka's name, e.g. NOT_COORDINATOR)"
            raise ValueError(f"unknown error {error!r}{hint}") from None
    return int(ErrorCode(error))
