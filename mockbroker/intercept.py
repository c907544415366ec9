"""The request hook's documented public path (docs/control.md): a re-export of
mockbroker.control.intercept, where the hook, the request log and ``error_codes`` live."""

from mockbroker.control.intercept import (
    CLOSE,
    DEFAULT_REQUEST_LOG_CAPACITY,
    DROP,
    Action,
    After,
    Delay,
    Intercepted,
    InterceptFn,
    Interceptor,
    RequestHooks,
    RequestLog,
    RequestRecord,
    Respond,
    api_key_of,
    error_code_of,
    error_codes,
)

__all__ = [
    "CLOSE",
    "DEFAULT_REQUEST_LOG_CAPACITY",
    "DROP",
    "Action",
    "After",
    "Delay",
    "InterceptFn",
    "Intercepted",
    "Interceptor",
    "RequestHooks",
    "RequestLog",
    "RequestRecord",
    "Respond",
    "api_key_of",
    "error_code_of",
    "error_codes",
]
