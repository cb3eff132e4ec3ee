"""Calls to a nameservice's namenode-ext: the same failover as the Go clients
(internal/apiclient.Failover), so a Python trainer and the CLI behave alike.

Given several addresses (the namenode-ext of each NameNode of an HA pair), a call goes to the
address that answered last; it moves on to the next one when:

- the answer is UNAVAILABLE "standby: ..." or "namenode-ext is starting ..." (beside a
  NameNode that is not active): refused before any work, so any call is retried, as Hadoop
  retries a StandbyException;
- the call never left this process (gRPC could not connect: "failed to connect", "connection
  refused"): any call is retried;
- any other UNAVAILABLE (the connection broke in flight), and FAILED_PRECONDITION with the
  NameNode's StandbyException (the NameNode turned standby before namenode-ext knew), only for
  calls that may be applied twice (IDEMPOTENT: reads, ``Done``, the mirror's
  ``Urgent``/``Complete``); ``Create`` and ``Extend`` are not sent again, their error is raised.

At most MAX_ATTEMPTS tries per call; the first pass over the addresses is immediate, then each
failover sleeps BASE * 2**k seconds (at most MAX_SLEEP, +-50% jitter): Hadoop's
``failoverOnNetworkException`` defaults, as in Go. The call's own timeout bounds it all;
DOWN_PASSES passes in which no address accepted a connection end it early (down, or wrong
addresses), and the error raised says ``(after N attempts over A,B)``. A
server stream (``Mirror.Wait``) fails over until its first message. With one address nothing
is retried here.
"""

from __future__ import annotations

import os
import random
import threading
import time
from typing import Callable, List, Optional, Sequence, Union

import grpc

from . import errors
from . import auth as _auth

MAX_ATTEMPTS = 15
BASE = 0.5
MAX_SLEEP = 15.0
MAX_ADDRS = 16

STANDBY_PREFIXES = ("standby:", "namenode-ext is starting")
_NOT_SENT = ("failed to connect", "connection refused", "while dialing")

#: Methods that may be applied twice (service/Method, as in the Go table).
IDEMPOTENT = frozenset({
    "Hints/Status", "Hints/List", "Hints/Done",
    "Mirror/Status", "Mirror/Wait", "Mirror/Urgent", "Mirror/Complete",
    "Namespace/Locate", "Namespace/LocateBatch", "Namespace/RecentEvents",
})

#: Environment variable holding namenode-ext's public API address(es), used when ``addr`` is
#: not given: host:port, or several comma-separated.
ADDR_ENV = "NEWTRICKS_NAMENODE_EXT"

Addr = Union[str, Sequence[str]]


def _valid(a: str) -> bool:
    host, sep, port = a.rpartition(":")
    return bool(sep) and bool(host.strip("[]")) and port.isdigit() and 0 < int(port) <= 65535


def split_addrs(addr: Addr, what: str = "namenode-ext address") -> List[str]:
    """One host:port, several comma-separated, or a list of them; repeated ones kept once."""
    if isinstance(addr, str):
        items = addr.split(",")
    elif isinstance(addr, (list, tuple)):
        items = []
        for a in addr:
            if not isinstance(a, str):
                raise errors.ConfigError("%s must be host:port strings, got %r" % (what, a))
            items.extend(a.split(","))
    else:
        raise errors.ConfigError("%s must be host:port, a comma-separated list or a list, got %r" % (what, addr))
    out: List[str] = []
    for a in items:
        a = a.strip()
        if not a or a in out:
            continue
        if not _valid(a):
            raise errors.ConfigError("%s must be host:port, got %r" % (what, a))
        out.append(a)
    if not out:
        raise errors.ConfigError("no %s in %r" % (what, addr))
    if len(out) > MAX_ADDRS:
        raise errors.ConfigError("%d namenode-ext addresses, at most %d" % (len(out), MAX_ADDRS))
    return out


