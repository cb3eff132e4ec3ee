"""How calls to the newtricks APIs prove who they come from.

Under simple authentication (the default, ``auth=None``) a call names its user and namenode-ext
trusts the name, exactly as HDFS does. On a Kerberized cluster every call must carry a
credential over TLS; build an :class:`Auth` and pass it as ``auth=`` to ``newtricks.hint`` and
the ``newtricks.mirror`` functions:

- ``Auth.kerberos(ca, spn, keytab=..., principal=...)`` or ``Auth.kerberos(ca, spn,
  ccache=...)`` (a ``kinit`` ticket cache; default ``$KRB5CCNAME``): each call carries a fresh
  SPNEGO token for the API's service principal ``spn`` (``newtricks/<host>``). The tokens are
  made by the same Go code the ``newtricks`` CLI uses (internal/authn, inside libnewtricks),
  so there is one Kerberos implementation;
- ``Auth.token(ca, token)``: an HDFS delegation token in Hadoop's URL-safe string form (``hdfs
  fetchdt``, WebHDFS ``GETDELEGATIONTOKEN``, a YARN or Kubernetes container's credentials).

The same ``Auth`` is the ``auth=`` of ``newtricks.Reader`` (and ``newtricks.torch.StepDataset``):
the reader, inside libnewtricks, logs in from the Auth's configuration (not its Python login)
and proves the identity on every connection it makes: namenode-ext, each datanode-ext node
(TLS as the node's host name; its service principal ``node_spn``, default ``spn`` with the
host made ``_HOST``), and HDFS for the index and fallback reads (Kerberos for ``hdfs_spn``,
default ``hdfs/_HOST``, with SASL data transfer ``data_transfer_protection``, default
"authentication"). colinmarc/hdfs, the reader's HDFS client, does not take delegation tokens
for HDFS RPC: a Reader needs a keytab or a ticket cache on a Kerberized cluster. An Auth
pickles as its configuration (a spawned DataLoader worker logs in again when it is used).

``ca`` is the PEM file of the CA that signed the API's certificate. With an ``Auth`` the
request's user defaults to the authenticated identity; naming another user needs Hadoop's
proxy-user rules (``hadoop.proxyuser.*``), as in HDFS. ``Auth.from_env()`` builds one from
``$NEWTRICKS_CA`` with ``$NEWTRICKS_TOKEN``, or ``$NEWTRICKS_SPN`` and ``$NEWTRICKS_KEYTAB`` +
``$NEWTRICKS_PRINCIPAL`` or ``$KRB5CCNAME`` (``$KRB5_CONFIG``: krb5.conf), or returns None.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from typing import Optional

import grpc

from . import errors

METADATA_KEY = "authorization"


def _lib():
    from . import transforms

    lib = transforms._load()
    if not getattr(lib, "_nt_auth_ready", False):
        lib.ntx_auth_open.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_auth_open.restype = ctypes.c_uint64
        lib.ntx_auth_header.argtypes = [ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        lib.ntx_auth_header.restype = ctypes.c_int
        lib.ntx_auth_principal.argtypes = [ctypes.c_uint64]
        lib.ntx_auth_principal.restype = ctypes.c_void_p
        lib.ntx_auth_close.argtypes = [ctypes.c_uint64]
        lib.ntx_auth_close.restype = ctypes.c_int
        lib._nt_auth_ready = True
    return lib


def _string(p: ctypes.c_void_p) -> str:
    from . import transforms

    return transforms._take_string(p)


class _Kerberos(grpc.AuthMetadataPlugin):
    """A Kerberos login in libnewtricks; one fresh SPNEGO token per call."""

    def __init__(self, cfg: dict, login: bool = True):
        self.cfg = dict(cfg)
        self._h = 0
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self.principal = ""
        self._closed = False
        if login:
            self._login()

    def _login(self):
        cfg = self.cfg
        lib = _lib()
        raw = json.dumps(cfg).encode()
        err = ctypes.c_void_p()
        h = lib.ntx_auth_open(raw, len(raw), ctypes.byref(err))
        if h == 0:
            msg = _string(err)
            raise errors.ConfigError("kerberos login for %s: %s" % (cfg.get("spn"), msg))
        self._h = h
        self._pid = os.getpid()
        self.principal = _string(ctypes.c_void_p(lib.ntx_auth_principal(h)))

    def header(self) -> str:
        if os.getpid() != self._pid:
            raise errors.LibraryError("a Kerberos login does not survive fork(): make the Auth in the worker")
        with self._lock:
            if self._closed:
                raise errors.ConfigError("this Auth was closed")
            if not self._h:
                self._login()  # an Auth unpickled in another process
        lib = _lib()
        val, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = lib.ntx_auth_header(self._h, ctypes.byref(val), ctypes.byref(err))
        if rc != 0:
            raise errors.UnauthenticatedError("kerberos: %s" % _string(err))
        return _string(val)

    def __call__(self, context, callback):
        try:
            callback(((METADATA_KEY, self.header()),), None)
        except Exception as e:  # reported as the call's error by gRPC
            callback((), e)

    def close(self):
        with self._lock:
            if self._h and os.getpid() == self._pid:
                _lib().ntx_auth_close(self._h)
            self._h = 0
            self._closed = True


class _Token(grpc.AuthMetadataPlugin):
    def __init__(self, token: str):
        self._value = "HDFS-Token " + token

    def __call__(self, context, callback):
        callback(((METADATA_KEY, self._value),), None)


class Auth:
    """TLS plus one credential (Kerberos or an HDFS delegation token) for every call."""

    def __init__(self, ca: str, plugin: grpc.AuthMetadataPlugin, what: str, principal: str = "",
                 config: Optional[dict] = None):
        if not ca or not os.path.isfile(ca):
            raise errors.ConfigError("ca must be the PEM file of the API's CA (TLS is required with credentials), got %r" % (ca,))
        with open(ca, "rb") as f:
            self._ca = f.read()
        #: what the reader inside libnewtricks logs in with (reader.Auth as JSON), and what an
        #: Auth pickles as: paths and names, never a ticket
        self.config = dict(config or {}, ca=os.path.abspath(ca))
        self._plugin = plugin
        self.what = what
        #: The authenticated principal (Kerberos) or "" (token): for messages only; the API
        #: maps it to the HDFS user with the cluster's own auth_to_local rules.
        self.principal = principal

    @classmethod
    def kerberos(cls, ca: str, spn: str, *, keytab: Optional[str] = None, principal: Optional[str] = None,
                 ccache: Optional[str] = None, krb5_conf: Optional[str] = None, node_spn: Optional[str] = None,
                 hdfs_spn: Optional[str] = None, data_transfer_protection: Optional[str] = None,
                 login: bool = True) -> "Auth":
        """Kerberos from a keytab (with ``principal``) or a ticket cache. ``spn`` is namenode-ext's
        service principal; ``node_spn``, ``hdfs_spn`` and ``data_transfer_protection`` are used by
        a Reader only (the datanode-ext nodes' principal pattern, the NameNode's, and the SASL
        protection of HDFS reads: see the module doc). ``login=False`` does not log in now (the
        first call that needs a token does): for a parent process that must not load libnewtricks
        before it forks its DataLoader workers, whose Readers log in themselves."""
        if not spn:
            raise errors.ConfigError("spn (the API's service principal, newtricks/<host>) is required")
        if keytab and ccache:
            raise errors.ConfigError("a keytab or a ticket cache, not both")
        if not keytab:
            ccache = ccache or os.environ.get("KRB5CCNAME") or "/tmp/krb5cc_%d" % os.getuid()
        elif not principal:
            raise errors.ConfigError("a keytab needs the principal to log in as")
        if data_transfer_protection not in (None, "", "authentication", "integrity", "privacy"):
            raise errors.ConfigError("data_transfer_protection must be authentication, integrity or privacy, got %r"
                                     % (data_transfer_protection,))
        for name, v in (("node_spn", node_spn), ("hdfs_spn", hdfs_spn)):
            if v is not None and (not isinstance(v, str) or not v or "/" not in v):
                raise errors.ConfigError("%s must be a service principal (service/host or service/_HOST), got %r" % (name, v))
        cfg = {"spn": spn, "keytab": os.path.abspath(keytab) if keytab else "", "principal": principal or "",
               "ccache": ccache or "", "krb5_conf": krb5_conf or os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"}
        k = _Kerberos(cfg, login=login)
        extra = {"node_spn": node_spn or "", "hdfs_spn": hdfs_spn or "", "data_transfer_protection": data_transfer_protection or ""}
        return cls(ca, k, "kerberos " + (k.principal or cfg["principal"] or "(ticket cache)"), k.principal, dict(cfg, **extra))

    @classmethod
    def token(cls, ca: str, token: str) -> "Auth":
        if not isinstance(token, str) or not token or token.strip() != token:
            raise errors.ConfigError("token must be a delegation token in Hadoop's URL-safe string form")
        return cls(ca, _Token(token), "delegation token", config={"token": token})

    @classmethod
    def from_env(cls) -> Optional["Auth"]:
        ca = os.environ.get("NEWTRICKS_CA")
        if not ca:
            return None
        tok = os.environ.get("NEWTRICKS_TOKEN")
        if tok:
            return cls.token(ca, tok)
        return cls.kerberos(ca, os.environ.get("NEWTRICKS_SPN", ""), keytab=os.environ.get("NEWTRICKS_KEYTAB"),
                            principal=os.environ.get("NEWTRICKS_PRINCIPAL"))

    def channel(self, addr: str) -> grpc.Channel:
        creds = grpc.composite_channel_credentials(grpc.ssl_channel_credentials(root_certificates=self._ca),
                                                   grpc.metadata_call_credentials(self._plugin))
        return grpc.secure_channel(addr, creds)

    def close(self) -> None:
        """Destroys a Kerberos login (tokens hold nothing)."""
        if isinstance(self._plugin, _Kerberos):
            self._plugin.close()

    def __reduce__(self):
        # Pickled as its configuration: a Kerberos login is a handle of this process's
        # libnewtricks and never crosses processes; the copy logs in again when it is used.
        return (_from_config, (self.config,))


def _from_config(config: dict) -> Auth:
    c = dict(config)
    ca = c.pop("ca")
    if c.get("token"):
        return Auth.token(ca, c["token"])
    return Auth.kerberos(ca, c["spn"], keytab=c.get("keytab") or None, principal=c.get("principal") or None,
                         ccache=c.get("ccache") or None, krb5_conf=c.get("krb5_conf") or None,
                         node_spn=c.get("node_spn") or None, hdfs_spn=c.get("hdfs_spn") or None,
                         data_transfer_protection=c.get("data_transfer_protection") or None, login=False)

    def __repr__(self) -> str:
        return "Auth(%s)" % self.what


def channel(addr: str, auth: Optional[Auth]) -> grpc.Channel:
    """A channel to addr: plaintext under simple authentication, TLS with auth's credential."""
    if auth is None:
        return grpc.insecure_channel(addr)
    if not isinstance(auth, Auth):
        raise errors.ConfigError("auth must be a newtricks.auth.Auth, got %r" % (auth,))
    return auth.channel(addr)
