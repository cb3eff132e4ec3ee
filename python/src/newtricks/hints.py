"""Replication hints: tell namenode-ext which files many ranks are about to read.

    with newtricks.hint("/data/ckpt/step-1000", readers=512, hot_in=10, window=600) as h:
        h.wait_ready(timeout=120)   # optional: block until the extra replicas are placed
        load_checkpoint()
    # on exit the hint is done: namenode-ext restores the original replication factors

The hint is created when ``hint()`` is called; leaving the ``with`` block ends it (as
cancelled if the block raised). Without ``with``, call ``done()`` yourself; a hint that is never
ended still ends at the close of its window.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
import time
from typing import Iterable, List, Optional, Sequence, Union

import grpc

from . import errors
from . import auth as _auth
from . import _failover
from ._failover import ADDR_ENV  # noqa: F401  (re-exported)
from ._user import resolve_user
from .v1 import hotspot_pb2

_HINTS = "/newtricks.v1.Hints/"

Seconds = Union[int, float, datetime.timedelta]


@dataclasses.dataclass(frozen=True)
class FilePlan:
    path: str
    length: int
    original_replication: int
    target_replication: int
    note: str  # why the target is lower than the planner wished, or ""


@dataclasses.dataclass(frozen=True)
class Skipped:
    path: str
    code: str  # NOT_FOUND, PERMISSION_DENIED, OUTSIDE_PREFIXES, QUOTA, ...
    reason: str


@dataclasses.dataclass(frozen=True)
class Plan:
    """What namenode-ext will do. A partial plan lists what was left out and why."""

    hint_id: str
    files: List[FilePlan]
    skipped: List[Skipped]
    skipped_omitted: int
    bytes_to_copy: int
    estimated_ready: float  # unix seconds
    hot_from: float
    deadline: float
    notes: List[str]
    partial: bool


@dataclasses.dataclass(frozen=True)
class FileProgress:
    path: str
    original_replication: int
    target_replication: int
    replicas_placed: int
    ready: bool
    length: int


@dataclasses.dataclass(frozen=True)
class Status:
    hint_id: str
    state: str  # PREPARING, READY, RESTORING, FINISHED, CANCELLED
    ready: bool
    files: List[FileProgress]
    created: float
    ready_at: float  # 0 until ready
    deadline: float
    user: str
    implicit: bool


def _plan(p: hotspot_pb2.HintPlan) -> Plan:
    return Plan(
        hint_id=p.hint_id,
        files=[FilePlan(f.path, f.length, f.original_replication, f.target_replication, f.note) for f in p.files],
        skipped=[Skipped(s.path, s.code, s.reason) for s in p.skipped],
        skipped_omitted=p.skipped_omitted,
        bytes_to_copy=p.bytes_to_copy,
        estimated_ready=p.estimated_ready_ms / 1e3,
        hot_from=p.hot_from_ms / 1e3,
        deadline=p.deadline_ms / 1e3,
        notes=list(p.notes),
        partial=p.partial,
    )


def _status(s: hotspot_pb2.HintStatus) -> Status:
    return Status(
        hint_id=s.hint_id,
        state=s.state,
        ready=s.ready,
        files=[FileProgress(f.path, f.original_replication, f.target_replication, f.replicas_placed, f.ready, f.length)
               for f in s.files],
        created=s.created_ms / 1e3,
        ready_at=s.ready_ms / 1e3,
        deadline=s.deadline_ms / 1e3,
        user=s.user,
        implicit=s.implicit,
    )


def _seconds(name: str, v: Seconds, *, positive: bool) -> float:
    if isinstance(v, datetime.timedelta):
        v = v.total_seconds()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise errors.ConfigError("%s must be a number of seconds or a timedelta, got %r" % (name, v))
    if v != v or v in (float("inf"), float("-inf")):
        raise errors.ConfigError("%s must be finite, got %r" % (name, v))
    if positive and v <= 0:
        raise errors.ConfigError("%s must be > 0 seconds, got %r" % (name, v))
    if not positive and v < 0:
        raise errors.ConfigError("%s must be >= 0 seconds, got %r" % (name, v))
    return float(v)


def _paths(paths: Union[str, os.PathLike, Iterable[str]]) -> List[str]:
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    try:
        items = list(paths)
    except TypeError:
        raise errors.ConfigError("paths must be a path or an iterable of paths, got %r" % (paths,)) from None
    if not items:
        raise errors.ConfigError("no paths: give at least one absolute HDFS path")
    out = []
    for p in items:
        p = os.fspath(p) if isinstance(p, os.PathLike) else p
        if not isinstance(p, str):
            raise errors.ConfigError("HDFS paths are strings, got %r" % (p,))
        out.append(p)
    for p in out:
        if not p.startswith("/"):
            raise errors.ConfigError("HDFS path %r is not absolute (hints take absolute paths, globs or directories)" % p)
    return out


class Hint:
    """An active hint. Use it as a context manager (done on exit), or call ``done()``."""

    def __init__(self, channels: "_failover.Channels", user: str, plan: Plan, rpc_timeout: float):
        self._ch = channels
        self.user = user
        self.plan = plan
        self._timeout = rpc_timeout
        self._ended: Optional[Status] = None

    @property
    def id(self) -> str:
        return self.plan.hint_id

    def _call(self, what, method, req):
        try:
            return self._ch.unary(_HINTS + method, req, hotspot_pb2.HintStatus, self._timeout)
        except grpc.RpcError as e:
            raise errors.from_rpc_error(e, "hint %s %s on %s" % (what, self.id, self._ch.addr)) from None

    def status(self) -> Status:
        """Replicas placed per file and whether the hint is ready."""
        return _status(self._call("status", "Status", hotspot_pb2.HintStatusRequest(hint_id=self.id, user=self.user)))

    def wait_ready(self, timeout: Seconds = 300, poll: Seconds = 0.5) -> Status:
        """Polls until every file has its target replicas. Raises DeadlineExceededError after
        ``timeout`` seconds, FailedPreconditionError if the hint ended first."""
        t = _seconds("timeout", timeout, positive=True)
        p = _seconds("poll", poll, positive=True)
        end = time.monotonic() + t
        while True:
            st = self.status()
            if st.ready:
                return st
            if st.state in ("FINISHED", "CANCELLED", "RESTORING"):
                raise errors.FailedPreconditionError("hint %s is %s before it became ready" % (self.id, st.state))
            if time.monotonic() >= end:
                placed = ", ".join("%s %d/%d" % (f.path, f.replicas_placed, f.target_replication) for f in st.files[:5])
                raise errors.DeadlineExceededError("hint %s not ready after %.0fs (%s)" % (self.id, t, placed))
            time.sleep(min(p, max(0.0, end - time.monotonic())))

    def extend(self, by: Seconds) -> Status:
        """Moves the end of the hot window ``by`` seconds later."""
        ms = int(_seconds("by", by, positive=True) * 1000)
        return _status(self._call("extend", "Extend", hotspot_pb2.ExtendHintRequest(hint_id=self.id, user=self.user, extend_by_ms=ms)))

    def done(self, cancel: bool = False) -> Status:
        """Ends the hint now: namenode-ext restores the files' factors. Idempotent here: a
        second call returns the first call's status."""
        if self._ended is not None:
            return self._ended
        try:
            if not self.id:  # dry run: nothing to end
                self._ended = Status("", "FINISHED", False, [], 0, 0, 0, self.user, False)
            else:
                self._ended = _status(self._call("done", "Done",
                                                 hotspot_pb2.DoneHintRequest(hint_id=self.id, user=self.user, cancel=cancel)))
        finally:
            if self._ended is not None:
                self._ch.close()
        return self._ended

    def __enter__(self) -> "Hint":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self.done(cancel=exc_type is not None)
        except errors.NewtricksError:
            if exc_type is None:
                raise
            # The block's own exception is the one to see; the hint ends at its deadline.

    def __repr__(self) -> str:
        return "Hint(id=%r, files=%d, user=%r)" % (self.id, len(self.plan.files), self.user)


