/**
 * The NameNode's event stream to namenode-ext ({@link io.newtricks.hadoop.events.EventStream}):
 * the bounded audit queue the audit logger fills ({@link io.newtricks.hadoop.events.EventHub},
 * with the audit repeat hold), the namespace events the event journal captures ({@link
 * io.newtricks.hadoop.events.CaptureJournal}) or the inotify tailer polls, and the forwarder
 * that delivers both in batches and keeps the resume point. Nothing here blocks a Hadoop thread.
 */
package io.newtricks.hadoop.events;
