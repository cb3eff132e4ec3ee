from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SetReplicationRequest(_message.Message):
    __slots__ = ("path", "replication", "user", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    replication: int
    user: str
    service: bool
    def __init__(self, path: _Optional[str] = ..., replication: _Optional[int] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class SetReplicationResponse(_message.Message):
    __slots__ = ("changed",)
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    changed: bool
    def __init__(self, changed: _Optional[bool] = ...) -> None: ...

class GetFileStatusRequest(_message.Message):
    __slots__ = ("path", "user", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    user: str
    service: bool
    def __init__(self, path: _Optional[str] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class FileStatus(_message.Message):
    __slots__ = ("path", "length", "is_dir", "replication", "block_size", "mtime_ms", "owner", "group", "permission", "file_id", "children")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    IS_DIR_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    MTIME_MS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    GROUP_FIELD_NUMBER: _ClassVar[int]
    PERMISSION_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    CHILDREN_FIELD_NUMBER: _ClassVar[int]
    path: str
    length: int
    is_dir: bool
    replication: int
    block_size: int
    mtime_ms: int
    owner: str
    group: str
    permission: int
    file_id: int
    children: int
    def __init__(self, path: _Optional[str] = ..., length: _Optional[int] = ..., is_dir: _Optional[bool] = ..., replication: _Optional[int] = ..., block_size: _Optional[int] = ..., mtime_ms: _Optional[int] = ..., owner: _Optional[str] = ..., group: _Optional[str] = ..., permission: _Optional[int] = ..., file_id: _Optional[int] = ..., children: _Optional[int] = ...) -> None: ...

class ListStatusRequest(_message.Message):
    __slots__ = ("path", "user", "service", "start_after", "limit")
    PATH_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    START_AFTER_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    path: str
    user: str
    service: bool
    start_after: bytes
    limit: int
    def __init__(self, path: _Optional[str] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ..., start_after: _Optional[bytes] = ..., limit: _Optional[int] = ...) -> None: ...

class ListStatusResponse(_message.Message):
    __slots__ = ("entries", "has_more", "last_name", "remaining")
    ENTRIES_FIELD_NUMBER: _ClassVar[int]
    HAS_MORE_FIELD_NUMBER: _ClassVar[int]
    LAST_NAME_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    entries: _containers.RepeatedCompositeFieldContainer[FileStatus]
    has_more: bool
    last_name: bytes
    remaining: int
    def __init__(self, entries: _Optional[_Iterable[_Union[FileStatus, _Mapping]]] = ..., has_more: _Optional[bool] = ..., last_name: _Optional[bytes] = ..., remaining: _Optional[int] = ...) -> None: ...

class GetDatanodeReportRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DatanodeLoad(_message.Message):
    __slots__ = ("uuid", "hostname", "ip", "xfer_addr", "xceivers", "capacity", "remaining", "dfs_used", "admin_state", "last_update_ms", "blocks_pending_replication", "info_addr")
    UUID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    IP_FIELD_NUMBER: _ClassVar[int]
    XFER_ADDR_FIELD_NUMBER: _ClassVar[int]
    XCEIVERS_FIELD_NUMBER: _ClassVar[int]
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    REMAINING_FIELD_NUMBER: _ClassVar[int]
    DFS_USED_FIELD_NUMBER: _ClassVar[int]
    ADMIN_STATE_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_MS_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_PENDING_REPLICATION_FIELD_NUMBER: _ClassVar[int]
    INFO_ADDR_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    hostname: str
    ip: str
    xfer_addr: str
    xceivers: int
    capacity: int
    remaining: int
    dfs_used: int
    admin_state: str
    last_update_ms: int
    blocks_pending_replication: int
    info_addr: str
    def __init__(self, uuid: _Optional[str] = ..., hostname: _Optional[str] = ..., ip: _Optional[str] = ..., xfer_addr: _Optional[str] = ..., xceivers: _Optional[int] = ..., capacity: _Optional[int] = ..., remaining: _Optional[int] = ..., dfs_used: _Optional[int] = ..., admin_state: _Optional[str] = ..., last_update_ms: _Optional[int] = ..., blocks_pending_replication: _Optional[int] = ..., info_addr: _Optional[str] = ...) -> None: ...

class DatanodeReport(_message.Message):
    __slots__ = ("live", "dead", "total_load", "pending_reconstruction", "under_replicated", "safe_mode")
    LIVE_FIELD_NUMBER: _ClassVar[int]
    DEAD_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LOAD_FIELD_NUMBER: _ClassVar[int]
    PENDING_RECONSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    UNDER_REPLICATED_FIELD_NUMBER: _ClassVar[int]
    SAFE_MODE_FIELD_NUMBER: _ClassVar[int]
    live: _containers.RepeatedCompositeFieldContainer[DatanodeLoad]
    dead: int
    total_load: int
    pending_reconstruction: int
    under_replicated: int
    safe_mode: bool
    def __init__(self, live: _Optional[_Iterable[_Union[DatanodeLoad, _Mapping]]] = ..., dead: _Optional[int] = ..., total_load: _Optional[int] = ..., pending_reconstruction: _Optional[int] = ..., under_replicated: _Optional[int] = ..., safe_mode: _Optional[bool] = ...) -> None: ...

class GetBlockLocationsRequest(_message.Message):
    __slots__ = ("path", "user", "offset", "length", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    user: str
    offset: int
    length: int
    service: bool
    def __init__(self, path: _Optional[str] = ..., user: _Optional[str] = ..., offset: _Optional[int] = ..., length: _Optional[int] = ..., service: _Optional[bool] = ...) -> None: ...

class Token(_message.Message):
    __slots__ = ("identifier", "password", "kind", "service")
    IDENTIFIER_FIELD_NUMBER: _ClassVar[int]
    PASSWORD_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    identifier: bytes
    password: bytes
    kind: str
    service: str
    def __init__(self, identifier: _Optional[bytes] = ..., password: _Optional[bytes] = ..., kind: _Optional[str] = ..., service: _Optional[str] = ...) -> None: ...

class DatanodeRef(_message.Message):
    __slots__ = ("uuid", "hostname", "xfer_addr", "ipc_addr")
    UUID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    XFER_ADDR_FIELD_NUMBER: _ClassVar[int]
    IPC_ADDR_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    hostname: str
    xfer_addr: str
    ipc_addr: str
    def __init__(self, uuid: _Optional[str] = ..., hostname: _Optional[str] = ..., xfer_addr: _Optional[str] = ..., ipc_addr: _Optional[str] = ...) -> None: ...

class LocatedBlock(_message.Message):
    __slots__ = ("block_pool_id", "block_id", "gen_stamp", "num_bytes", "offset", "locations", "token", "corrupt")
    BLOCK_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    GEN_STAMP_FIELD_NUMBER: _ClassVar[int]
    NUM_BYTES_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CORRUPT_FIELD_NUMBER: _ClassVar[int]
    block_pool_id: str
    block_id: int
    gen_stamp: int
    num_bytes: int
    offset: int
    locations: _containers.RepeatedCompositeFieldContainer[DatanodeRef]
    token: Token
    corrupt: bool
    def __init__(self, block_pool_id: _Optional[str] = ..., block_id: _Optional[int] = ..., gen_stamp: _Optional[int] = ..., num_bytes: _Optional[int] = ..., offset: _Optional[int] = ..., locations: _Optional[_Iterable[_Union[DatanodeRef, _Mapping]]] = ..., token: _Optional[_Union[Token, _Mapping]] = ..., corrupt: _Optional[bool] = ...) -> None: ...

class LocatedBlocks(_message.Message):
    __slots__ = ("file_length", "blocks", "under_construction")
    FILE_LENGTH_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    UNDER_CONSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    file_length: int
    blocks: _containers.RepeatedCompositeFieldContainer[LocatedBlock]
    under_construction: bool
    def __init__(self, file_length: _Optional[int] = ..., blocks: _Optional[_Iterable[_Union[LocatedBlock, _Mapping]]] = ..., under_construction: _Optional[bool] = ...) -> None: ...

class CheckAccessRequest(_message.Message):
    __slots__ = ("path", "user", "action", "paths", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PATHS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    user: str
    action: str
    paths: _containers.RepeatedScalarFieldContainer[str]
    service: bool
    def __init__(self, path: _Optional[str] = ..., user: _Optional[str] = ..., action: _Optional[str] = ..., paths: _Optional[_Iterable[str]] = ..., service: _Optional[bool] = ...) -> None: ...

class AccessResult(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...

class CheckAccessResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[AccessResult]
    def __init__(self, results: _Optional[_Iterable[_Union[AccessResult, _Mapping]]] = ...) -> None: ...

class GetContentSummaryRequest(_message.Message):
    __slots__ = ("path", "user", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    user: str
    service: bool
    def __init__(self, path: _Optional[str] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class ContentSummary(_message.Message):
    __slots__ = ("length", "file_count", "directory_count", "quota", "space_consumed", "space_quota")
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    FILE_COUNT_FIELD_NUMBER: _ClassVar[int]
    DIRECTORY_COUNT_FIELD_NUMBER: _ClassVar[int]
    QUOTA_FIELD_NUMBER: _ClassVar[int]
    SPACE_CONSUMED_FIELD_NUMBER: _ClassVar[int]
    SPACE_QUOTA_FIELD_NUMBER: _ClassVar[int]
    length: int
    file_count: int
    directory_count: int
    quota: int
    space_consumed: int
    space_quota: int
    def __init__(self, length: _Optional[int] = ..., file_count: _Optional[int] = ..., directory_count: _Optional[int] = ..., quota: _Optional[int] = ..., space_consumed: _Optional[int] = ..., space_quota: _Optional[int] = ...) -> None: ...

class GetXAttrsRequest(_message.Message):
    __slots__ = ("path", "names", "user", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    names: _containers.RepeatedScalarFieldContainer[str]
    user: str
    service: bool
    def __init__(self, path: _Optional[str] = ..., names: _Optional[_Iterable[str]] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class GetXAttrsResponse(_message.Message):
    __slots__ = ("xattrs",)
    class XattrsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: bytes
        def __init__(self, key: _Optional[str] = ..., value: _Optional[bytes] = ...) -> None: ...
    XATTRS_FIELD_NUMBER: _ClassVar[int]
    xattrs: _containers.ScalarMap[str, bytes]
    def __init__(self, xattrs: _Optional[_Mapping[str, bytes]] = ...) -> None: ...

class SetXAttrRequest(_message.Message):
    __slots__ = ("path", "name", "value", "user", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    value: bytes
    user: str
    service: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., value: _Optional[bytes] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class SetXAttrResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RemoveXAttrRequest(_message.Message):
    __slots__ = ("path", "name", "user", "service")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    user: str
    service: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class RemoveXAttrResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReconfigureRequest(_message.Message):
    __slots__ = ("key", "value", "service")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: str
    service: bool
    def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class ReconfigureResponse(_message.Message):
    __slots__ = ("old_value",)
    OLD_VALUE_FIELD_NUMBER: _ClassVar[int]
    old_value: str
    def __init__(self, old_value: _Optional[str] = ...) -> None: ...

class GetNamesystemStateRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class NamesystemState(_message.Message):
    __slots__ = ("active", "safe_mode", "live_datanodes", "namenode_address", "block_pool_id", "permissions_enabled", "block_token_enabled", "superuser")
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    SAFE_MODE_FIELD_NUMBER: _ClassVar[int]
    LIVE_DATANODES_FIELD_NUMBER: _ClassVar[int]
    NAMENODE_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    BLOCK_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    PERMISSIONS_ENABLED_FIELD_NUMBER: _ClassVar[int]
    BLOCK_TOKEN_ENABLED_FIELD_NUMBER: _ClassVar[int]
    SUPERUSER_FIELD_NUMBER: _ClassVar[int]
    active: bool
    safe_mode: bool
    live_datanodes: int
    namenode_address: str
    block_pool_id: str
    permissions_enabled: bool
    block_token_enabled: bool
    superuser: str
    def __init__(self, active: _Optional[bool] = ..., safe_mode: _Optional[bool] = ..., live_datanodes: _Optional[int] = ..., namenode_address: _Optional[str] = ..., block_pool_id: _Optional[str] = ..., permissions_enabled: _Optional[bool] = ..., block_token_enabled: _Optional[bool] = ..., superuser: _Optional[str] = ...) -> None: ...

class IdentityRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DatanodeIdentity(_message.Message):
    __slots__ = ("uuid", "hostname", "xfer_addr", "ipc_port", "info_port", "block_pool_ids", "block_token_enabled", "ready")
    UUID_FIELD_NUMBER: _ClassVar[int]
    HOSTNAME_FIELD_NUMBER: _ClassVar[int]
    XFER_ADDR_FIELD_NUMBER: _ClassVar[int]
    IPC_PORT_FIELD_NUMBER: _ClassVar[int]
    INFO_PORT_FIELD_NUMBER: _ClassVar[int]
    BLOCK_POOL_IDS_FIELD_NUMBER: _ClassVar[int]
    BLOCK_TOKEN_ENABLED_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    uuid: str
    hostname: str
    xfer_addr: str
    ipc_port: int
    info_port: int
    block_pool_ids: _containers.RepeatedScalarFieldContainer[str]
    block_token_enabled: bool
    ready: bool
    def __init__(self, uuid: _Optional[str] = ..., hostname: _Optional[str] = ..., xfer_addr: _Optional[str] = ..., ipc_port: _Optional[int] = ..., info_port: _Optional[int] = ..., block_pool_ids: _Optional[_Iterable[str]] = ..., block_token_enabled: _Optional[bool] = ..., ready: _Optional[bool] = ...) -> None: ...

class ResolveReplicaRequest(_message.Message):
    __slots__ = ("block_pool_id", "block_id", "gen_stamp", "user", "token")
    BLOCK_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    GEN_STAMP_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    block_pool_id: str
    block_id: int
    gen_stamp: int
    user: str
    token: Token
    def __init__(self, block_pool_id: _Optional[str] = ..., block_id: _Optional[int] = ..., gen_stamp: _Optional[int] = ..., user: _Optional[str] = ..., token: _Optional[_Union[Token, _Mapping]] = ...) -> None: ...

class Replica(_message.Message):
    __slots__ = ("block_path", "meta_path", "num_bytes", "gen_stamp", "finalized")
    BLOCK_PATH_FIELD_NUMBER: _ClassVar[int]
    META_PATH_FIELD_NUMBER: _ClassVar[int]
    NUM_BYTES_FIELD_NUMBER: _ClassVar[int]
    GEN_STAMP_FIELD_NUMBER: _ClassVar[int]
    FINALIZED_FIELD_NUMBER: _ClassVar[int]
    block_path: str
    meta_path: str
    num_bytes: int
    gen_stamp: int
    finalized: bool
    def __init__(self, block_path: _Optional[str] = ..., meta_path: _Optional[str] = ..., num_bytes: _Optional[int] = ..., gen_stamp: _Optional[int] = ..., finalized: _Optional[bool] = ...) -> None: ...

class ReportBadBlockRequest(_message.Message):
    __slots__ = ("block_pool_id", "block_id", "gen_stamp", "reason")
    BLOCK_POOL_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    GEN_STAMP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    block_pool_id: str
    block_id: int
    gen_stamp: int
    reason: str
    def __init__(self, block_pool_id: _Optional[str] = ..., block_id: _Optional[int] = ..., gen_stamp: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class ReportBadBlockResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MapPrincipalRequest(_message.Message):
    __slots__ = ("principal",)
    PRINCIPAL_FIELD_NUMBER: _ClassVar[int]
    principal: str
    def __init__(self, principal: _Optional[str] = ...) -> None: ...

class MapPrincipalResponse(_message.Message):
    __slots__ = ("user",)
    USER_FIELD_NUMBER: _ClassVar[int]
    user: str
    def __init__(self, user: _Optional[str] = ...) -> None: ...

class AuthorizeProxyRequest(_message.Message):
    __slots__ = ("real_user", "user", "remote_addr")
    REAL_USER_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    REMOTE_ADDR_FIELD_NUMBER: _ClassVar[int]
    real_user: str
    user: str
    remote_addr: str
    def __init__(self, real_user: _Optional[str] = ..., user: _Optional[str] = ..., remote_addr: _Optional[str] = ...) -> None: ...

class AuthorizeProxyResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class IsAdminRequest(_message.Message):
    __slots__ = ("user",)
    USER_FIELD_NUMBER: _ClassVar[int]
    user: str
    def __init__(self, user: _Optional[str] = ...) -> None: ...

class IsAdminResponse(_message.Message):
    __slots__ = ("admin", "superuser", "supergroup")
    ADMIN_FIELD_NUMBER: _ClassVar[int]
    SUPERUSER_FIELD_NUMBER: _ClassVar[int]
    SUPERGROUP_FIELD_NUMBER: _ClassVar[int]
    admin: bool
    superuser: str
    supergroup: str
    def __init__(self, admin: _Optional[bool] = ..., superuser: _Optional[str] = ..., supergroup: _Optional[str] = ...) -> None: ...

class VerifyDelegationTokenRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: Token
    def __init__(self, token: _Optional[_Union[Token, _Mapping]] = ...) -> None: ...

class VerifyDelegationTokenResponse(_message.Message):
    __slots__ = ("user", "real_user", "owner", "max_date_ms")
    USER_FIELD_NUMBER: _ClassVar[int]
    REAL_USER_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    MAX_DATE_MS_FIELD_NUMBER: _ClassVar[int]
    user: str
    real_user: str
    owner: str
    max_date_ms: int
    def __init__(self, user: _Optional[str] = ..., real_user: _Optional[str] = ..., owner: _Optional[str] = ..., max_date_ms: _Optional[int] = ...) -> None: ...

class GetQuotaUsageRequest(_message.Message):
    __slots__ = ("paths", "service")
    PATHS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    service: bool
    def __init__(self, paths: _Optional[_Iterable[str]] = ..., service: _Optional[bool] = ...) -> None: ...

class QuotaDir(_message.Message):
    __slots__ = ("path", "space_quota", "space_consumed", "ns_quota", "ns_consumed")
    PATH_FIELD_NUMBER: _ClassVar[int]
    SPACE_QUOTA_FIELD_NUMBER: _ClassVar[int]
    SPACE_CONSUMED_FIELD_NUMBER: _ClassVar[int]
    NS_QUOTA_FIELD_NUMBER: _ClassVar[int]
    NS_CONSUMED_FIELD_NUMBER: _ClassVar[int]
    path: str
    space_quota: int
    space_consumed: int
    ns_quota: int
    ns_consumed: int
    def __init__(self, path: _Optional[str] = ..., space_quota: _Optional[int] = ..., space_consumed: _Optional[int] = ..., ns_quota: _Optional[int] = ..., ns_consumed: _Optional[int] = ...) -> None: ...

class GetQuotaUsageResponse(_message.Message):
    __slots__ = ("dirs", "missing")
    DIRS_FIELD_NUMBER: _ClassVar[int]
    MISSING_FIELD_NUMBER: _ClassVar[int]
    dirs: _containers.RepeatedCompositeFieldContainer[QuotaDir]
    missing: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, dirs: _Optional[_Iterable[_Union[QuotaDir, _Mapping]]] = ..., missing: _Optional[_Iterable[str]] = ...) -> None: ...

class InspectFilesRequest(_message.Message):
    __slots__ = ("file_ids", "xattr", "want", "from_block", "holders", "service")
    FILE_IDS_FIELD_NUMBER: _ClassVar[int]
    XATTR_FIELD_NUMBER: _ClassVar[int]
    WANT_FIELD_NUMBER: _ClassVar[int]
    FROM_BLOCK_FIELD_NUMBER: _ClassVar[int]
    HOLDERS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    file_ids: _containers.RepeatedScalarFieldContainer[int]
    xattr: str
    want: _containers.RepeatedScalarFieldContainer[int]
    from_block: _containers.RepeatedScalarFieldContainer[int]
    holders: bool
    service: bool
    def __init__(self, file_ids: _Optional[_Iterable[int]] = ..., xattr: _Optional[str] = ..., want: _Optional[_Iterable[int]] = ..., from_block: _Optional[_Iterable[int]] = ..., holders: _Optional[bool] = ..., service: _Optional[bool] = ...) -> None: ...

class FileInspection(_message.Message):
    __slots__ = ("file_id", "exists", "path", "replication", "length", "blocks", "min_live_replicas", "has_xattr", "xattr", "block_size", "first_short_block", "short_blocks", "holders")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_FIELD_NUMBER: _ClassVar[int]
    MIN_LIVE_REPLICAS_FIELD_NUMBER: _ClassVar[int]
    HAS_XATTR_FIELD_NUMBER: _ClassVar[int]
    XATTR_FIELD_NUMBER: _ClassVar[int]
    BLOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    FIRST_SHORT_BLOCK_FIELD_NUMBER: _ClassVar[int]
    SHORT_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    HOLDERS_FIELD_NUMBER: _ClassVar[int]
    file_id: int
    exists: bool
    path: str
    replication: int
    length: int
    blocks: int
    min_live_replicas: int
    has_xattr: bool
    xattr: bytes
    block_size: int
    first_short_block: int
    short_blocks: int
    holders: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, file_id: _Optional[int] = ..., exists: _Optional[bool] = ..., path: _Optional[str] = ..., replication: _Optional[int] = ..., length: _Optional[int] = ..., blocks: _Optional[int] = ..., min_live_replicas: _Optional[int] = ..., has_xattr: _Optional[bool] = ..., xattr: _Optional[bytes] = ..., block_size: _Optional[int] = ..., first_short_block: _Optional[int] = ..., short_blocks: _Optional[int] = ..., holders: _Optional[_Iterable[str]] = ...) -> None: ...

class InspectFilesResponse(_message.Message):
    __slots__ = ("files", "live_datanodes")
    FILES_FIELD_NUMBER: _ClassVar[int]
    LIVE_DATANODES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[FileInspection]
    live_datanodes: int
    def __init__(self, files: _Optional[_Iterable[_Union[FileInspection, _Mapping]]] = ..., live_datanodes: _Optional[int] = ...) -> None: ...

class ReplicationChange(_message.Message):
    __slots__ = ("path", "replication", "expect", "set_xattr", "xattr_value", "remove_xattr", "final_xattr_value")
    PATH_FIELD_NUMBER: _ClassVar[int]
    REPLICATION_FIELD_NUMBER: _ClassVar[int]
    EXPECT_FIELD_NUMBER: _ClassVar[int]
    SET_XATTR_FIELD_NUMBER: _ClassVar[int]
    XATTR_VALUE_FIELD_NUMBER: _ClassVar[int]
    REMOVE_XATTR_FIELD_NUMBER: _ClassVar[int]
    FINAL_XATTR_VALUE_FIELD_NUMBER: _ClassVar[int]
    path: str
    replication: int
    expect: int
    set_xattr: str
    xattr_value: bytes
    remove_xattr: str
    final_xattr_value: bytes
    def __init__(self, path: _Optional[str] = ..., replication: _Optional[int] = ..., expect: _Optional[int] = ..., set_xattr: _Optional[str] = ..., xattr_value: _Optional[bytes] = ..., remove_xattr: _Optional[str] = ..., final_xattr_value: _Optional[bytes] = ...) -> None: ...

class ReplicationResult(_message.Message):
    __slots__ = ("code", "message", "before", "changed")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    before: int
    changed: bool
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., before: _Optional[int] = ..., changed: _Optional[bool] = ...) -> None: ...

class SetReplicationsRequest(_message.Message):
    __slots__ = ("changes", "user", "service")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[ReplicationChange]
    user: str
    service: bool
    def __init__(self, changes: _Optional[_Iterable[_Union[ReplicationChange, _Mapping]]] = ..., user: _Optional[str] = ..., service: _Optional[bool] = ...) -> None: ...

class SetReplicationsResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ReplicationResult]
    def __init__(self, results: _Optional[_Iterable[_Union[ReplicationResult, _Mapping]]] = ...) -> None: ...

class SetBalancedReadsRequest(_message.Message):
    __slots__ = ("paths", "service")
    PATHS_FIELD_NUMBER: _ClassVar[int]
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    paths: _containers.RepeatedScalarFieldContainer[str]
    service: bool
    def __init__(self, paths: _Optional[_Iterable[str]] = ..., service: _Optional[bool] = ...) -> None: ...

class SetBalancedReadsResponse(_message.Message):
    __slots__ = ("topology_installed", "scope", "audit_hook_installed")
    TOPOLOGY_INSTALLED_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    AUDIT_HOOK_INSTALLED_FIELD_NUMBER: _ClassVar[int]
    topology_installed: bool
    scope: str
    audit_hook_installed: bool
    def __init__(self, topology_installed: _Optional[bool] = ..., scope: _Optional[str] = ..., audit_hook_installed: _Optional[bool] = ...) -> None: ...
