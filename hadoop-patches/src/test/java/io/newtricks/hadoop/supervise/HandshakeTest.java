package io.newtricks.hadoop.supervise;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import org.junit.Test;

public class HandshakeTest {
  @Test
  public void parsesUnixGrpcLine() {
    Handshake h = Handshake.parse("1|1|unix|/tmp/newtricks/plugin123|grpc|\n");
    assertEquals(1, h.coreVersion);
    assertEquals(1, h.appVersion);
    assertEquals("unix", h.network);
    assertEquals("/tmp/newtricks/plugin123", h.address);
    assertEquals("grpc", h.protocol);
  }

  @Test
  public void parsesTcpWithoutCertField() {
    Handshake h = Handshake.parse("1|1|tcp|127.0.0.1:1234|grpc");
    assertEquals("tcp", h.network);
    assertEquals("127.0.0.1:1234", h.address);
  }

  @Test
  public void rejectsBadLines() {
    String[][] cases = {
      {null, "no handshake"},
      {"hello world", "malformed"},
      {"2|1|unix|/s|grpc|", "core version"},
      {"1|2|unix|/s|grpc|", "app protocol 2"},
      {"1|1|udp|/s|grpc|", "network"},
      {"1|1|unix||grpc|", "empty address"},
      {"1|1|unix|/s|netrpc|", "need grpc"},
      {"1|1|unix|/s", "need grpc"},
      {"1|1|unix|/s|grpc|MIIBcert", "AutoMTLS"},
      {"x|1|unix|/s|grpc|", "bad core version"},
    };
    for (String[] c : cases) {
      try {
        Handshake.parse(c[0]);
        fail("accepted " + c[0]);
      } catch (IllegalArgumentException e) {
        assertTrue(c[0] + " -> " + e.getMessage(), e.getMessage().contains(c[1]));
      }
    }
  }
}