def resolve(addr: Optional[Addr], nameservice: Optional[str] = None, conf_dir: Optional[str] = None) -> List[str]:
    """The namenode-ext addresses: ``addr``, or the NameNodes of ``nameservice`` in
    ``conf_dir``'s hdfs-site.xml (default $HADOOP_CONF_DIR; resolved by libnewtricks, the
    same code as the CLI's), or $NEWTRICKS_NAMENODE_EXT."""
    if addr is not None and (nameservice is not None or conf_dir is not None):
        raise errors.ConfigError("addr or nameservice/conf_dir, not both")
    if nameservice is not None or conf_dir is not None:
        return [nn["api"] for nn in nameservice_info(conf_dir, nameservice)["namenodes"]]
    a = addr if addr is not None else os.environ.get(ADDR_ENV, "")
    if not a:
        raise errors.ConfigError("no namenode-ext address: pass addr='host:port' (an HA pair: 'a:port,b:port'), "
                                 "nameservice=..., or set $%s" % ADDR_ENV)
    return split_addrs(a)


def nameservice_info(conf_dir: Optional[str], nameservice: Optional[str]) -> dict:
    """{"name", "namenodes": [{"id", "rpc", "api"}]} of a nameservice (libnewtricks)."""
    import ctypes

    from . import transforms

    for name, v in (("nameservice", nameservice), ("conf_dir", conf_dir)):
        if v is not None and not isinstance(v, str):
            raise errors.ConfigError("%s must be a string, got %r" % (name, v))
    lib = transforms._load()
    if not getattr(lib, "_nt_ns_ready", False):
        lib.ntx_nameservice.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_nameservice.restype = ctypes.c_void_p
        lib._nt_ns_ready = True
    err = ctypes.c_void_p()
    p = lib.ntx_nameservice((conf_dir or "").encode(), (nameservice or "").encode(), ctypes.byref(err))
    if not p:
        raise errors.ConfigError("nameservice: " + transforms._take_string(err))
    import json

    return json.loads(transforms._take_string(ctypes.c_void_p(p)))


def _method(full: str) -> str:
    # "/newtricks.v1.Hints/Create" -> "Hints/Create"
    svc, _, m = full.lstrip("/").partition("/")
    return svc.rsplit(".", 1)[-1] + "/" + m


def refused_before_work(e: grpc.RpcError) -> bool:
    if not hasattr(e, "code") or e.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    d = (e.details() or "") if hasattr(e, "details") else ""
    if d.startswith(STANDBY_PREFIXES):
        return True
    low = d.lower()
    return any(s in low for s in _NOT_SENT)


_BROKEN = ("socket closed", "connection reset", "eof", "transport is closing", "goaway", "broken pipe")


def broken_in_flight(e: grpc.RpcError) -> bool:
    """UNAVAILABLE because the connection broke while the call was in flight (it may have been
    applied), as opposed to a server's own UNAVAILABLE answer or a call never sent."""
    if not hasattr(e, "code") or e.code() != grpc.StatusCode.UNAVAILABLE or refused_before_work(e):
        return False
    low = ((e.details() or "") if hasattr(e, "details") else "").lower()
    return any(s in low for s in _BROKEN)


def namenode_standby(e: grpc.RpcError) -> bool:
    """FAILED_PRECONDITION with the NameNode's own StandbyException: the NameNode turned standby
    before namenode-ext knew (it learns within 200 ms). Retried for idempotent calls only: a
    call made of several NameNode operations may have done its first ones."""
    return (hasattr(e, "code") and e.code() == grpc.StatusCode.FAILED_PRECONDITION
            and "StandbyException" in ((e.details() or "") if hasattr(e, "details") else ""))


def retryable(method: str, e: grpc.RpcError) -> bool:
    if not hasattr(e, "code"):
        return False
    if e.code() == grpc.StatusCode.FAILED_PRECONDITION:
        return namenode_standby(e) and _method(method) in IDEMPOTENT
    if e.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    return refused_before_work(e) or _method(method) in IDEMPOTENT


#: Passes over the addresses in which none accepted a connection that end a call's retries.
DOWN_PASSES = 3


