package io.newtricks.hadoop.host;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.FileNotFoundException;
import java.lang.reflect.UndeclaredThrowableException;
import org.apache.hadoop.HadoopIllegalArgumentException;
import org.apache.hadoop.conf.ReconfigurationException;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.hdfs.protocol.QuotaExceededException;
import org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException;
import org.apache.hadoop.hdfs.server.namenode.SafeModeException;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.ipc.RetriableException;
import org.apache.hadoop.ipc.StandbyException;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.token.SecretManager;

/**
 * The one table that turns Hadoop exceptions into gRPC status codes at the host-service edge
 * (see host.proto). The Go side maps the codes back to its sentinel errors.
 */
final class StatusMapping {
  private StatusMapping() {}

  static StatusRuntimeException toStatus(Throwable t) {
    Throwable e = unwrap(t);
    return codeFor(e).withDescription(describe(e)).withCause(e).asRuntimeException();
  }

  static Status codeFor(Throwable e) {
    if (e instanceof StatusRuntimeException) {
      return ((StatusRuntimeException) e).getStatus();
    }
    if (e instanceof FileNotFoundException || e instanceof ReplicaNotFoundException) {
      return Status.NOT_FOUND;
    }
    if (e instanceof AccessControlException || e instanceof SecretManager.InvalidToken) {
      return Status.PERMISSION_DENIED;
    }
    if (e instanceof SafeModeException || e instanceof StandbyException) {
      return Status.FAILED_PRECONDITION;
    }
    if (e instanceof RetriableException) {
      // "NameNode still not started", safe mode on an HA NameNode: try again later.
      return Status.UNAVAILABLE;
    }
    if (e instanceof QuotaExceededException) {
      return Status.RESOURCE_EXHAUSTED;
    }
    if (e instanceof FileAlreadyExistsException) {
      return Status.ALREADY_EXISTS;
    }
    if (e instanceof IllegalArgumentException // includes InvalidPathException
        || e instanceof HadoopIllegalArgumentException
        || e instanceof ReconfigurationException) {
      return Status.INVALID_ARGUMENT;
    }
    return Status.INTERNAL;
  }

  private static Throwable unwrap(Throwable t) {
    Throwable e = t;
    for (int i = 0; i < 5; i++) {
      if (e instanceof UndeclaredThrowableException && e.getCause() != null) {
        e = e.getCause();
      } else if (e instanceof RemoteException) {
        e = ((RemoteException) e).unwrapRemoteException();
        break;
      } else {
        break;
      }
    }
    return e;
  }

  private static String describe(Throwable e) {
    String msg = e.getMessage();
    String name = e.getClass().getSimpleName();
    return msg == null || msg.isEmpty() ? name : name + ": " + msg;
  }
}
