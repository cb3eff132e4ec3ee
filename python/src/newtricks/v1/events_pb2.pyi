from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NameNodeState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NAMENODE_STATE_UNSPECIFIED: _ClassVar[NameNodeState]
    NAMENODE_STATE_ACTIVE: _ClassVar[NameNodeState]
    NAMENODE_STATE_STANDBY: _ClassVar[NameNodeState]
    NAMENODE_STATE_OTHER: _ClassVar[NameNodeState]
NAMENODE_STATE_UNSPECIFIED: NameNodeState
NAMENODE_STATE_ACTIVE: NameNodeState
NAMENODE_STATE_STANDBY: NameNodeState
NAMENODE_STATE_OTHER: NameNodeState

class EventFilter(_message.Message):
    __slots__ = ("audit_commands", "namespace_types", "namespace_path_prefixes", "audit_min_repeats", "audit_repeat_window_ms")
    AUDIT_COMMANDS_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_TYPES_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_PATH_PREFIXES_FIELD_NUMBER: _ClassVar[int]
    AUDIT_MIN_REPEATS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_REPEAT_WINDOW_MS_FIELD_NUMBER: _ClassVar[int]
    audit_commands: _containers.RepeatedScalarFieldContainer[str]
    namespace_types: _containers.RepeatedScalarFieldContainer[NamespaceEvent.Type]
    namespace_path_prefixes: _containers.RepeatedScalarFieldContainer[str]
    audit_min_repeats: int
    audit_repeat_window_ms: int
    def __init__(self, audit_commands: _Optional[_Iterable[str]] = ..., namespace_types: _Optional[_Iterable[_Union[NamespaceEvent.Type, str]]] = ..., namespace_path_prefixes: _Optional[_Iterable[str]] = ..., audit_min_repeats: _Optional[int] = ..., audit_repeat_window_ms: _Optional[int] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events", "audit_dropped_total", "seq", "resume_txid", "namespace_gaps_total", "namenode_state", "active_term", "safe_txid", "ha")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_DROPPED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    RESUME_TXID_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_GAPS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    NAMENODE_STATE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TERM_FIELD_NUMBER: _ClassVar[int]
    SAFE_TXID_FIELD_NUMBER: _ClassVar[int]
    HA_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    audit_dropped_total: int
    seq: int
    resume_txid: int
    namespace_gaps_total: int
    namenode_state: NameNodeState
    active_term: int
    safe_txid: int
    ha: bool
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., audit_dropped_total: _Optional[int] = ..., seq: _Optional[int] = ..., resume_txid: _Optional[int] = ..., namespace_gaps_total: _Optional[int] = ..., namenode_state: _Optional[_Union[NameNodeState, str]] = ..., active_term: _Optional[int] = ..., safe_txid: _Optional[int] = ..., ha: _Optional[bool] = ...) -> None: ...

class DeliverAck(_message.Message):
    __slots__ = ("last_txid", "durable_txid", "filter", "resume_term", "resume_after_txid")
    LAST_TXID_FIELD_NUMBER: _ClassVar[int]
    DURABLE_TXID_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    RESUME_TERM_FIELD_NUMBER: _ClassVar[int]
    RESUME_AFTER_TXID_FIELD_NUMBER: _ClassVar[int]
    last_txid: int
    durable_txid: int
    filter: EventFilter
    resume_term: int
    resume_after_txid: int
    def __init__(self, last_txid: _Optional[int] = ..., durable_txid: _Optional[int] = ..., filter: _Optional[_Union[EventFilter, _Mapping]] = ..., resume_term: _Optional[int] = ..., resume_after_txid: _Optional[int] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("audit", "namespace")
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    audit: AuditEvent
    namespace: NamespaceEvent
    def __init__(self, audit: _Optional[_Union[AuditEvent, _Mapping]] = ..., namespace: _Optional[_Union[NamespaceEvent, _Mapping]] = ...) -> None: ...

class AuditEvent(_message.Message):
    __slots__ = ("cmd", "src", "dst", "user", "client_ip", "allowed", "time_ms", "caller_context")
    CMD_FIELD_NUMBER: _ClassVar[int]
    SRC_FIELD_NUMBER: _ClassVar[int]
    DST_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    CLIENT_IP_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    CALLER_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    cmd: str
    src: str
    dst: str
    user: str
    client_ip: str
    allowed: bool
    time_ms: int
    caller_context: str
    def __init__(self, cmd: _Optional[str] = ..., src: _Optional[str] = ..., dst: _Optional[str] = ..., user: _Optional[str] = ..., client_ip: _Optional[str] = ..., allowed: _Optional[bool] = ..., time_ms: _Optional[int] = ..., caller_context: _Optional[str] = ...) -> None: ...

class NamespaceEvent(_message.Message):
    __slots__ = ("txid", "type", "path", "dst_path", "size", "time_ms", "is_dir", "replication", "owner")
    class Type(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        TYPE_UNSPECIFIED: _ClassVar[NamespaceEvent.Type]
        CREATE: _ClassVar[NamespaceEvent.Type]
        CLOSE: _ClassVar[NamespaceEvent.Type]
        APPEND: _ClassVar[NamespaceEvent.Type]
        RENAME: _ClassVar[NamespaceEvent.Type]
        METADATA: _ClassVar[NamespaceEvent.Type]
        UNLINK: _ClassVar[NamespaceEvent.Type]
        TRUNCATE: _ClassVar[NamespaceEvent.Type]
    TYPE_UNSPECIFIED: NamespaceEvent.Type
    CREATE: NamespaceEvent.Type
    CLOSE: NamespaceEvent.Type
    APPEND: NamespaceEvent.Type
    RENAME: NamespaceEvent.Type
    METADATA: NamespaceEvent.Type
    UNLINK: NamespaceEvent.Type
    TRUNCATE: NamespaceEvent.Type
    TXID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DST_PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    txid: int
    type: NamespaceEvent.Type
    path: str
    dst_path: str
    size: int
    time_ms: int
    is_dir: bool
    replication: int
    owner: str
    def __init__(self, txid: _Optional[int] = ..., type: _Optional[_Union[NamespaceEvent.Type, str]] = ..., path: _Optional[str] = ..., dst_path: _Optional[str] = ..., size: _Optional[int] = ..., time_ms: _Optional[int] = ..., is_dir: _Optional[bool] = ..., replication: _Optional[int] = ..., owner: _Optional[str] = ...) -> None: ...
