package io.newtricks.hadoop.host;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import java.security.PrivilegedExceptionAction;
import java.util.Collection;
import java.util.concurrent.Callable;
import org.apache.hadoop.security.AccessControlException;
import org.apache.hadoop.security.UserGroupInformation;

/** What every host RPC does around its body: run as the user, time, count, map errors. */
final class HostCalls {
  private HostCalls() {}

  /** Runs {@code body}, answers with its result or the mapped status, and records metrics. */
  static <T> void serve(HookMetrics metrics, StreamObserver<T> out, Callable<T> body) {
    long start = System.nanoTime();
    T result;
    try {
      result = body.call();
    } catch (Throwable t) {
      metrics.hostCalls.incr();
      metrics.hostCallErrors.incr();
      metrics.hostCallLatency.add((System.nanoTime() - start) / 1_000_000);
      out.onError(StatusMapping.toStatus(t));
      return;
    }
    metrics.hostCalls.incr();
    metrics.hostCallLatency.add((System.nanoTime() - start) / 1_000_000);
    out.onNext(result);
    out.onCompleted();
  }

  /**
   * Checks who a request acts as (host.proto): exactly one of a named user and the service
   * flag. An empty or missing user is never taken to mean the daemon.
   */
  static void checkCaller(String call, String user, boolean service) {
    boolean named = user != null && !user.isEmpty();
    if (named && service) {
      throw Status.INVALID_ARGUMENT.withDescription(call + ": names user " + user
          + " and service: a host call acts as exactly one of them").asRuntimeException();
    }
    if (!named && !service) {
      throw Status.INVALID_ARGUMENT.withDescription(call + ": no user: a host call acts as a named"
          + " user, or says service=true for the co-process's own bookkeeping; an empty user is"
          + " never the daemon's identity").asRuntimeException();
    }
  }

  /** Refuses a call that only a user may make when the request says service. */
  static void userOnly(String call, String user, boolean service) {
    checkCaller(call, user, service);
    if (service) {
      throw Status.PERMISSION_DENIED.withDescription(call + " acts only for a user, never as the"
          + " service (host.proto)").asRuntimeException();
    }
  }

  /** Refuses a call that only the service may make when the request does not say service. */
  static void serviceOnly(String call, boolean service) {
    if (!service) {
      throw Status.INVALID_ARGUMENT.withDescription(call + " is a service call: the request must"
          + " say service=true (host.proto)").asRuntimeException();
    }
  }

  /** Refuses an xattr name outside the service prefixes, for a service call. */
  static void serviceXAttr(String call, String name, Collection<String> prefixes)
      throws AccessControlException {
    if (!serviceXAttrAllowed(name, prefixes)) {
      throw new AccessControlException(call + " as the service may only name xattrs under "
          + prefixes + " (" + HookConf.SERVICE_XATTR_PREFIXES + "), not " + name);
    }
  }

  static boolean serviceXAttrAllowed(String name, Collection<String> prefixes) {
    if (name == null || name.isEmpty()) {
      return false;
    }
    for (String p : prefixes) {
      if (!p.isEmpty() && name.startsWith(p)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Runs {@code action} as {@code user} so HDFS checks permissions as that user (FSPermissionChecker
   * takes NameNode.getRemoteUser(), which falls back to UGI.getCurrentUser() outside an RPC call),
   * or, for a service call, as the daemon itself. The caller checked the request with
   * {@link #checkCaller} (or one of its stricter forms) first; this checks again.
   */
  static <T> T as(String call, String user, boolean service, PrivilegedExceptionAction<T> action)
      throws Exception {
    checkCaller(call, user, service);
    if (service) {
      return action.run();
    }
    return UserGroupInformation.createRemoteUser(user).doAs(action);
  }
}
