package io.newtricks.hadoop;

import io.newtricks.hadoop.events.CaptureJournal;
import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.protocol.NamespaceInfo;

/**
 * The event journal, by the name admins configure:
 * {@code dfs.namenode.edits.journal-plugin.newtricks=io.newtricks.hadoop.EventJournal} and
 * {@code newtricks:///events} added to {@code dfs.namenode.edits.dir} (never to
 * {@code dfs.namenode.edits.dir.required}). An edit-log journal that stores nothing: it hands the
 * namespace events namenode-ext subscribed to over to the event forwarder as the NameNode syncs
 * its edits. The code is {@link CaptureJournal}, beside the capture it feeds; this class only
 * keeps the configured name and the constructor FSEditLog looks up by reflection.
 */
public class EventJournal extends CaptureJournal {
  /** Scheme of the journal's URI in dfs.namenode.edits.dir. */
  public static final String SCHEME = "newtricks";

  public EventJournal(Configuration conf, URI uri, NamespaceInfo nsInfo) {
    super(conf, uri, nsInfo);
  }
}
