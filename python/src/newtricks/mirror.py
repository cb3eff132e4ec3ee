"""Checkpoint mirroring from Python: wait until a checkpoint is readable on the evaluation
cluster, or ask for it first.

    newtricks.mirror.urgent("llama", 1000)                 # evaluation wants this one now
    cp = newtricks.mirror.wait("llama", 1000, timeout=3600)
    load(cp.dest_path)                                     # complete and verified on dc-b

namenode-ext (on the training cluster) copies each checkpoint while the trainer writes it and
commits it on the evaluation cluster in one rename (docs/mirror.md). ``addr`` is
namenode-ext's public API (default $NEWTRICKS_NAMENODE_EXT; an HA pair's both, as a list or
comma-separated, or ``nameservice=`` with ``conf_dir=``: calls fail over to the active
NameNode's, newtricks._failover), ``user`` the HDFS user (default
$HADOOP_USER_NAME, then the login name): a user sees the checkpoints it owns. ``rule`` may be
left empty when one mirror rule is configured. On a Kerberized cluster pass ``auth=``
(newtricks.auth.Auth: TLS plus Kerberos or a delegation token); ``user`` then defaults to the
authenticated identity.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable, List, Optional

import grpc

from . import errors
from . import auth as _auth
from . import _failover
from ._user import resolve_user
from .hints import _seconds
from .v1 import mirror_pb2

_MIRROR = "/newtricks.v1.Mirror/"


#: How often wait() opens its stream again after it broke UNAVAILABLE, and the pause before.
MAX_RESUMES = 20
RESUME_DELAY = 0.25


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    rule: str
    job: str
    step: int
    state: str  # OPEN, COPYING, COMMITTED, FAILED, RETIRED
    owner: str
    source_path: str
    dest_path: str
    files_total: int
    files_done: int
    bytes_total: int
    bytes_done: int
    rate_bytes_per_sec: float
    eta: Optional[float]  # seconds, None when unknown
    urgent: bool
    error: str
    lag: Optional[float]  # seconds from complete on dc-a to committed on dc-b, once committed
    retries: int

    @property
    def committed(self) -> bool:
        return self.state == "COMMITTED"


def _cp(m: mirror_pb2.CheckpointStatus) -> Checkpoint:
    return Checkpoint(
        rule=m.ref.rule, job=m.ref.job, step=m.ref.step,
        state=mirror_pb2.CheckpointStatus.State.Name(m.state), owner=m.owner,
        source_path=m.source_path, dest_path=m.dest_path, files_total=m.files_total, files_done=m.files_done,
        bytes_total=m.bytes_total, bytes_done=m.bytes_done, rate_bytes_per_sec=m.rate_bytes_per_sec,
        eta=None if m.eta_ms < 0 else m.eta_ms / 1e3, urgent=m.urgent, error=m.error,
        lag=m.lag_ms / 1e3 if m.committed_ms else None, retries=m.retries)


def _ref(job: str, step: int, rule: str) -> mirror_pb2.CheckpointRef:
    if not isinstance(job, str) or not job or "/" in job:
        raise errors.ConfigError("job must be a non-empty name without '/', got %r" % (job,))
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise errors.ConfigError("step must be an int >= 0, got %r" % (step,))
    if not isinstance(rule, str):
        raise errors.ConfigError("rule must be a string, got %r" % (rule,))
    return mirror_pb2.CheckpointRef(rule=rule, job=job, step=step)


class _Conn:
    def __init__(self, addr, user, what, auth=None, nameservice=None, conf_dir=None):
        self.what = what
        addrs = _failover.resolve(addr, nameservice, conf_dir)
        # With credentials the user defaults to the authenticated identity (""), see newtricks.auth.
        self.user = resolve_user(user) if auth is None or user is not None else ""
        self.who = self.user or repr(auth)
        self.ch = _failover.Channels(addrs, auth)

    @property
    def addr(self) -> str:
        return self.ch.describe()

    def call(self, method, req, resp_type, timeout):
        return self.ch.unary(_MIRROR + method, req, resp_type, timeout)

    def fail(self, e: grpc.RpcError) -> errors.NewtricksError:
        return errors.from_rpc_error(e, "mirror %s on %s as %s" % (self.what, self.addr, self.who))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.ch.close()


def urgent(job: str, step: int, *, rule: str = "", addr: Optional[_failover.Addr] = None, user: Optional[str] = None,
           auth: Optional[_auth.Auth] = None, timeout: float = 30, nameservice: Optional[str] = None,
           conf_dir: Optional[str] = None) -> Checkpoint:
    """Moves the checkpoint ahead of every other transfer (it may not exist yet)."""
    ref = _ref(job, step, rule)
    with _Conn(addr, user, "urgent %s/%d" % (job, step), auth, nameservice, conf_dir) as c:
        try:
            return _cp(c.call("Urgent", mirror_pb2.MirrorUrgentRequest(user=c.user, ref=ref), mirror_pb2.CheckpointStatus, timeout))
        except grpc.RpcError as e:
            raise c.fail(e) from None


def complete(job: str, step: int, *, rule: str = "", addr: Optional[_failover.Addr] = None, user: Optional[str] = None,
             auth: Optional[_auth.Auth] = None, timeout: float = 30, nameservice: Optional[str] = None,
             conf_dir: Optional[str] = None) -> Checkpoint:
    """Signals that the trainer has written every file of the checkpoint ("signal" rules)."""
    ref = _ref(job, step, rule)
    with _Conn(addr, user, "complete %s/%d" % (job, step), auth, nameservice, conf_dir) as c:
        try:
            return _cp(c.call("Complete", mirror_pb2.MirrorCompleteRequest(user=c.user, ref=ref), mirror_pb2.CheckpointStatus, timeout))
        except grpc.RpcError as e:
            raise c.fail(e) from None


def status(job: str = "", *, rule: str = "", addr: Optional[_failover.Addr] = None, user: Optional[str] = None,
           auth: Optional[_auth.Auth] = None, timeout: float = 30, nameservice: Optional[str] = None,
           conf_dir: Optional[str] = None) -> List[Checkpoint]:
    """The checkpoints the mirror knows (active and recently finished) that the user may see."""
    with _Conn(addr, user, "status", auth, nameservice, conf_dir) as c:
        try:
            r = c.call("Status", mirror_pb2.MirrorStatusRequest(user=c.user, rule=rule, job=job), mirror_pb2.MirrorStatusResponse, timeout)
        except grpc.RpcError as e:
            raise c.fail(e) from None
    return [_cp(m) for m in r.checkpoints]


def wait(job: str, step: int, *, rule: str = "", timeout: Optional[float] = None, interval: float = 1.0,
         progress: Optional[Callable[[Checkpoint], None]] = None, addr: Optional[_failover.Addr] = None,
         user: Optional[str] = None, auth: Optional[_auth.Auth] = None, nameservice: Optional[str] = None,
         conf_dir: Optional[str] = None) -> Checkpoint:
    """Blocks until the checkpoint is committed on the evaluation cluster and returns it
    (``dest_path`` is readable there). Calls ``progress`` with each update (at most every
    ``interval`` seconds). A checkpoint not seen yet is waited for. Raises
    FailedPreconditionError if the mirror failed it (the message says why),
    DeadlineExceededError after ``timeout`` seconds. Over several addresses the stream fails
    over at its start, and a stream broken UNAVAILABLE after a status arrived (its NameNode
    killed or failed over) is opened again, at most MAX_RESUMES times, as the Go client does."""
    ref = _ref(job, step, rule)
    iv = _seconds("interval", interval, positive=True)
    to = None if timeout is None else _seconds("timeout", timeout, positive=True)
    last = None
    start = time.monotonic()
    req = mirror_pb2.MirrorWaitRequest(ref=ref, interval_ms=int(iv * 1000))
    with _Conn(addr, user, "wait %s/%d" % (job, step), auth, nameservice, conf_dir) as c:
        req.user = c.user
        resumes = 0
        while True:
            left = None if to is None else to - (time.monotonic() - start)
            try:
                if left is not None and left <= 0:
                    raise errors.DeadlineExceededError("mirror wait %s/%d on %s as %s: no commit within %gs"
                                                       % (job, step, c.addr, c.who, to))
                for m in c.ch.server_stream(_MIRROR + "Wait", req, mirror_pb2.CheckpointStatus, left):
                    last = _cp(m)
                    if progress is not None:
                        progress(last)
                break
            except errors.DeadlineExceededError as err:
                if last is not None:
                    err = errors.DeadlineExceededError("%s; last state %s, %d/%d files" % (err, last.state, last.files_done, last.files_total))
                raise err from None
            except grpc.RpcError as e:
                if (e.code() == grpc.StatusCode.UNAVAILABLE and last is not None and resumes < MAX_RESUMES
                        and (left is None or left > RESUME_DELAY)):
                    resumes += 1
                    time.sleep(RESUME_DELAY)
                    continue
                err = c.fail(e)
                if (to is not None and e.code() == grpc.StatusCode.CANCELLED
                        and time.monotonic() - start >= to - 0.05):
                    # The server ends the stream (RST_STREAM CANCEL) when the deadline the client
                    # propagated expires; that can reach the client before its own timer fires.
                    err = errors.DeadlineExceededError("mirror wait %s/%d on %s as %s: no commit within %gs"
                                                       % (job, step, c.addr, c.who, to))
                if isinstance(err, errors.DeadlineExceededError) and last is not None:
                    err = errors.DeadlineExceededError("%s; last state %s, %d/%d files" % (err, last.state, last.files_done, last.files_total))
                raise err from None
    if last is None:
        raise errors.NewtricksError("mirror wait %s/%d: the stream ended without a status" % (job, step))
    if last.state == "FAILED":
        raise errors.FailedPreconditionError("checkpoint %s/%d failed to mirror: %s" % (job, step, last.error))
    return last
