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

    def __init__(self, cfg: dict):
        lib = _lib()
        raw = json.dumps(cfg).encode()
        err = ctypes.c_void_p()
        h = lib.ntx_auth_open(raw, len(raw), ctypes.byref(err))
        if h == 0:
            msg = _string(err)
            raise errors.ConfigError("kerberos login for %s: %s" % (cfg.get("spn"), msg))
        self._h = h
        self._pid = os.getpid()
        self._lock = threading.Lock()
        self.principal = _string(ctypes.c_void_p(lib.ntx_auth_principal(h)))

    def header(self) -> str:
        if os.getpid() != self._pid:
            raise errors.LibraryError("a Kerberos login does not survive fork(): make the Auth in the worker")
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


class _Token(grpc.AuthMetadataPlugin):
    def __init__(self, token: str):
        self._value = "HDFS-Token " + token

    def __call__(self, context, callback):
        callback(((METADATA_KEY, self._value),), None)


class Auth:
    """TLS plus one credential (Kerberos or an HDFS delegation token) for every call."""

    def __init__(self, ca: str, plugin: grpc.AuthMetadataPlugin, what: str, principal: str = ""):
        if not ca or not os.path.isfile(ca):
            raise errors.ConfigError("ca must be the PEM file of the API's CA (TLS is required with credentials), got %r" % (ca,))
        with open(ca, "rb") as f:
            self._ca = f.read()
        self._plugin = plugin
        self.what = what
        #: The authenticated principal (Kerberos) or "" (token): for messages only; the API
        #: maps it to the HDFS user with the cluster's own auth_to_local rules.
        self.principal = principal

    @classmethod
    def kerberos(cls, ca: str, spn: str, *, keytab: Optional[str] = None, principal: Optional[str] = None,
                 ccache: Optional[str] = None, krb5_conf: Optional[str] = None) -> "Auth":
        if not spn:
            raise errors.ConfigError("spn (the API's service principal, newtricks/<host>) is required")
        if keytab and ccache:
            raise errors.ConfigError("a keytab or a ticket cache, not both")
        if not keytab:
            ccache = ccache or os.environ.get("KRB5CCNAME") or "/tmp/krb5cc_%d" % os.getuid()
        elif not principal:
            raise errors.ConfigError("a keytab needs the principal to log in as")
        cfg = {"spn": spn, "keytab": keytab or "", "principal": principal or "", "ccache": ccache or "",
               "krb5_conf": krb5_conf or os.environ.get("KRB5_CONFIG") or "/etc/krb5.conf"}
        k = _Kerberos(cfg)
        return cls(ca, k, "kerberos " + k.principal, k.principal)

    @classmethod
    def token(cls, ca: str, token: str) -> "Auth":
        if not isinstance(token, str) or not token or token.strip() != token:
            raise errors.ConfigError("token must be a delegation token in Hadoop's URL-safe string form")
        return cls(ca, _Token(token), "delegation token")

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

    def __repr__(self) -> str:
        return "Auth(%s)" % self.what


def channel(addr: str, auth: Optional[Auth]) -> grpc.Channel:
    """A channel to addr: plaintext under simple authentication, TLS with auth's credential."""
    if auth is None:
        return grpc.insecure_channel(addr)
    if not isinstance(auth, Auth):
        raise errors.ConfigError("auth must be a newtricks.auth.Auth, got %r" % (auth,))
    return auth.channel(addr)
