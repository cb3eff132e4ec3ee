from newtricks.v1 import host_pb2 as _host_pb2
from newtricks.v1 import schedule_pb2 as _schedule_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class OpenSessionRequest(_message.Message):
    __slots__ = ("user", "schedule", "rank", "start_step", "lookahead", "sources", "members", "determinism_domain", "raw_only")
    USER_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    START_STEP_FIELD_NUMBER: _ClassVar[int]
    LOOKAHEAD_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    DETERMINISM_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    RAW_ONLY_FIELD_NUMBER: _ClassVar[int]
    user: str
    schedule: _schedule_pb2.ScheduleSpec
    rank: int
    start_step: int
    lookahead: int
    sources: _containers.RepeatedCompositeFieldContainer[SessionSource]
    members: _containers.RepeatedCompositeFieldContainer[SessionMember]
    determinism_domain: str
    raw_only: bool
    def __init__(self, user: _Optional[str] = ..., schedule: _Optional[_Union[_schedule_pb2.ScheduleSpec, _Mapping]] = ..., rank: _Optional[int] = ..., start_step: _Optional[int] = ..., lookahead: _Optional[int] = ..., sources: _Optional[_Iterable[_Union[SessionSource, _Mapping]]] = ..., members: _Optional[_Iterable[_Union[SessionMember, _Mapping]]] = ..., determinism_domain: _Optional[str] = ..., raw_only: _Optional[bool] = ...) -> None: ...

class SessionSource(_message.Message):
    __slots__ = ("index_sha256",)
    INDEX_SHA256_FIELD_NUMBER: _ClassVar[int]
    index_sha256: bytes
    def __init__(self, index_sha256: _Optional[bytes] = ...) -> None: ...

class SessionMember(_message.Message):
    __slots__ = ("datanode_uuid",)
    DATANODE_UUID_FIELD_NUMBER: _ClassVar[int]
    datanode_uuid: str
    def __init__(self, datanode_uuid: _Optional[str] = ...) -> None: ...

class OpenSessionResponse(_message.Message):
    __slots__ = ("session_id", "datanode_uuid", "xfer_addr", "determinism_domain", "domain_match", "lookahead", "shedding", "version")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    DATANODE_UUID_FIELD_NUMBER: _ClassVar[int]
    XFER_ADDR_FIELD_NUMBER: _ClassVar[int]
    DETERMINISM_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    DOMAIN_MATCH_FIELD_NUMBER: _ClassVar[int]
    LOOKAHEAD_FIELD_NUMBER: _ClassVar[int]
    SHEDDING_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    datanode_uuid: str
    xfer_addr: str
    determinism_domain: str
    domain_match: bool
    lookahead: int
    shedding: bool
    version: str
    def __init__(self, session_id: _Optional[str] = ..., datanode_uuid: _Optional[str] = ..., xfer_addr: _Optional[str] = ..., determinism_domain: _Optional[str] = ..., domain_match: _Optional[bool] = ..., lookahead: _Optional[int] = ..., shedding: _Optional[bool] = ..., version: _Optional[str] = ...) -> None: ...

class GetStepRequest(_message.Message):
    __slots__ = ("user", "session_id", "step", "slots", "max_wait_ms")
    USER_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    MAX_WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    user: str
    session_id: str
    step: int
    slots: _containers.RepeatedScalarFieldContainer[int]
    max_wait_ms: int
    def __init__(self, user: _Optional[str] = ..., session_id: _Optional[str] = ..., step: _Optional[int] = ..., slots: _Optional[_Iterable[int]] = ..., max_wait_ms: _Optional[int] = ...) -> None: ...

class OffloadSample(_message.Message):
    __slots__ = ("step", "slot", "source", "key", "epoch", "frames", "error_code", "error", "node_micros", "members")
    STEP_FIELD_NUMBER: _ClassVar[int]
    SLOT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    ERROR_CODE_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    NODE_MICROS_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    step: int
    slot: int
    source: int
    key: str
    epoch: int
    frames: bytes
    error_code: int
    error: str
    node_micros: int
    members: _containers.RepeatedCompositeFieldContainer[SampleMember]
    def __init__(self, step: _Optional[int] = ..., slot: _Optional[int] = ..., source: _Optional[int] = ..., key: _Optional[str] = ..., epoch: _Optional[int] = ..., frames: _Optional[bytes] = ..., error_code: _Optional[int] = ..., error: _Optional[str] = ..., node_micros: _Optional[int] = ..., members: _Optional[_Iterable[_Union[SampleMember, _Mapping]]] = ...) -> None: ...

