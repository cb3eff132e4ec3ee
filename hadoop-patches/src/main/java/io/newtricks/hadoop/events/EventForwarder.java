package io.newtricks.hadoop.events;

import io.grpc.ManagedChannel;
import io.newtricks.hadoop.supervise.CoprocessLink;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.hadoop.supervise.HookMetrics;
import io.newtricks.proto.v1.AuditEvent;
import io.newtricks.proto.v1.DeliverAck;
import io.newtricks.proto.v1.Event;
import io.newtricks.proto.v1.EventBatch;
import io.newtricks.proto.v1.EventFilter;
import io.newtricks.proto.v1.EventSinkGrpc;
import io.newtricks.proto.v1.NamespaceEvent;
import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One background thread that drives the {@link NamespaceTailer}, builds {@link EventBatch}es from
 * namespace events and the audit queue (at most newtricks.events.batch.max events, or whatever
 * arrived within newtricks.events.linger.ms), and calls EventSink/Deliver with a deadline.
 *
 * <p>While no co-process is healthy it does nothing at all (and the audit logger queues
 * nothing). A batch that fails is retried once the co-process is healthy again; a new
 * co-process gets, first, every namespace event after the last txid it acknowledged durable, so
 * namespace events arrive in txid order, at least once, and the receiver drops repeats by txid.
 * That durable txid is persisted (newtricks.events.state.file), so a restarted NameNode resumes
 * after it too. Audit events are best effort: the audit queue is bounded and every batch carries
 * the total dropped so far.
 *
 * <p>The co-process's subscription can change after Configure (a subsystem switched on, a
 * {@code RecentEvents} interest): it answers every Deliver with its filter when that changed.
 * So that a change reaches the hook even when nothing is being sent (nothing was subscribed,
 * or nothing subscribed happens), the forwarder sends an empty batch after
 * {@link #HEARTBEAT_MS} without a Deliver: one call a second at most, only while idle.
 */
final class EventForwarder {
  private static final Logger LOG = LoggerFactory.getLogger(EventForwarder.class);
  private static final long RETRY_MS = 200;
  /**
   * Pace of the loop, and of resume-point saves, while nothing at all is subscribed: there is
   * nothing to send; a new subscription arrives with the next heartbeat (or a new co-process
   * generation), which the loop sends within this time.
   */
  static final long IDLE_MS = 1_000;
  /**
   * An empty batch is delivered after this long without a Deliver, so that a filter change in
   * the co-process reaches the hook (in the acknowledgement) while nothing is sent otherwise.
   */
  static final long HEARTBEAT_MS = 1_000;

  private final EventHub hub;
  private final NamespaceTailer tailer;
  private final File stateFile;
  private final long persistIntervalMs;
  private final CoprocessLink supervisor;
  private final HookMetrics metrics;
  private final int batchMax;
  private final long lingerMs;
  private final long deliverTimeoutMs;

  private volatile boolean running;
  private Thread thread;
  private final Wakeup wakeup = new Wakeup();

  // Owned by the forwarder thread.
  private EventBatch inflight;
  private int inflightNamespace;
  private int inflightAudit;
  private long seq;
  private long lastFailureLog;
  private boolean healthy;
  private int generation = -1;
  private long durableTxid = -1;     // highest txid acknowledged durable (or loaded)
  private long resumeAfter = -1;     // set on the next batch after a new co-process: > -1
  private boolean resumePending;
  private long persistedTxid = Long.MIN_VALUE;
  private String persistedFilter = "";
  private long nextPersistAt;
  private final boolean auditForwarderConfigured;
  private boolean hintedAudit;
  private long lastDeliverMs;        // last acknowledged Deliver (heartbeats included)

  EventForwarder(EventHub hub, NamespaceTailer tailer, CoprocessLink supervisor,
      HookMetrics metrics, HookConf hc) {
    this.hub = hub;
    this.tailer = tailer;
    this.stateFile = hc.stateFile;
    this.persistIntervalMs = hc.statePersistMs;
    this.auditForwarderConfigured = hc.auditForwarderConfigured;
    this.supervisor = supervisor;
    this.metrics = metrics;
    this.batchMax = Math.max(1, hc.batchMax);
    this.lingerMs = Math.max(1, hc.batchLingerMs);
    this.deliverTimeoutMs = hc.deliverTimeoutMs;
  }

  /** Resumes from the persisted state, if any. */
  void resume(EventState st) {
    if (st == null) {
      return;
    }
    durableTxid = st.durableTxid;
    persistedTxid = st.durableTxid;
    if (tailer != null) {
      tailer.setFilter(st.types, st.prefixes);
      tailer.startAfter(st.durableTxid);
      persistedFilter = filterKey();
    }
    LOG.info("newtricks: namespace events resume after txid {} ({})", st.durableTxid, stateFile);
  }

  void start() {
    running = true;
    hub.setWakeup(wakeup);
    if (tailer != null) {
      tailer.setWakeup(wakeup);
    }
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
    if (t == null || !t.isAlive()) {
      persist(true);
    }
  }

  private void loop() {
    while (running) {
      long cycleStart = System.currentTimeMillis();
      boolean full = false;
      boolean delivered = false;
      try {
        boolean h = supervisor.isHealthy();
        if (h != healthy) {
          healthy = h;
          hub.setHealthy(h);
        }
        if (!h) {
          // No co-process: no tailer work, no batches; the audit logger queues nothing.
          sleep(RETRY_MS);
          continue;
        }
        int gen = supervisor.generation();
        if (gen != generation) {
          newCoprocess(gen);
        }
        if (tailer != null) {
          tailer.maybePoll(cycleStart);
        }
        hub.sweepHold(cycleStart);
        if (inflight == null) {
          build();
        }
        if (inflight == null) {
          heartbeat(cycleStart);
        }
        if (inflight == null && nothingSubscribed()) {
          persist(false);
          sleep(IDLE_MS - (System.currentTimeMillis() - cycleStart));
          continue;
        }
        if (inflight != null) {
          full = inflight.getEventsCount() >= batchMax;
          if (!deliver()) {
            sleep(RETRY_MS);
            continue;
          }
          delivered = true;
        }
        persist(false);
      } catch (InterruptedException e) {
        break;
      } catch (Throwable t) {
        LOG.warn("newtricks: event forwarder error: {}", t.toString());
      }
      if (!full) {
        try {
          if (inflight == null && !delivered) {
            waitForEvents();
          }
          sleep(lingerMs - (System.currentTimeMillis() - cycleStart));
        } catch (InterruptedException e) {
          break;
        }
      }
    }
  }

  /**
   * Nothing was queued this cycle: instead of looking again after the linger, waits until a
   * producer signals (then lingers from there, so a batch still gathers what arrives within
   * lingerMs), or until the next heartbeat, resume-point save, tailer check or sweep of the
   * audit repeat hold is due.
   */
  private void waitForEvents() throws InterruptedException {
    long now = System.currentTimeMillis();
    long until = Math.min(lastDeliverMs + HEARTBEAT_MS, hub.holdSweepDue());
    if (tailer != null) {
      until = Math.min(until, tailer.idleUntil(now));
      if (tailer.safeTxid() != persistedTxid) {
        until = Math.min(until, nextPersistAt);
      }
    }
    if (until - now <= lingerMs) {
      return; // due within the linger anyway
    }
    wakeup.await(until - now, this::arrived);
    if (Thread.interrupted()) {
      throw new InterruptedException();
    }
    if (arrived()) {
      sleep(lingerMs); // the linger starts with the first arrival
    }
  }

  /** An audit record or a journal chunk arrived. */
  private boolean arrived() {
    return hub.size() > 0 || (tailer != null && tailer.hasArrived());
  }

  /**
   * A co-process generation we have not delivered to: apply its subscription and send it,
   * first, every selected namespace event after the last durable txid.
   */
  private void newCoprocess(int gen) {
    generation = gen;
    inflight = null; // its namespace events are retained by the tailer and sent again
    io.newtricks.proto.v1.ConfigureResponse r = supervisor.configureResponse();
    applyFilter(r == null ? EventFilter.getDefaultInstance() : r.getEvents());
    if (tailer != null) {
      tailer.restartAfter(durableTxid);
      resumePending = true;
      resumeAfter = durableTxid;
    }
  }

  private void applyFilter(EventFilter f) {
    nextPersistAt = 0; // a new filter is saved at once (a restarted NameNode captures by it)
    hub.subscribe(f.getAuditCommandsList(), f.getAuditMinRepeats(), f.getAuditRepeatWindowMs());
    if (f.getAuditCommandsCount() == 0 && auditForwarderConfigured && !hintedAudit) {
      hintedAudit = true;
      LOG.info("newtricks: nothing subscribes to audit events; without "
          + "io.newtricks.hadoop.AuditForwarder in dfs.namenode.audit.loggers the NameNode "
          + "would not build an audit record per call (when its audit log is off)");
    }
    if (tailer != null) {
      tailer.setFilter(f.getNamespaceTypesList(), f.getNamespacePathPrefixesList());
    }
    LOG.info("newtricks: co-process subscribes to audit {}{} and namespace {} under {}",
        f.getAuditCommandsList(), f.getAuditMinRepeats() >= 2 && f.getAuditRepeatWindowMs() > 0
            ? " (once audited " + f.getAuditMinRepeats() + " times within "
                + f.getAuditRepeatWindowMs() + " ms)" : "",
        f.getNamespaceTypesList(),
        f.getNamespacePathPrefixesList().isEmpty() ? "/" : f.getNamespacePathPrefixesList());
  }

  /** No audit command and no namespace type is subscribed. */
  private boolean nothingSubscribed() {
    return hub.activeCount() == 0 && (tailer == null || !tailer.wantsAny());
  }

  private String filterKey() {
    return tailer == null ? "" : tailer.types() + "|" + Arrays.toString(tailer.prefixes());
  }

  /** Saves the resume point if it moved (at most every persistIntervalMs unless forced). */
  private void persist(boolean force) {
    if (tailer == null || stateFile == null) {
      return;
    }
    long now = System.currentTimeMillis();
    if (!force && now < nextPersistAt) {
      return;
    }
    // While nothing is subscribed the position only saves re-reading on a restart: it moves
    // with every edit, so it is saved (fsync) rarely then.
    nextPersistAt = now
        + (tailer.wantsAny() ? persistIntervalMs : Math.max(persistIntervalMs, IDLE_MS * 10));
    long safe = tailer.safeTxid();
    String fk = filterKey();
    if (safe < 0 || (safe == persistedTxid && fk.equals(persistedFilter))) {
      return;
    }
    try {
      new EventState(safe, tailer.types(), Arrays.asList(tailer.prefixes())).save(stateFile);
      persistedTxid = safe;
      persistedFilter = fk;
      metrics.persistedTxid.set(safe);
    } catch (Throwable t) {
      LOG.warn("newtricks: cannot save the event stream position to {}: {}", stateFile,
          t.toString());
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
    for (NamespaceEvent e : ns) {
      b.addEvents(Event.newBuilder().setNamespace(e));
    }
    for (AuditRecord r : audit) {
      b.addEvents(Event.newBuilder().setAudit(toProto(r)));
    }
    if (resumePending && !ns.isEmpty()) {
      long after = resumeAfter >= 0 ? resumeAfter : ns.get(0).getTxid() - 1;
      b.setResumeTxid(after + 1);
      resumePending = false;
    }
    inflight = b.setSeq(++seq).setAuditDroppedTotal(hub.dropped())
        .setNamespaceGapsTotal(metrics.namespaceGaps.value()).build();
    inflightNamespace = ns.size();
    inflightAudit = audit.size();
  }

  /**
   * Delivers an empty batch if nothing was delivered for HEARTBEAT_MS: its acknowledgement
   * carries the co-process's filter if it changed (and its durable txid, which a subscriber
   * with a cursor of its own may have moved since). A failure is not retried: the next cycle
   * sends another.
   */
  private void heartbeat(long now) {
    // (9/10: the idle loop wakes once per HEARTBEAT_MS, give or take a millisecond)
    if (now - lastDeliverMs < HEARTBEAT_MS * 9 / 10) {
      return;
    }
    ManagedChannel ch = supervisor.channel();
    if (ch == null) {
      return;
    }
    lastDeliverMs = now; // also after a failure: at most one attempt per HEARTBEAT_MS
    try {
      EventBatch empty = EventBatch.newBuilder().setSeq(seq)
          .setAuditDroppedTotal(hub.dropped())
          .setNamespaceGapsTotal(metrics.namespaceGaps.value()).build();
      DeliverAck ack = EventSinkGrpc.newBlockingStub(ch)
          .withDeadlineAfter(deliverTimeoutMs, TimeUnit.MILLISECONDS)
          .deliver(empty);
      metrics.heartbeats.incr();
      supervisor.answered();
      acknowledged(ack);
    } catch (RuntimeException e) {
      metrics.batchesFailed.incr();
      long t = System.currentTimeMillis();
      if (t - lastFailureLog > 10_000) {
        lastFailureLog = t;
        LOG.warn("newtricks: EventSink/Deliver heartbeat failed: {}", e.toString());
      }
    }
  }

  private void acknowledged(DeliverAck ack) {
    if (tailer != null) {
      tailer.acknowledge(ack.getLastTxid(), ack.getDurableTxid());
    }
    durableTxid = Math.max(durableTxid, ack.getDurableTxid());
    if (ack.hasFilter()) {
      applyFilter(ack.getFilter());
    }
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
      lastDeliverMs = System.currentTimeMillis();
      supervisor.answered();
      inflight = null;
      acknowledged(ack);
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
