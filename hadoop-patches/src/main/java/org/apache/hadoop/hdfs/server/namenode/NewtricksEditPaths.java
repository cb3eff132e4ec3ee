package org.apache.hadoop.hdfs.server.namenode;

/**
 * Reads the path(s) of an edit-log op without translating it into inotify events: the newtricks
 * event journal uses it to skip, before any allocation, the ops outside the subscribed path
 * prefixes. In this package because FSEditLogOp's fields are package-private; it only reads
 * them, synchronously, on the thread that writes the op.
 */
public final class NewtricksEditPaths {
  private NewtricksEditPaths() {}

  /**
   * False if every path the op names is outside all prefixes; true if one is under a prefix,
   * or the op is of a kind this method does not know (then the caller filters the translated
   * events instead).
   */
  public static boolean mayMatch(FSEditLogOp op, String[] prefixes) {
    String a;
    String b = null;
    if (op instanceof FSEditLogOp.AddCloseOp) {
      a = ((FSEditLogOp.AddCloseOp) op).path;
    } else if (op instanceof FSEditLogOp.RenameOp) {
      a = ((FSEditLogOp.RenameOp) op).src;
      b = ((FSEditLogOp.RenameOp) op).dst;
    } else if (op instanceof FSEditLogOp.RenameOldOp) {
      a = ((FSEditLogOp.RenameOldOp) op).src;
      b = ((FSEditLogOp.RenameOldOp) op).dst;
    } else if (op instanceof FSEditLogOp.DeleteOp) {
      a = ((FSEditLogOp.DeleteOp) op).path;
    } else if (op instanceof FSEditLogOp.MkdirOp) {
      a = ((FSEditLogOp.MkdirOp) op).path;
    } else if (op instanceof FSEditLogOp.AppendOp) {
      a = ((FSEditLogOp.AppendOp) op).path;
    } else if (op instanceof FSEditLogOp.TruncateOp) {
      a = ((FSEditLogOp.TruncateOp) op).src;
    } else if (op instanceof FSEditLogOp.SymlinkOp) {
      a = ((FSEditLogOp.SymlinkOp) op).path;
    } else {
      return true;
    }
    if (a == null) {
      return true;
    }
    return under(a, prefixes) || (b != null && under(b, prefixes));
  }

  private static boolean under(String path, String[] prefixes) {
    for (String p : prefixes) {
      if (path.startsWith(p)) {
        return true;
      }
    }
    return false;
  }
}
