from newtricks.xform.v1 import graph_pb2 as _graph_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScheduleSampler(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCHEDULE_SAMPLER_UNSPECIFIED: _ClassVar[ScheduleSampler]
    SCHEDULE_SAMPLER_SEQUENTIAL: _ClassVar[ScheduleSampler]
    SCHEDULE_SAMPLER_SHUFFLE: _ClassVar[ScheduleSampler]
SCHEDULE_SAMPLER_UNSPECIFIED: ScheduleSampler
SCHEDULE_SAMPLER_SEQUENTIAL: ScheduleSampler
SCHEDULE_SAMPLER_SHUFFLE: ScheduleSampler

class ScheduleSpec(_message.Message):
    __slots__ = ("version", "name", "seed", "global_batch", "world_size", "sampler", "sources", "phases", "explicit_steps", "max_steps")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    GLOBAL_BATCH_FIELD_NUMBER: _ClassVar[int]
    WORLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    SAMPLER_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    PHASES_FIELD_NUMBER: _ClassVar[int]
    EXPLICIT_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    version: int
    name: str
    seed: int
    global_batch: int
    world_size: int
    sampler: ScheduleSampler
    sources: _containers.RepeatedCompositeFieldContainer[ScheduleSource]
    phases: _containers.RepeatedCompositeFieldContainer[WeightPhase]
    explicit_steps: _containers.RepeatedCompositeFieldContainer[ExplicitStep]
    max_steps: int
    def __init__(self, version: _Optional[int] = ..., name: _Optional[str] = ..., seed: _Optional[int] = ..., global_batch: _Optional[int] = ..., world_size: _Optional[int] = ..., sampler: _Optional[_Union[ScheduleSampler, str]] = ..., sources: _Optional[_Iterable[_Union[ScheduleSource, _Mapping]]] = ..., phases: _Optional[_Iterable[_Union[WeightPhase, _Mapping]]] = ..., explicit_steps: _Optional[_Iterable[_Union[ExplicitStep, _Mapping]]] = ..., max_steps: _Optional[int] = ...) -> None: ...

class ScheduleSource(_message.Message):
    __slots__ = ("name", "dataset", "weight", "graph")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATASET_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    GRAPH_FIELD_NUMBER: _ClassVar[int]
    name: str
    dataset: str
    weight: float
    graph: _graph_pb2.Graph
    def __init__(self, name: _Optional[str] = ..., dataset: _Optional[str] = ..., weight: _Optional[float] = ..., graph: _Optional[_Union[_graph_pb2.Graph, _Mapping]] = ...) -> None: ...

class WeightPhase(_message.Message):
    __slots__ = ("from_step", "weights")
    FROM_STEP_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    from_step: int
    weights: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, from_step: _Optional[int] = ..., weights: _Optional[_Iterable[float]] = ...) -> None: ...

class ExplicitStep(_message.Message):
    __slots__ = ("samples",)
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    samples: _containers.RepeatedCompositeFieldContainer[ExplicitSample]
    def __init__(self, samples: _Optional[_Iterable[_Union[ExplicitSample, _Mapping]]] = ...) -> None: ...

class ExplicitSample(_message.Message):
    __slots__ = ("source", "key", "epoch")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    EPOCH_FIELD_NUMBER: _ClassVar[int]
    source: int
    key: str
    epoch: int
    def __init__(self, source: _Optional[int] = ..., key: _Optional[str] = ..., epoch: _Optional[int] = ...) -> None: ...