class SampleMember(_message.Message):
    __slots__ = ("name", "data")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    name: str
    data: bytes
    def __init__(self, name: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class OffloadSampleBatch(_message.Message):
    __slots__ = ("samples",)
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    samples: _containers.RepeatedCompositeFieldContainer[OffloadSample]
    def __init__(self, samples: _Optional[_Iterable[_Union[OffloadSample, _Mapping]]] = ...) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("user", "session_id")
    USER_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    user: str
    session_id: str
    def __init__(self, user: _Optional[str] = ..., session_id: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReadRangeRequest(_message.Message):
    __slots__ = ("user", "block", "offset", "length")
    USER_FIELD_NUMBER: _ClassVar[int]
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    user: str
    block: _host_pb2.LocatedBlock
    offset: int
    length: int
    def __init__(self, user: _Optional[str] = ..., block: _Optional[_Union[_host_pb2.LocatedBlock, _Mapping]] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ...) -> None: ...

class ReadRangeResponse(_message.Message):
    __slots__ = ("data",)
    DATA_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    def __init__(self, data: _Optional[bytes] = ...) -> None: ...

class OffloadNodeStatusRequest(_message.Message):
    __slots__ = ("user",)
    USER_FIELD_NUMBER: _ClassVar[int]
    user: str
    def __init__(self, user: _Optional[str] = ...) -> None: ...

class OffloadNodeStatus(_message.Message):
    __slots__ = ("datanode_uuid", "xfer_addr", "determinism_domain", "shedding", "cpu_other", "cpu_own", "threshold_high", "threshold_low", "workers", "cpu_budget", "sessions", "queued_bytes", "queue_max_bytes", "samples_transformed", "samples_raw", "sample_errors", "shed_transitions")
    DATANODE_UUID_FIELD_NUMBER: _ClassVar[int]
    XFER_ADDR_FIELD_NUMBER: _ClassVar[int]
    DETERMINISM_DOMAIN_FIELD_NUMBER: _ClassVar[int]
    SHEDDING_FIELD_NUMBER: _ClassVar[int]
    CPU_OTHER_FIELD_NUMBER: _ClassVar[int]
    CPU_OWN_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_HIGH_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_LOW_FIELD_NUMBER: _ClassVar[int]
    WORKERS_FIELD_NUMBER: _ClassVar[int]
    CPU_BUDGET_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    QUEUED_BYTES_FIELD_NUMBER: _ClassVar[int]
    QUEUE_MAX_BYTES_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_TRANSFORMED_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_RAW_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_ERRORS_FIELD_NUMBER: _ClassVar[int]
    SHED_TRANSITIONS_FIELD_NUMBER: _ClassVar[int]
    datanode_uuid: str
    xfer_addr: str
    determinism_domain: str
    shedding: bool
    cpu_other: float
    cpu_own: float
    threshold_high: float
    threshold_low: float
    workers: int
    cpu_budget: float
    sessions: int
    queued_bytes: int
    queue_max_bytes: int
    samples_transformed: int
    samples_raw: int
    sample_errors: int
    shed_transitions: int
    def __init__(self, datanode_uuid: _Optional[str] = ..., xfer_addr: _Optional[str] = ..., determinism_domain: _Optional[str] = ..., shedding: _Optional[bool] = ..., cpu_other: _Optional[float] = ..., cpu_own: _Optional[float] = ..., threshold_high: _Optional[float] = ..., threshold_low: _Optional[float] = ..., workers: _Optional[int] = ..., cpu_budget: _Optional[float] = ..., sessions: _Optional[int] = ..., queued_bytes: _Optional[int] = ..., queue_max_bytes: _Optional[int] = ..., samples_transformed: _Optional[int] = ..., samples_raw: _Optional[int] = ..., sample_errors: _Optional[int] = ..., shed_transitions: _Optional[int] = ...) -> None: ...

class SetGovernorRequest(_message.Message):
    __slots__ = ("user", "threshold_high", "threshold_low")
    USER_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_HIGH_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_LOW_FIELD_NUMBER: _ClassVar[int]
    user: str
    threshold_high: float
    threshold_low: float
    def __init__(self, user: _Optional[str] = ..., threshold_high: _Optional[float] = ..., threshold_low: _Optional[float] = ...) -> None: ...
