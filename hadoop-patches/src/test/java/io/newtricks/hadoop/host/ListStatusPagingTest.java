package io.newtricks.hadoop.host;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.newtricks.hadoop.supervise.HookConf;
import io.newtricks.proto.v1.FileStatus;
import io.newtricks.proto.v1.ListStatusRequest;
import io.newtricks.proto.v1.ListStatusResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.protocol.DirectoryListing;
import org.apache.hadoop.hdfs.protocol.HdfsFileStatus;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.Test;

/**
 * ListStatus answers one page (issue 25 item 2): never more than newtricks.host.list.max-entries
 * entries, however large the directory, and the caller pages with start_after. Before, one call
 * gathered the whole directory into one answer inside the NameNode.
 */
public class ListStatusPagingTest {
  /** NameNode's own per-call limit in the fake (dfs.ls.limit), below the host's bound. */
  private static final int LS_LIMIT = 300;

  private static HdfsFileStatus entry(String name, long id) {
    return new HdfsFileStatus.Builder().length(1).isdir(false).replication(3)
        .blocksize(128 << 20).perm(FsPermission.getFileDefault()).owner("alice").group("g")
        .path(name.getBytes(StandardCharsets.UTF_8)).fileId(id).build();
  }

  /** A directory /d of n files f00000.. served LS_LIMIT at a time, as getListing does. */
  private static HostBoundsFixture withDirectory(Configuration conf, int n, AtomicInteger listings,
      List<String> users) {
    HostBoundsFixture fx = new HostBoundsFixture(conf);
    List<String> names = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      names.add(String.format("f%05d", i));
    }
    fx.answers.put("getListing", args -> {
      listings.incrementAndGet();
      users.add(UserGroupInformation.getCurrentUser().getShortUserName());
      String path = (String) args[0];
      byte[] after = (byte[]) args[1];
      if (path.equals("/d/f00007")) {
        return new DirectoryListing(new HdfsFileStatus[] {entry("", 7)}, 0);
      }
      if (!path.equals("/d")) {
        return null;
      }
      String a = new String(after, StandardCharsets.UTF_8);
      int from = 0;
      while (from < names.size() && names.get(from).compareTo(a) <= 0) {
        from++;
      }
      int to = Math.min(names.size(), from + LS_LIMIT);
      HdfsFileStatus[] part = new HdfsFileStatus[to - from];
      for (int i = from; i < to; i++) {
        part[i - from] = entry(names.get(i), 1000 + i);
      }
      return new DirectoryListing(part, names.size() - to);
    });
    return fx;
  }

  private static ListStatusResponse list(HostBoundsFixture fx, ListStatusRequest req)
      throws Exception {
    HostBoundsFixture.Answered<ListStatusResponse> a = new HostBoundsFixture.Answered<>();
    fx.service.listStatus(req, a);
    return a.get();
  }

  private static Status.Code code(HostBoundsFixture fx, ListStatusRequest req) throws Exception {
    HostBoundsFixture.Answered<ListStatusResponse> a = new HostBoundsFixture.Answered<>();
    fx.service.listStatus(req, a);
    return a.code();
  }

  @Test
  public void aRequestWithoutLimitGetsTheFirstPageOfAtMostTheBound() throws Exception {
    AtomicInteger listings = new AtomicInteger();
    List<String> users = new ArrayList<>();
    HostBoundsFixture fx = withDirectory(new Configuration(false), 2500, listings, users);
    assertEquals(HookConf.DEFAULT_LIST_MAX_ENTRIES, fx.hc.listMaxEntries);
    ListStatusResponse r = list(fx, ListStatusRequest.newBuilder().setPath("/d").setUser("alice").build());
    assertEquals(1000, r.getEntriesCount());
    assertTrue(r.getHasMore());
    assertEquals(1500, r.getRemaining());
    assertEquals("f00999", r.getLastName().toStringUtf8());
    assertEquals("/d/f00000", r.getEntries(0).getPath());
    // ceil(1000 / 300) getListing calls, not the whole directory's nine.
    assertEquals(4, listings.get());
    assertEquals(Arrays.asList("alice", "alice", "alice", "alice"), users);
  }

  @Test
  public void pagingVisitsEveryEntryOnce() throws Exception {
    AtomicInteger listings = new AtomicInteger();
    HostBoundsFixture fx = withDirectory(new Configuration(false), 2500, listings, new ArrayList<>());
    Set<String> seen = new HashSet<>();
    ByteString after = ByteString.EMPTY;
    int pages = 0;
    while (true) {
      ListStatusResponse r = list(fx, ListStatusRequest.newBuilder().setPath("/d").setUser("alice")
          .setStartAfter(after).setLimit(700).build());
      pages++;
      assertTrue(r.getEntriesCount() <= 700);
      for (FileStatus e : r.getEntriesList()) {
        assertTrue("twice: " + e.getPath(), seen.add(e.getPath()));
      }
      if (!r.getHasMore()) {
        assertEquals(0, r.getRemaining());
        break;
      }
      assertEquals(2500 - seen.size(), r.getRemaining());
      after = r.getLastName();
    }
    assertEquals(2500, seen.size());
    assertEquals(4, pages); // 700 + 700 + 700 + 400
  }

  @Test
  public void theLimitIsClampedToTheBound() throws Exception {
    Configuration conf = new Configuration(false);
    conf.setInt(HookConf.LIST_MAX_ENTRIES, 50);
    HostBoundsFixture fx = withDirectory(conf, 120, new AtomicInteger(), new ArrayList<>());
    ListStatusResponse r = list(fx, ListStatusRequest.newBuilder().setPath("/d").setUser("alice")
        .setLimit(1_000_000).build());
    assertEquals(50, r.getEntriesCount());
    assertTrue(r.getHasMore());
    assertEquals(70, r.getRemaining());
    r = list(fx, ListStatusRequest.newBuilder().setPath("/d").setUser("alice").setLimit(10).build());
    assertEquals(10, r.getEntriesCount());
    assertEquals("f00009", r.getLastName().toStringUtf8());
    assertEquals(110, r.getRemaining());
    // The last page, exactly full: no more.
    r = list(fx, ListStatusRequest.newBuilder().setPath("/d").setUser("alice")
        .setStartAfter(ByteString.copyFromUtf8("f00069")).build());
    assertEquals(50, r.getEntriesCount());
    assertFalse(r.getHasMore());
  }

  @Test
  public void aFileAndMissingPathsAnswerAsBefore() throws Exception {
    HostBoundsFixture fx = withDirectory(new Configuration(false), 10, new AtomicInteger(), new ArrayList<>());
    ListStatusResponse r = list(fx, ListStatusRequest.newBuilder().setPath("/d/f00007").setUser("alice").build());
    assertEquals(1, r.getEntriesCount());
    assertEquals("/d/f00007", r.getEntries(0).getPath());
    assertFalse(r.getHasMore());
    assertEquals(Status.Code.NOT_FOUND,
        code(fx, ListStatusRequest.newBuilder().setPath("/nope").setUser("alice").build()));
    r = list(fx, ListStatusRequest.newBuilder().setPath("/d").setUser("alice").build());
    assertEquals(10, r.getEntriesCount());
    assertFalse(r.getHasMore());
  }

  @Test
  public void badPagingArgumentsAreRefusedBeforeListing() throws Exception {
    AtomicInteger listings = new AtomicInteger();
    HostBoundsFixture fx = withDirectory(new Configuration(false), 10, listings, new ArrayList<>());
    assertEquals(Status.Code.INVALID_ARGUMENT, code(fx, ListStatusRequest.newBuilder()
        .setPath("/d").setUser("alice").setLimit(-1).build()));
    byte[] huge = new byte[8001];
    Arrays.fill(huge, (byte) 'a');
    assertEquals(Status.Code.INVALID_ARGUMENT, code(fx, ListStatusRequest.newBuilder()
        .setPath("/d").setUser("alice").setStartAfter(ByteString.copyFrom(huge)).build()));
    assertEquals(Status.Code.PERMISSION_DENIED, code(fx, ListStatusRequest.newBuilder()
        .setPath("/d").setService(true).build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, code(fx, ListStatusRequest.newBuilder()
        .setPath("/d").build()));
    assertEquals(0, listings.get());
  }
}
