"""Who a call acts as, under HDFS simple authentication."""

from __future__ import annotations

import getpass
import os


def resolve_user(user: str | None) -> str:
    """The HDFS user a call names: ``user`` if given, else $HADOOP_USER_NAME (as Hadoop's own
    clients do), else the local login name. Under simple authentication namenode-ext trusts
    the name and HDFS checks it, exactly as for any HDFS client."""
    if user is not None:
        if not isinstance(user, str) or not user or user.strip() != user:
            from .errors import ConfigError

            raise ConfigError("user must be a non-empty name without surrounding blanks, got %r" % (user,))
        return user
    env = os.environ.get("HADOOP_USER_NAME")
    if env:
        return env
    return getpass.getuser()
