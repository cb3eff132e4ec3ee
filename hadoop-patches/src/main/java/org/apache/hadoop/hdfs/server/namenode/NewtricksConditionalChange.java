package org.apache.hadoop.hdfs.server.namenode;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.EnumSet;
import org.apache.hadoop.fs.XAttr;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.hdfs.server.namenode.NameNode.OperationCategory;

/**
 * A conditional change of one file's replication factor and marker xattr, as one NameNode
 * operation: the factor is compared with the expected one and changed under a single hold of the
 * namesystem's write lock, so no other change (an admin's {@code setrep}) can land between the
 * check and the change. The edits are synced once, after the lock is released, as
 * FSNamesystem's own operations do.
 *
 * <p>It lives in the NameNode's package because the operations it composes
 * ({@code FSDirAttrOp.setReplication}, {@code FSDirXAttrOp.setXAttr/removeXAttr},
 * {@code FSNamesystem.getPermissionChecker/checkNameNodeSafeMode}) are package-private; they
 * were checked against the 3.4.2 byte code. The caller falls back to separate public
 * operations if this class cannot link against the running Hadoop ({@link LinkageError}).
 */
public final class NewtricksConditionalChange {
  private NewtricksConditionalChange() {}

  /** What happened. */
  public static final class Outcome {
    /** The factor found. */
    public final short before;
    /** The factor was not the expected one; nothing was changed. */
    public final boolean aborted;
    /** The factor was changed. */
    public final boolean changed;

    Outcome(short before, boolean aborted, boolean changed) {
      this.before = before;
      this.aborted = aborted;
      this.changed = changed;
    }
  }

  /**
   * Applies, as the calling user: unless {@code expect} is 0 or the file's factor, nothing
   * (aborted); otherwise {@code inflight} (if not null), the factor {@code replication} (if
   * positive and different), {@code settled} (if not null), then removes {@code remove} (if not
   * null, absent is fine), all under one hold of the write lock, then one edit-log sync.
   */
  public static Outcome apply(FSNamesystem fsn, String src, short expect, XAttr inflight,
      short replication, XAttr settled, XAttr remove) throws IOException {
    fsn.checkOperation(OperationCategory.WRITE);
    FSPermissionChecker pc = fsn.getPermissionChecker();
    FSDirectory fsd = fsn.getFSDirectory();
    EnumSet<XAttrSetFlag> flags = EnumSet.of(XAttrSetFlag.CREATE, XAttrSetFlag.REPLACE);
    boolean logged = false;
    Outcome out;
    try {
      fsn.writeLock();
      try {
        fsn.checkOperation(OperationCategory.WRITE);
        fsn.checkNameNodeSafeMode("Cannot set replication for " + src);
        INodesInPath iip = fsd.resolvePath(pc, src, FSDirectory.DirOp.WRITE);
        INode inode = iip.getLastINode();
        if (inode == null || !inode.isFile()) {
          throw new FileNotFoundException("File does not exist: " + src);
        }
        short cur = inode.asFile().getFileReplication();
        if (expect > 0 && cur != expect) {
          return new Outcome(cur, true, false);
        }
        if (inflight != null) {
          logged = true;
          FSDirXAttrOp.setXAttr(fsd, pc, src, inflight, flags, false);
        }
        boolean changed = false;
        if (replication > 0 && replication != cur) {
          logged = true;
          changed = FSDirAttrOp.setReplication(fsd, pc, fsn.getBlockManager(), src, replication);
        }
        if (settled != null) {
          logged = true;
          FSDirXAttrOp.setXAttr(fsd, pc, src, settled, flags, false);
        }
        if (remove != null) {
          try {
            logged = true;
            FSDirXAttrOp.removeXAttr(fsd, pc, src, remove, false);
          } catch (IOException e) {
            // Already absent: the goal is reached.
          }
        }
        out = new Outcome(cur, false, changed);
      } finally {
        fsn.writeUnlock("newtricksConditionalChange");
      }
    } finally {
      // Also after a failure part-way: what was logged is synced before the caller learns of it.
      if (logged) {
        fsn.getEditLog().logSync();
      }
    }
    return out;
  }
}
