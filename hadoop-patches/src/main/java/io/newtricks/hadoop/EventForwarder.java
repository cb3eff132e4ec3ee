package io.newtricks.hadoop;

import io.grpc.ManagedChannel;
import io.newtricks.proto.v1.AuditEvent;
import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.Event;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventSinkGrpc;
import io.newtricks.proto.v1.NamespaceEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One background thread that drives the {@link InotifyTailer}, builds {@link EventBatch}es from
 * namespace events and the audit queue (at most newtricks.events.batch.max events, or whatever
 * arrived within newtricks.events.linger.ms), and calls EventSink/Deliver with a deadline.
 *
 * <p>A batch that fails is kept and retried, unchanged, once the co-process is healthy again, so
 * namespace events are delivered at least once and in txid order. Audit events are best effort:
 * the audit queue is bounded and every batch carries the total dropped so far.
 */
final class EventForwarder {
  private static final Logger LOG = LoggerFactory.getLogger(EventForwarder.class);
  private static final long RETRY_MS = 200;

  private final EventHub hub;
  private final InotifyTailer tailer;
  private final CoprocessSupervisor supervisor;
  private final HookMetrics metrics;
  private final int batchMax;
  private final long lingerMs;
  private final long deliverTimeoutMs;

  private volatile boolean running;
  private Thread thread;

  // Owned by the forwarder thread.
  private EventBatch inflight;
  private int inflightNamespace;
  private int inflightAudit;
  private long inflightLastTxid = -1;
  private long seq;
  private long lastFailureLog;

  EventForwarder(EventHub hub, InotifyTailer tailer, CoprocessSupervisor supervisor,
      HookMetrics metrics, HookConf hc) {
    this.hub = hub;
    this.tailer = tailer;
    this.supervisor = supervisor;
    this.metrics = metrics;
    this.batchMax = Math.max(1, hc.batchMax);
    this.lingerMs = Math.max(1, hc.batchLingerMs);
    this.deliverTimeoutMs = hc.deliverTimeoutMs;
  }

  void start() {
    running = true;
    thread = new Thread(this::loop, "newtricks-event-forwarder");
    thread.setDaemon(true);
    thread.start();
  }

  void stop() {
    running = false;
    Thread t = thread;
    if (t != null) {
      t.interrupt();
      try {
        t.join(deliverTimeoutMs + 1_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void loop() {
    while (running) {
      long cycleStart = System.currentTimeMillis();
      boolean full = false;
      try {
        if (tailer != null) {
          tailer.maybePoll(cycleStart);
        }
        if (inflight == null) {
          build();
        }
        if (inflight != null) {
          if (!supervisor.isHealthy()) {
            sleep(RETRY_MS);
            continue;
          }
          full = inflight.getEventsCount() >= batchMax;
          if (!deliver()) {
            sleep(RETRY_MS);
            continue;
          }
        }
      } catch (InterruptedException e) {
        break;
      } catch (Throwable t) {
        LOG.warn("newtricks: event forwarder error: {}", t.toString());
      }
      if (!full) {
        try {
          sleep(lingerMs - (System.currentTimeMillis() - cycleStart));
        } catch (InterruptedException e) {
          break;
        }
      }
    }
  }

  /** Builds the next batch from queued namespace events, then audit records. */
  private void build() {
    List<NamespaceEvent> ns = new ArrayList<>();
    if (tailer != null) {
      tailer.drainTo(ns, batchMax);
    }
    List<AuditRecord> audit = new ArrayList<>();
    hub.drainTo(audit, batchMax - ns.size());
    if (ns.isEmpty() && audit.isEmpty()) {
      return;
    }
    EventBatch.Builder b = EventBatch.newBuilder();
    long lastTxid = -1;
    for (NamespaceEvent e : ns) {
      b.addEvents(Event.newBuilder().setNamespace(e));
      lastTxid = Math.max(lastTxid, e.getTxid());
    }
    for (AuditRecord r : audit) {
      b.addEvents(Event.newBuilder().setAudit(toProto(r)));
    }
    inflight = b.setSeq(++seq).setAuditDroppedTotal(hub.dropped()).build();
    inflightNamespace = ns.size();
    inflightAudit = audit.size();
    inflightLastTxid = lastTxid;
  }

  private boolean deliver() {
    ManagedChannel ch = supervisor.channel();
    if (ch == null) {
      return false;
    }
    long start = System.nanoTime();
    try {
      // Refresh the drop total on retries: the receiver wants the latest figure.
      EventBatch batch = inflight.getAuditDroppedTotal() == hub.dropped()
          ? inflight : inflight.toBuilder().setAuditDroppedTotal(hub.dropped()).build();
      DeliverAck ack = EventSinkGrpc.newBlockingStub(ch)
          .withDeadlineAfter(deliverTimeoutMs, TimeUnit.MILLISECONDS)
          .deliver(batch);
      metrics.deliverLatency.add((System.nanoTime() - start) / 1_000_000);
      metrics.batchesDelivered.incr();
      metrics.auditForwarded.incr(inflightAudit);
      metrics.namespaceForwarded.incr(inflightNamespace);
      if (tailer != null) {
        tailer.acknowledge(inflightNamespace, Math.max(inflightLastTxid, ack.getLastTxid()));
      }
      inflight = null;
      return true;
    } catch (RuntimeException e) {
      metrics.batchesFailed.incr();
      long now = System.currentTimeMillis();
      if (now - lastFailureLog > 10_000) {
        lastFailureLog = now;
        LOG.warn("newtricks: EventSink/Deliver of batch {} ({} events) failed, will retry: {}",
            inflight.getSeq(), inflight.getEventsCount(), e.toString());
      }
      return false;
    }
  }

  static AuditEvent toProto(AuditRecord r) {
    AuditEvent.Builder b = AuditEvent.newBuilder()
        .setCmd(nz(r.cmd))
        .setSrc(nz(r.src))
        .setDst(nz(r.dst))
        .setUser(nz(r.user))
        .setAllowed(r.allowed)
        .setTimeMs(r.timeMs)
        .setCallerContext(nz(r.callerContext));
    if (r.clientAddr != null) {
      b.setClientIp(r.clientAddr.getHostAddress());
    }
    return b.build();
  }

  private static void sleep(long ms) throws InterruptedException {
    if (ms > 0) {
      Thread.sleep(ms);
    }
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }
}
