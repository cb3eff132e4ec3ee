from newtricks.v1 import events_pb2 as _events_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ConfigureRequest(_message.Message):
    __slots__ = ("daemon_kind", "daemon_id", "host_address", "conf", "generation")
    class ConfEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    DAEMON_KIND_FIELD_NUMBER: _ClassVar[int]
    DAEMON_ID_FIELD_NUMBER: _ClassVar[int]
    HOST_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    CONF_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    daemon_kind: str
    daemon_id: str
    host_address: str
    conf: _containers.ScalarMap[str, str]
    generation: int
    def __init__(self, daemon_kind: _Optional[str] = ..., daemon_id: _Optional[str] = ..., host_address: _Optional[str] = ..., conf: _Optional[_Mapping[str, str]] = ..., generation: _Optional[int] = ...) -> None: ...

class ConfigureResponse(_message.Message):
    __slots__ = ("api_address", "metrics_address", "events")
    API_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    METRICS_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    api_address: str
    metrics_address: str
    events: _events_pb2.EventFilter
    def __init__(self, api_address: _Optional[str] = ..., metrics_address: _Optional[str] = ..., events: _Optional[_Union[_events_pb2.EventFilter, _Mapping]] = ...) -> None: ...

class StatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StatusResponse(_message.Message):
    __slots__ = ("healthy", "configured", "version", "last_txid", "events_received", "counters", "uptime_ms")
    class CountersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    HEALTHY_FIELD_NUMBER: _ClassVar[int]
    CONFIGURED_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    LAST_TXID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_RECEIVED_FIELD_NUMBER: _ClassVar[int]
    COUNTERS_FIELD_NUMBER: _ClassVar[int]
    UPTIME_MS_FIELD_NUMBER: _ClassVar[int]
    healthy: bool
    configured: bool
    version: str
    last_txid: int
    events_received: int
    counters: _containers.ScalarMap[str, int]
    uptime_ms: int
    def __init__(self, healthy: _Optional[bool] = ..., configured: _Optional[bool] = ..., version: _Optional[str] = ..., last_txid: _Optional[int] = ..., events_received: _Optional[int] = ..., counters: _Optional[_Mapping[str, int]] = ..., uptime_ms: _Optional[int] = ...) -> None: ...
