from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Graph(_message.Message):
    __slots__ = ("version", "name", "seed", "nodes", "outputs", "limits")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    version: int
    name: str
    seed: int
    nodes: _containers.RepeatedCompositeFieldContainer[Node]
    outputs: _containers.RepeatedScalarFieldContainer[str]
    limits: Limits
    def __init__(self, version: _Optional[int] = ..., name: _Optional[str] = ..., seed: _Optional[int] = ..., nodes: _Optional[_Iterable[_Union[Node, _Mapping]]] = ..., outputs: _Optional[_Iterable[str]] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ...) -> None: ...

class Node(_message.Message):
    __slots__ = ("id", "op", "input", "params")
    ID_FIELD_NUMBER: _ClassVar[int]
    OP_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    PARAMS_FIELD_NUMBER: _ClassVar[int]
    id: str
    op: str
    input: str
    params: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., op: _Optional[str] = ..., input: _Optional[str] = ..., params: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("max_pixels", "max_frames", "max_output_bytes", "max_input_bytes")
    MAX_PIXELS_FIELD_NUMBER: _ClassVar[int]
    MAX_FRAMES_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    MAX_INPUT_BYTES_FIELD_NUMBER: _ClassVar[int]
    max_pixels: int
    max_frames: int
    max_output_bytes: int
    max_input_bytes: int
    def __init__(self, max_pixels: _Optional[int] = ..., max_frames: _Optional[int] = ..., max_output_bytes: _Optional[int] = ..., max_input_bytes: _Optional[int] = ...) -> None: ...
