package io.newtricks.hadoop;

import io.grpc.stub.StreamObserver;
import java.security.PrivilegedExceptionAction;
import java.util.concurrent.Callable;
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
   * Runs {@code action} as {@code user} so HDFS checks permissions as that user (FSPermissionChecker
   * takes NameNode.getRemoteUser(), which falls back to UGI.getCurrentUser() outside an RPC call).
   * An empty user runs as the daemon itself.
   */
  static <T> T asUser(String user, PrivilegedExceptionAction<T> action) throws Exception {
    if (user == null || user.isEmpty()) {
      return action.run();
    }
    return UserGroupInformation.createRemoteUser(user).doAs(action);
  }
}
