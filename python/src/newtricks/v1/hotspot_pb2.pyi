from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateHintRequest(_message.Message):
    __slots__ = ("paths", "hot_in_ms", "hot_for_ms", "readers", "user", "replication", "dry_run")
    PATHS_FIELD_NUMBER: _ClassVar[int]
    HOT_IN_MS_FIELD_NUMBER: _ClassVar[int]
    HOT_FOR_MS_FIELD_NUMBER: _ClassVar[int]
    READERS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    hot_in_ms: int
    hot_for_ms: int
    readers: int
    user: str
    replication: int
    dry_run: bool
    def __init__(self, paths: _Optional[_Iterable[str]] = ..., hot_in_ms: _Optional[int] = ..., hot_for_ms: _Optional[int] = ..., readers: _Optional[int] = ..., user: _Optional[str] = ..., replication: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class FilePlan(_message.Message):
    __slots__ = ("path", "length", "original_replication", "target_replication", "note")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_REPLICATION_FIELD_NUMBER: _ClassVar[int]
    TARGET_REPLICATION_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    path: str
    length: int
    original_replication: int
    target_replication: int
    note: str
    def __init__(self, path: _Optional[str] = ..., length: _Optional[int] = ..., original_replication: _Optional[int] = ..., target_replication: _Optional[int] = ..., note: _Optional[str] = ...) -> None: ...

class SkippedPath(_message.Message):
    __slots__ = ("path", "code", "reason")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    path: str
    code: str
    reason: str
    def __init__(self, path: _Optional[str] = ..., code: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class PlanInputs(_message.Message):
    __slots__ = ("live_datanodes", "load", "factor_cap", "demand", "avg_xceivers", "pending_reconstruction", "spread", "concentration", "eligible_datanodes", "hot_bytes", "in_flight_bytes")
    LIVE_DATANODES_FIELD_NUMBER: _ClassVar[int]
    LOAD_FIELD_NUMBER: _ClassVar[int]
    FACTOR_CAP_FIELD_NUMBER: _ClassVar[int]
    DEMAND_FIELD_NUMBER: _ClassVar[int]
    AVG_XCEIVERS_FIELD_NUMBER: _ClassVar[int]
    PENDING_RECONSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    SPREAD_FIELD_NUMBER: _ClassVar[int]
    CONCENTRATION_FIELD_NUMBER: _ClassVar[int]
    ELIGIBLE_DATANODES_FIELD_NUMBER: _ClassVar[int]
    HOT_BYTES_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_BYTES_FIELD_NUMBER: _ClassVar[int]
    live_datanodes: int
    load: float
    factor_cap: int
    demand: int
    avg_xceivers: float
    pending_reconstruction: int
    spread: int
    concentration: float
    eligible_datanodes: int
    hot_bytes: int
    in_flight_bytes: int
    def __init__(self, live_datanodes: _Optional[int] = ..., load: _Optional[float] = ..., factor_cap: _Optional[int] = ..., demand: _Optional[int] = ..., avg_xceivers: _Optional[float] = ..., pending_reconstruction: _Optional[int] = ..., spread: _Optional[int] = ..., concentration: _Optional[float] = ..., eligible_datanodes: _Optional[int] = ..., hot_bytes: _Optional[int] = ..., in_flight_bytes: _Optional[int] = ...) -> None: ...

class HintPlan(_message.Message):
    __slots__ = ("hint_id", "files", "bytes_to_copy", "estimated_ready_ms", "hot_from_ms", "deadline_ms", "skipped", "skipped_omitted", "notes", "inputs", "partial")
    HINT_ID_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    BYTES_TO_COPY_FIELD_NUMBER: _ClassVar[int]
    ESTIMATED_READY_MS_FIELD_NUMBER: _ClassVar[int]
    HOT_FROM_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_OMITTED_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    hint_id: str
    files: _containers.RepeatedCompositeFieldContainer[FilePlan]
    bytes_to_copy: int
    estimated_ready_ms: int
    hot_from_ms: int
    deadline_ms: int
    skipped: _containers.RepeatedCompositeFieldContainer[SkippedPath]
    skipped_omitted: int
    notes: _containers.RepeatedScalarFieldContainer[str]
    inputs: PlanInputs
    partial: bool
    def __init__(self, hint_id: _Optional[str] = ..., files: _Optional[_Iterable[_Union[FilePlan, _Mapping]]] = ..., bytes_to_copy: _Optional[int] = ..., estimated_ready_ms: _Optional[int] = ..., hot_from_ms: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., skipped: _Optional[_Iterable[_Union[SkippedPath, _Mapping]]] = ..., skipped_omitted: _Optional[int] = ..., notes: _Optional[_Iterable[str]] = ..., inputs: _Optional[_Union[PlanInputs, _Mapping]] = ..., partial: _Optional[bool] = ...) -> None: ...

class HintStatusRequest(_message.Message):
    __slots__ = ("hint_id", "user")
    HINT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    hint_id: str
    user: str
    def __init__(self, hint_id: _Optional[str] = ..., user: _Optional[str] = ...) -> None: ...

class FileProgress(_message.Message):
    __slots__ = ("path", "original_replication", "target_replication", "replicas_placed", "ready", "length", "file_id", "result", "error")
    PATH_FIELD_NUMBER: _ClassVar[int]
    ORIGINAL_REPLICATION_FIELD_NUMBER: _ClassVar[int]
    TARGET_REPLICATION_FIELD_NUMBER: _ClassVar[int]
    REPLICAS_PLACED_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    path: str
    original_replication: int
    target_replication: int
    replicas_placed: int
    ready: bool
    length: int
    file_id: int
    result: str
    error: str
    def __init__(self, path: _Optional[str] = ..., original_replication: _Optional[int] = ..., target_replication: _Optional[int] = ..., replicas_placed: _Optional[int] = ..., ready: _Optional[bool] = ..., length: _Optional[int] = ..., file_id: _Optional[int] = ..., result: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class HintStatus(_message.Message):
    __slots__ = ("hint_id", "state", "files", "created_ms", "ready_ms", "deadline_ms", "user", "ready", "implicit", "notes")
    HINT_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    READY_MS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    IMPLICIT_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    hint_id: str
    state: str
    files: _containers.RepeatedCompositeFieldContainer[FileProgress]
    created_ms: int
    ready_ms: int
    deadline_ms: int
    user: str
    ready: bool
    implicit: bool
    notes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hint_id: _Optional[str] = ..., state: _Optional[str] = ..., files: _Optional[_Iterable[_Union[FileProgress, _Mapping]]] = ..., created_ms: _Optional[int] = ..., ready_ms: _Optional[int] = ..., deadline_ms: _Optional[int] = ..., user: _Optional[str] = ..., ready: _Optional[bool] = ..., implicit: _Optional[bool] = ..., notes: _Optional[_Iterable[str]] = ...) -> None: ...

class ExtendHintRequest(_message.Message):
    __slots__ = ("hint_id", "user", "extend_by_ms")
    HINT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    EXTEND_BY_MS_FIELD_NUMBER: _ClassVar[int]
    hint_id: str
    user: str
    extend_by_ms: int
    def __init__(self, hint_id: _Optional[str] = ..., user: _Optional[str] = ..., extend_by_ms: _Optional[int] = ...) -> None: ...

class DoneHintRequest(_message.Message):
    __slots__ = ("hint_id", "user", "cancel")
    HINT_ID_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    hint_id: str
    user: str
    cancel: bool
    def __init__(self, hint_id: _Optional[str] = ..., user: _Optional[str] = ..., cancel: _Optional[bool] = ...) -> None: ...

class ListHintsRequest(_message.Message):
    __slots__ = ("user",)
    USER_FIELD_NUMBER: _ClassVar[int]
    user: str
    def __init__(self, user: _Optional[str] = ...) -> None: ...

class ListHintsResponse(_message.Message):
    __slots__ = ("hints", "problems")
    HINTS_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    hints: _containers.RepeatedCompositeFieldContainer[HintStatus]
    problems: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hints: _Optional[_Iterable[_Union[HintStatus, _Mapping]]] = ..., problems: _Optional[_Iterable[str]] = ...) -> None: ...
