from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DatasetMedia(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DATASET_MEDIA_UNKNOWN: _ClassVar[DatasetMedia]
    DATASET_MEDIA_JPEG: _ClassVar[DatasetMedia]
    DATASET_MEDIA_PNG: _ClassVar[DatasetMedia]
    DATASET_MEDIA_WEBP: _ClassVar[DatasetMedia]
    DATASET_MEDIA_VIDEO: _ClassVar[DatasetMedia]
DATASET_MEDIA_UNKNOWN: DatasetMedia
DATASET_MEDIA_JPEG: DatasetMedia
DATASET_MEDIA_PNG: DatasetMedia
DATASET_MEDIA_WEBP: DatasetMedia
DATASET_MEDIA_VIDEO: DatasetMedia

class DatasetIndex(_message.Message):
    __slots__ = ("version", "root", "files", "samples", "created_ms")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    SAMPLES_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    version: int
    root: str
    files: _containers.RepeatedCompositeFieldContainer[DatasetFile]
    samples: _containers.RepeatedCompositeFieldContainer[DatasetSample]
    created_ms: int
    def __init__(self, version: _Optional[int] = ..., root: _Optional[str] = ..., files: _Optional[_Iterable[_Union[DatasetFile, _Mapping]]] = ..., samples: _Optional[_Iterable[_Union[DatasetSample, _Mapping]]] = ..., created_ms: _Optional[int] = ...) -> None: ...

class DatasetFile(_message.Message):
    __slots__ = ("path", "length", "mtime_ms", "tar")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    MTIME_MS_FIELD_NUMBER: _ClassVar[int]
    TAR_FIELD_NUMBER: _ClassVar[int]
    path: str
    length: int
    mtime_ms: int
    tar: bool
    def __init__(self, path: _Optional[str] = ..., length: _Optional[int] = ..., mtime_ms: _Optional[int] = ..., tar: _Optional[bool] = ...) -> None: ...

class DatasetSample(_message.Message):
    __slots__ = ("key", "file", "offset", "length", "media", "width", "height", "frames", "cost", "members")
    KEY_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    FRAMES_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    MEMBERS_FIELD_NUMBER: _ClassVar[int]
    key: str
    file: int
    offset: int
    length: int
    media: DatasetMedia
    width: int
    height: int
    frames: int
    cost: int
    members: _containers.RepeatedCompositeFieldContainer[DatasetMember]
    def __init__(self, key: _Optional[str] = ..., file: _Optional[int] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ..., media: _Optional[_Union[DatasetMedia, str]] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., frames: _Optional[int] = ..., cost: _Optional[int] = ..., members: _Optional[_Iterable[_Union[DatasetMember, _Mapping]]] = ...) -> None: ...

class DatasetMember(_message.Message):
    __slots__ = ("name", "offset", "length", "media")
    NAME_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    MEDIA_FIELD_NUMBER: _ClassVar[int]
    name: str
    offset: int
    length: int
    media: DatasetMedia
    def __init__(self, name: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ..., media: _Optional[_Union[DatasetMedia, str]] = ...) -> None: ...
