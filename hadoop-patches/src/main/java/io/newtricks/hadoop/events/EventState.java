package io.newtricks.hadoop.events;

import io.newtricks.proto.v1.NamespaceEvent;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;

/**
 * What the NameNode hook keeps across restarts (newtricks.events.state.file): the txid up to
 * which the co-process made every namespace event durable, and what it subscribed to. A
 * restarted NameNode resumes the stream right after that txid, re-reading its own finalized
 * edit-log segments. Written atomically (temp file, fsync, rename).
 */
final class EventState {
  final long durableTxid;
  final List<NamespaceEvent.Type> types;
  final List<String> prefixes;

  EventState(long durableTxid, Collection<NamespaceEvent.Type> types, Collection<String> prefixes) {
    this.durableTxid = durableTxid;
    this.types = new ArrayList<>(types);
    this.prefixes = new ArrayList<>(prefixes);
  }

  /** The saved state, or null if there is none. */
  static EventState load(File f) throws IOException {
    if (!f.isFile()) {
      return null;
    }
    Properties p = new Properties();
    try (InputStream in = new FileInputStream(f)) {
      p.load(in);
    }
    long txid;
    try {
      txid = Long.parseLong(p.getProperty("durable.txid", "-1").trim());
    } catch (NumberFormatException e) {
      throw new IOException(f + ": durable.txid is not a number: " + e.getMessage());
    }
    List<NamespaceEvent.Type> types = new ArrayList<>();
    for (String s : split(p.getProperty("namespace.types", ""), ",")) {
      try {
        types.add(NamespaceEvent.Type.valueOf(s));
      } catch (IllegalArgumentException e) {
        throw new IOException(f + ": unknown namespace type " + s);
      }
    }
    return new EventState(txid, types, split(p.getProperty("namespace.prefixes", ""), "\n"));
  }

  void save(File f) throws IOException {
    File dir = f.getAbsoluteFile().getParentFile();
    if (dir != null && !dir.isDirectory() && !dir.mkdirs() && !dir.isDirectory()) {
      throw new IOException("cannot create " + dir);
    }
    Properties p = new Properties();
    p.setProperty("durable.txid", Long.toString(durableTxid));
    StringBuilder t = new StringBuilder();
    for (NamespaceEvent.Type x : types) {
      t.append(t.length() > 0 ? "," : "").append(x.name());
    }
    p.setProperty("namespace.types", t.toString());
    // Prefixes are paths: '\n' cannot occur in an HDFS path, so it separates them safely.
    p.setProperty("namespace.prefixes", String.join("\n", prefixes));
    File tmp = new File(f.getPath() + ".tmp");
    try (FileOutputStream out = new FileOutputStream(tmp)) {
      p.store((OutputStream) out, "newtricks NameNode hook: event stream position");
      out.getFD().sync();
    }
    Files.move(tmp.toPath(), f.toPath(), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  private static List<String> split(String s, String sep) {
    List<String> out = new ArrayList<>();
    for (String x : s.split(sep)) {
      if (!x.isEmpty()) {
        out.add(sep.equals(",") ? x.trim() : x);
      }
    }
    return out;
  }
}