def hint(paths: Union[str, Sequence[str]], readers: int, hot_in: Seconds = 0, window: Seconds = 600, *,
         replication: int = 0, addr: Optional[_failover.Addr] = None, user: Optional[str] = None,
         dry_run: bool = False, timeout: Seconds = 60, auth: Optional[_auth.Auth] = None,
         nameservice: Optional[str] = None, conf_dir: Optional[str] = None) -> Hint:
    """Creates a hint: ``paths`` (absolute HDFS files, directories or globs) will be read by
    ``readers`` concurrent readers from ``hot_in`` seconds from now, for ``window`` seconds.

    ``addr`` is namenode-ext's public API address (default $NEWTRICKS_NAMENODE_EXT); for an
    HA pair both NameNodes' namenode-ext, as a list or comma-separated, or instead
    ``nameservice`` (and ``conf_dir``, default $HADOOP_CONF_DIR): its NameNodes' namenode-ext
    from hdfs-site.xml. Calls go to the active NameNode's and fail over as the Go clients do
    (newtricks._failover). ``user``
    the HDFS user the hint is made for (default $HADOOP_USER_NAME or the login name), who
    must be allowed to change the files. ``replication`` asks for an explicit factor (0: the
    planner chooses). ``timeout`` bounds the whole creation, including retries while
    namenode-ext is starting or recovering (UNAVAILABLE; not after a connection broke while
    the call was in flight, which may have created the hint). ``auth`` (newtricks.auth.Auth: TLS
    plus Kerberos or a delegation token) is required on a Kerberized cluster; with it ``user``
    defaults to the authenticated identity.

    Returns a Hint (a context manager); ``hint.plan`` says what namenode-ext will do.
    Raises ConfigError for bad arguments before sending anything, and the NewtricksError
    matching the server's answer otherwise (PermissionDeniedError, NotFoundError, ...).
    """
    ps = _paths(paths)
    if isinstance(readers, bool) or not isinstance(readers, int) or readers <= 0:
        raise errors.ConfigError("readers must be a positive int (expected concurrent readers of every file), got %r" % (readers,))
    if isinstance(replication, bool) or not isinstance(replication, int) or replication < 0:
        raise errors.ConfigError("replication must be an int >= 0 (0: the planner chooses), got %r" % (replication,))
    hot_in_s = _seconds("hot_in", hot_in, positive=False)
    window_s = _seconds("window", window, positive=True)
    t = _seconds("timeout", timeout, positive=True)
    addrs = _failover.resolve(addr, nameservice, conf_dir)
    u = resolve_user(user) if auth is None or user is not None else ""
    req = hotspot_pb2.CreateHintRequest(paths=ps, hot_in_ms=int(hot_in_s * 1000), hot_for_ms=int(window_s * 1000),
                                        readers=readers, user=u, replication=replication, dry_run=dry_run)
    ch = _failover.Channels(addrs, auth)
    end = time.monotonic() + t
    try:
        while True:
            left = end - time.monotonic()
            try:
                plan = ch.unary(_HINTS + "Create", req, hotspot_pb2.HintPlan, max(left, 0.001), wait_for_ready=False)
                break
            except grpc.RpcError as e:
                err = errors.from_rpc_error(e, "hint create on %s as %s" % (ch.describe(), u or auth))
                # namenode-ext starting or recovering answers UNAVAILABLE before doing anything:
                # asked again; a connection broken in flight may have created the hint, so a
                # second one is not sent (its error is raised).
                if (not isinstance(err, errors.UnavailableError) or _failover.broken_in_flight(e)
                        or time.monotonic() + 0.5 >= end):
                    raise err from None
                time.sleep(0.5)
    except BaseException:
        ch.close()
        raise
    return Hint(ch, u, _plan(plan), t)
