"""newtricks for trainers.

- ``newtricks.hint(paths, readers=..., hot_in=..., window=...)``: tell namenode-ext which
  files many ranks are about to read; their replication factor is raised in time and restored
  after (a context manager: done on exit).
- ``newtricks.transforms.Graph(spec)``: run an xformgraph transform graph on a sample in this
  process, with the same Go code the DataNodes run (libnewtricks through ctypes), so the
  bytes are identical to a DataNode's. Loaded lazily, once per process, never across fork.
- ``newtricks.Reader(schedule, rank=..., namenode=..., namenode_ext=..., datanodes=...)``: one
  rank's steps of a training schedule, transformed on the DataNodes that hold the samples
  (offload), locally when they are busy or unreachable; ``stats()`` says which.
- ``newtricks.mirror.wait(job, step)`` / ``urgent(job, step)``: wait until a checkpoint is
  committed on the evaluation cluster, or move it ahead of the others.
- ``newtricks.frames``: the frame format of transform outputs, read into numpy arrays
  without copying.

The generated protobuf/gRPC modules of the wire contracts are ``newtricks.v1`` and
``newtricks.xform.v1``.
"""

from .errors import (  # noqa: F401
    ConfigError,
    DeadlineExceededError,
    FailedPreconditionError,
    FrameError,
    GraphError,
    InvalidArgumentError,
    LibraryError,
    NewtricksError,
    NotFoundError,
    PermissionDeniedError,
    ResourceExhaustedError,
    SampleError,
    UnauthenticatedError,
    UnavailableError,
)
from . import auth, mirror  # noqa: F401
from .auth import Auth  # noqa: F401
from .hints import Hint, hint  # noqa: F401
from .reader import Reader, Sample, Step  # noqa: F401

__version__ = "0.1.0"

__all__ = [
    "hint", "Hint", "Reader", "Step", "Sample", "mirror", "auth", "Auth",
    "NewtricksError", "ConfigError", "InvalidArgumentError", "NotFoundError", "PermissionDeniedError",
    "UnauthenticatedError", "ResourceExhaustedError", "UnavailableError", "FailedPreconditionError",
    "DeadlineExceededError", "LibraryError", "GraphError", "SampleError", "FrameError",
]
