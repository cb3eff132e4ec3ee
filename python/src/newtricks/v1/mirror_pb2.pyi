from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CheckpointRef(_message.Message):
    __slots__ = ("rule", "job", "step")
    RULE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    rule: str
    job: str
    step: int
    def __init__(self, rule: _Optional[str] = ..., job: _Optional[str] = ..., step: _Optional[int] = ...) -> None: ...

class MirrorStatusRequest(_message.Message):
    __slots__ = ("user", "rule", "job")
    USER_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    JOB_FIELD_NUMBER: _ClassVar[int]
    user: str
    rule: str
    job: str
    def __init__(self, user: _Optional[str] = ..., rule: _Optional[str] = ..., job: _Optional[str] = ...) -> None: ...

class MirrorStatusResponse(_message.Message):
    __slots__ = ("checkpoints", "link")
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    LINK_FIELD_NUMBER: _ClassVar[int]
    checkpoints: _containers.RepeatedCompositeFieldContainer[CheckpointStatus]
    link: LinkStatus
    def __init__(self, checkpoints: _Optional[_Iterable[_Union[CheckpointStatus, _Mapping]]] = ..., link: _Optional[_Union[LinkStatus, _Mapping]] = ...) -> None: ...

class MirrorWaitRequest(_message.Message):
    __slots__ = ("user", "ref", "interval_ms")
    USER_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_MS_FIELD_NUMBER: _ClassVar[int]
    user: str
    ref: CheckpointRef
    interval_ms: int
    def __init__(self, user: _Optional[str] = ..., ref: _Optional[_Union[CheckpointRef, _Mapping]] = ..., interval_ms: _Optional[int] = ...) -> None: ...

class MirrorUrgentRequest(_message.Message):
    __slots__ = ("user", "ref")
    USER_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    user: str
    ref: CheckpointRef
    def __init__(self, user: _Optional[str] = ..., ref: _Optional[_Union[CheckpointRef, _Mapping]] = ...) -> None: ...

class MirrorCompleteRequest(_message.Message):
    __slots__ = ("user", "ref")
    USER_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    user: str
    ref: CheckpointRef
    def __init__(self, user: _Optional[str] = ..., ref: _Optional[_Union[CheckpointRef, _Mapping]] = ...) -> None: ...

class CheckpointStatus(_message.Message):
    __slots__ = ("ref", "state", "owner", "source_path", "dest_path", "files_total", "files_done", "bytes_total", "bytes_done", "rate_bytes_per_sec", "eta_ms", "urgent", "error", "first_seen_ms", "completed_ms", "committed_ms", "lag_ms", "retries", "files_in_flight")
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        STATE_UNSPECIFIED: _ClassVar[CheckpointStatus.State]
        OPEN: _ClassVar[CheckpointStatus.State]
        COPYING: _ClassVar[CheckpointStatus.State]
        COMMITTED: _ClassVar[CheckpointStatus.State]
        FAILED: _ClassVar[CheckpointStatus.State]
        RETIRED: _ClassVar[CheckpointStatus.State]
    STATE_UNSPECIFIED: CheckpointStatus.State
    OPEN: CheckpointStatus.State
    COPYING: CheckpointStatus.State
    COMMITTED: CheckpointStatus.State
    FAILED: CheckpointStatus.State
    RETIRED: CheckpointStatus.State
    REF_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    SOURCE_PATH_FIELD_NUMBER: _ClassVar[int]
    DEST_PATH_FIELD_NUMBER: _ClassVar[int]
    FILES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FILES_DONE_FIELD_NUMBER: _ClassVar[int]
    BYTES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    BYTES_DONE_FIELD_NUMBER: _ClassVar[int]
    RATE_BYTES_PER_SEC_FIELD_NUMBER: _ClassVar[int]
    ETA_MS_FIELD_NUMBER: _ClassVar[int]
    URGENT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEEN_MS_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_MS_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_MS_FIELD_NUMBER: _ClassVar[int]
    LAG_MS_FIELD_NUMBER: _ClassVar[int]
    RETRIES_FIELD_NUMBER: _ClassVar[int]
    FILES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    ref: CheckpointRef
    state: CheckpointStatus.State
    owner: str
    source_path: str
    dest_path: str
    files_total: int
    files_done: int
    bytes_total: int
    bytes_done: int
    rate_bytes_per_sec: float
    eta_ms: int
    urgent: bool
    error: str
    first_seen_ms: int
    completed_ms: int
    committed_ms: int
    lag_ms: int
    retries: int
    files_in_flight: int
    def __init__(self, ref: _Optional[_Union[CheckpointRef, _Mapping]] = ..., state: _Optional[_Union[CheckpointStatus.State, str]] = ..., owner: _Optional[str] = ..., source_path: _Optional[str] = ..., dest_path: _Optional[str] = ..., files_total: _Optional[int] = ..., files_done: _Optional[int] = ..., bytes_total: _Optional[int] = ..., bytes_done: _Optional[int] = ..., rate_bytes_per_sec: _Optional[float] = ..., eta_ms: _Optional[int] = ..., urgent: _Optional[bool] = ..., error: _Optional[str] = ..., first_seen_ms: _Optional[int] = ..., completed_ms: _Optional[int] = ..., committed_ms: _Optional[int] = ..., lag_ms: _Optional[int] = ..., retries: _Optional[int] = ..., files_in_flight: _Optional[int] = ...) -> None: ...

class LinkStatus(_message.Message):
    __slots__ = ("bytes_in_flight", "files_in_flight", "rate_bytes_per_sec", "utilization", "bandwidth_cap", "retries_total", "bytes_total", "files_total")
    BYTES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    FILES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    RATE_BYTES_PER_SEC_FIELD_NUMBER: _ClassVar[int]
    UTILIZATION_FIELD_NUMBER: _ClassVar[int]
    BANDWIDTH_CAP_FIELD_NUMBER: _ClassVar[int]
    RETRIES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    BYTES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FILES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    bytes_in_flight: int
    files_in_flight: int
    rate_bytes_per_sec: float
    utilization: float
    bandwidth_cap: int
    retries_total: int
    bytes_total: int
    files_total: int
    def __init__(self, bytes_in_flight: _Optional[int] = ..., files_in_flight: _Optional[int] = ..., rate_bytes_per_sec: _Optional[float] = ..., utilization: _Optional[float] = ..., bandwidth_cap: _Optional[int] = ..., retries_total: _Optional[int] = ..., bytes_total: _Optional[int] = ..., files_total: _Optional[int] = ...) -> None: ...
