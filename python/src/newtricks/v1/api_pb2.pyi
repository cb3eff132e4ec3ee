from newtricks.v1 import host_pb2 as _host_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LocateRequest(_message.Message):
    __slots__ = ("path", "user")
    PATH_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    path: str
    user: str
    def __init__(self, path: _Optional[str] = ..., user: _Optional[str] = ...) -> None: ...

class LocateBatchRequest(_message.Message):
    __slots__ = ("paths", "user")
    PATHS_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    user: str
    def __init__(self, paths: _Optional[_Iterable[str]] = ..., user: _Optional[str] = ...) -> None: ...

class LocateBatchResponse(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[_host_pb2.LocatedBlocks]
    def __init__(self, files: _Optional[_Iterable[_Union[_host_pb2.LocatedBlocks, _Mapping]]] = ...) -> None: ...

class RegisterDataNodeExtRequest(_message.Message):
    __slots__ = ("user", "datanode_uuid", "api_port", "tls")
    USER_FIELD_NUMBER: _ClassVar[int]
    DATANODE_UUID_FIELD_NUMBER: _ClassVar[int]
    API_PORT_FIELD_NUMBER: _ClassVar[int]
    TLS_FIELD_NUMBER: _ClassVar[int]
    user: str
    datanode_uuid: str
    api_port: int
    tls: bool
    def __init__(self, user: _Optional[str] = ..., datanode_uuid: _Optional[str] = ..., api_port: _Optional[int] = ..., tls: _Optional[bool] = ...) -> None: ...

class RegisterDataNodeExtResponse(_message.Message):
    __slots__ = ("node", "renew_ms", "ttl_ms")
    NODE_FIELD_NUMBER: _ClassVar[int]
    RENEW_MS_FIELD_NUMBER: _ClassVar[int]
    TTL_MS_FIELD_NUMBER: _ClassVar[int]
    node: DataNodeExt
    renew_ms: int
    ttl_ms: int
    def __init__(self, node: _Optional[_Union[DataNodeExt, _Mapping]] = ..., renew_ms: _Optional[int] = ..., ttl_ms: _Optional[int] = ...) -> None: ...

class ListDataNodeExtsRequest(_message.Message):
    __slots__ = ("user",)
    USER_FIELD_NUMBER: _ClassVar[int]
    user: str
    def __init__(self, user: _Optional[str] = ...) -> None: ...

class ListDataNodeExtsResponse(_message.Message):
    __slots__ = ("nodes",)
    NODES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[DataNodeExt]
    def __init__(self, nodes: _Optional[_Iterable[_Union[DataNodeExt, _Mapping]]] = ...) -> None: ...

class DataNodeExt(_message.Message):
    __slots__ = ("datanode_uuid", "api_address", "hostname", "xfer_addr", "tls", "age_ms")
    DATANODE_UUID_FIELD_NUMBER: _ClassVar[int]
    API_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    XFER_ADDR_FIELD_NUMBER: _ClassVar[int]
    TLS_FIELD_NUMBER: _ClassVar[int]
    AGE_MS_FIELD_NUMBER: _ClassVar[int]
    datanode_uuid: str
    api_address: str
    hostname: str
    xfer_addr: str
    tls: bool
    age_ms: int
    def __init__(self, datanode_uuid: _Optional[str] = ..., api_address: _Optional[str] = ..., hostname: _Optional[str] = ..., xfer_addr: _Optional[str] = ..., tls: _Optional[bool] = ..., age_ms: _Optional[int] = ...) -> None: ...

class RecentEventsRequest(_message.Message):
    __slots__ = ("limit", "path_prefix")
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PATH_PREFIX_FIELD_NUMBER: _ClassVar[int]
    limit: int
    path_prefix: str
    def __init__(self, limit: _Optional[int] = ..., path_prefix: _Optional[str] = ...) -> None: ...

class RecordedEvent(_message.Message):
    __slots__ = ("received_ms", "audit", "namespace")
    RECEIVED_MS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_FIELD_NUMBER: _ClassVar[int]
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    received_ms: int
    audit: AuditRecord
    namespace: NamespaceRecord
    def __init__(self, received_ms: _Optional[int] = ..., audit: _Optional[_Union[AuditRecord, _Mapping]] = ..., namespace: _Optional[_Union[NamespaceRecord, _Mapping]] = ...) -> None: ...

class AuditRecord(_message.Message):
    __slots__ = ("cmd", "src", "dst", "user", "client_ip", "allowed", "time_ms")
    CMD_FIELD_NUMBER: _ClassVar[int]
    SRC_FIELD_NUMBER: _ClassVar[int]
    DST_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    CLIENT_IP_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    cmd: str
    src: str
    dst: str
    user: str
    client_ip: str
    allowed: bool
    time_ms: int
    def __init__(self, cmd: _Optional[str] = ..., src: _Optional[str] = ..., dst: _Optional[str] = ..., user: _Optional[str] = ..., client_ip: _Optional[str] = ..., allowed: _Optional[bool] = ..., time_ms: _Optional[int] = ...) -> None: ...

class NamespaceRecord(_message.Message):
    __slots__ = ("txid", "type", "path", "dst_path", "size", "time_ms")
    TXID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    DST_PATH_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    TIME_MS_FIELD_NUMBER: _ClassVar[int]
    txid: int
    type: str
    path: str
    dst_path: str
    size: int
    time_ms: int
    def __init__(self, txid: _Optional[int] = ..., type: _Optional[str] = ..., path: _Optional[str] = ..., dst_path: _Optional[str] = ..., size: _Optional[int] = ..., time_ms: _Optional[int] = ...) -> None: ...

class RecentEventsResponse(_message.Message):
    __slots__ = ("events", "audit_dropped_total", "last_txid")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    AUDIT_DROPPED_TOTAL_FIELD_NUMBER: _ClassVar[int]
    LAST_TXID_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[RecordedEvent]
    audit_dropped_total: int
    last_txid: int
    def __init__(self, events: _Optional[_Iterable[_Union[RecordedEvent, _Mapping]]] = ..., audit_dropped_total: _Optional[int] = ..., last_txid: _Optional[int] = ...) -> None: ...

class ReadReplicaRequest(_message.Message):
    __slots__ = ("block", "user", "include_data")
    BLOCK_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_DATA_FIELD_NUMBER: _ClassVar[int]
    block: _host_pb2.LocatedBlock
    user: str
    include_data: bool
    def __init__(self, block: _Optional[_Union[_host_pb2.LocatedBlock, _Mapping]] = ..., user: _Optional[str] = ..., include_data: _Optional[bool] = ...) -> None: ...

class ReadReplicaResponse(_message.Message):
    __slots__ = ("path", "num_bytes", "data", "datanode_uuid")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NUM_BYTES_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    DATANODE_UUID_FIELD_NUMBER: _ClassVar[int]
    path: str
    num_bytes: int
    data: bytes
    datanode_uuid: str
    def __init__(self, path: _Optional[str] = ..., num_bytes: _Optional[int] = ..., data: _Optional[bytes] = ..., datanode_uuid: _Optional[str] = ...) -> None: ...
