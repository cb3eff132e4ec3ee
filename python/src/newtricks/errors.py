"""Exceptions of the newtricks package.

Every error raised on purpose is a NewtricksError. Errors from a server carry the gRPC status
name in ``code`` and the server's explanation in the message; they also derive from the
built-in exception a Python caller would expect (ValueError for bad input, PermissionError,
FileNotFoundError), so ``except PermissionError`` works as well.
"""

from __future__ import annotations

import grpc


class NewtricksError(Exception):
    """Base class. ``code`` is the gRPC status name (e.g. "PERMISSION_DENIED") or a local
    code such as "CONFIG"."""

    code = "UNKNOWN"

    def __init__(self, message: str, code: str | None = None):
        super().__init__(message)
        if code is not None:
            self.code = code


class ConfigError(NewtricksError, ValueError):
    """Bad arguments or missing configuration, found before anything was sent."""

    code = "CONFIG"


class InvalidArgumentError(NewtricksError, ValueError):
    """The server refused the request as malformed (INVALID_ARGUMENT)."""

    code = "INVALID_ARGUMENT"


class NotFoundError(NewtricksError, FileNotFoundError):
    """NOT_FOUND: no such hint, or none of the paths exists."""

    code = "NOT_FOUND"


class PermissionDeniedError(NewtricksError, PermissionError):
    """PERMISSION_DENIED: the user may not do this (HDFS permissions, allowed prefixes,
    another user's hint)."""

    code = "PERMISSION_DENIED"


class UnauthenticatedError(NewtricksError, PermissionError):
    """UNAUTHENTICATED: the call carries no acceptable credentials."""

    code = "UNAUTHENTICATED"


class ResourceExhaustedError(NewtricksError):
    """RESOURCE_EXHAUSTED: too many active hints, quota, or server admission limits."""

    code = "RESOURCE_EXHAUSTED"


class UnavailableError(NewtricksError):
    """UNAVAILABLE: the server is starting, recovering, in safe mode or unreachable; retry."""

    code = "UNAVAILABLE"


class FailedPreconditionError(NewtricksError):
    """FAILED_PRECONDITION: e.g. the hint has already finished."""

    code = "FAILED_PRECONDITION"


class DeadlineExceededError(NewtricksError, TimeoutError):
    """A call or a wait did not finish in time."""

    code = "DEADLINE_EXCEEDED"


class LibraryError(NewtricksError):
    """libnewtricks cannot be used in this process: not installed, not loadable, or loaded
    before this process was forked (the Go runtime inside does not survive fork)."""

    code = "LIBRARY"


class GraphError(NewtricksError, ValueError):
    """A transform graph spec was rejected when compiled (structure, unknown op, bad
    parameter, type mismatch along an edge)."""

    code = "INVALID_GRAPH"


class SampleError(NewtricksError):
    """One sample could not be transformed (corrupt media, limit exceeded, unsupported
    format). ``key`` names the sample; the message also names the graph node."""

    code = "SAMPLE"

    def __init__(self, message: str, code: str | None = None, key: str = ""):
        super().__init__(message, code)
        self.key = key


class FrameError(NewtricksError, ValueError):
    """Bytes that should hold transform output frames are malformed or corrupt."""

    code = "FRAME"


_BY_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
}


def from_rpc_error(err: grpc.RpcError, what: str) -> NewtricksError:
    """Turns a gRPC error into the matching NewtricksError; ``what`` says which call failed
    (e.g. "hint create on 127.0.0.1:8119")."""
    code = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    details = err.details() if hasattr(err, "details") else str(err)
    cls = _BY_STATUS.get(code, NewtricksError)
    return cls("%s: %s: %s" % (what, code.name, details), code.name)
