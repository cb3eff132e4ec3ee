package io.newtricks.hadoop.events;

import org.apache.hadoop.hdfs.server.namenode.FSEditLogOp;

/** Test access to CaptureJournal's package-private helpers from other packages. */
public final class EventJournalAccess {
  private EventJournalAccess() {}

  public static boolean outsidePrefixes(FSEditLogOp op, String[] prefixes) {
    return CaptureJournal.outsidePrefixes(op, prefixes);
  }
}
