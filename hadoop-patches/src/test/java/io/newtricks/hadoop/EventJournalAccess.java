package io.newtricks.hadoop;

import org.apache.hadoop.hdfs.server.namenode.FSEditLogOp;

/** Test access to EventJournal's package-private helpers from other packages. */
public final class EventJournalAccess {
  private EventJournalAccess() {}

  public static boolean outsidePrefixes(FSEditLogOp op, String[] prefixes) {
    return EventJournal.outsidePrefixes(op, prefixes);
  }
}