def _not_sent(e: grpc.RpcError) -> bool:
    if not hasattr(e, "code") or e.code() != grpc.StatusCode.UNAVAILABLE:
        return False
    low = ((e.details() or "") if hasattr(e, "details") else "").lower()
    return any(s in low for s in _NOT_SENT)


class _GaveUp(grpc.RpcError):
    """The last error of a call retried over several addresses: its code, its details with
    the attempts appended (a standby's answer still starts with "standby:")."""

    def __init__(self, e: grpc.RpcError, suffix: str):
        super().__init__(str(e))
        self._code, self._details = e.code(), (e.details() or "") + suffix

    def code(self):
        return self._code

    def details(self):
        return self._details

    def __str__(self):
        return "%s: %s" % (self._code.name, self._details)


class Channels:
    """One logical connection over several namenode-ext addresses (see the module doc)."""

    def __init__(self, addrs: Sequence[str], auth: Optional["_auth.Auth"] = None):
        if not addrs:
            raise errors.ConfigError("no namenode-ext address")
        self.addrs = list(addrs)
        self._channels = [_auth.channel(a, auth) for a in self.addrs]
        self._cur = 0
        self._lock = threading.Lock()
        self.sleep: Callable[[float], None] = time.sleep

    @property
    def addr(self) -> str:
        """The address calls go to first (the one that answered last)."""
        with self._lock:
            return self.addrs[self._cur]

    def describe(self) -> str:
        return ",".join(self.addrs)

    def _backoff(self, n: int) -> float:
        k = n - len(self._channels)
        if k < 0:
            return 0.0
        d = min(MAX_SLEEP, BASE * (2 ** min(k, 30)))
        return d / 2 + random.random() * d

    def _try(self, method: str, timeout: Optional[float], attempt: Callable[[grpc.Channel, Optional[float]], object]):
        end = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            start = self._cur
        n = refused = 0
        while True:
            k = (start + n) % len(self._channels)
            left = None if end is None else max(end - time.monotonic(), 0.001)
            try:
                out = attempt(self._channels[k], left)
            except grpc.RpcError as e:
                n += 1
                refused = refused + 1 if _not_sent(e) else 0
                if len(self._channels) == 1 or not retryable(method, e):
                    raise self._gave_up(e, n) from None
                if n >= MAX_ATTEMPTS or refused >= DOWN_PASSES * len(self._channels):
                    # DOWN_PASSES passes in which no address accepted a connection: down (or
                    # wrong addresses), not failing over.
                    raise self._gave_up(e, n) from None
                d = self._backoff(n)
                if end is not None and time.monotonic() + d >= end:
                    raise self._gave_up(e, n) from None
                if d > 0:
                    self.sleep(d)
                continue
            with self._lock:
                self._cur = k
            return out

    def _gave_up(self, e: grpc.RpcError, n: int) -> grpc.RpcError:
        if n < 2 or not hasattr(e, "code"):
            return e
        return _GaveUp(e, " (after %d attempts over %s)" % (n, self.describe()))

    def unary(self, method: str, req, resp_type, timeout: Optional[float], **kw):
        """Calls unary method (its full name) with failover; raises the last grpc.RpcError."""

        def attempt(ch, left):
            return ch.unary_unary(method, request_serializer=type(req).SerializeToString,
                                  response_deserializer=resp_type.FromString)(req, timeout=left, **kw)

        return self._try(method, timeout, attempt)

    def server_stream(self, method: str, req, resp_type, timeout: Optional[float]):
        """Opens server-streaming method with failover until its first message; yields the
        messages."""
        first = []

        def attempt(ch, left):
            it = ch.unary_stream(method, request_serializer=type(req).SerializeToString,
                                 response_deserializer=resp_type.FromString)(req, timeout=left)
            try:
                first.append(next(it))
            except StopIteration:
                pass
            return it

        it = self._try(method, timeout, attempt)
        yield from first
        yield from it

    def close(self) -> None:
        for ch in self._channels:
            ch.close()

    def __enter__(self) -> "Channels":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
