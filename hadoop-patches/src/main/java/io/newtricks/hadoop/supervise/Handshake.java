package io.newtricks.hadoop.supervise;

/**
 * The line a go-plugin child prints on stdout once it listens:
 * {@code CORE-VERSION|APP-VERSION|NETWORK|ADDRESS|PROTOCOL[|SERVER-CERT]}.
 */
final class Handshake {
  /** go-plugin's core protocol version; the only one that exists. */
  static final int CORE_VERSION = 1;
  /** Our application protocol version, sent in PLUGIN_PROTOCOL_VERSIONS. */
  static final int APP_VERSION = 1;
  /** Magic cookie: key and value must equal the Go side's plugin.HandshakeConfig. */
  static final String COOKIE_KEY = "NEWTRICKS_PLUGIN";
  static final String COOKIE_VALUE = "hdfs-ext-v1";

  final int coreVersion;
  final int appVersion;
  final String network;  // "unix" or "tcp"
  final String address;  // socket path or host:port
  final String protocol; // "grpc"

  private Handshake(int core, int app, String network, String address, String protocol) {
    this.coreVersion = core;
    this.appVersion = app;
    this.network = network;
    this.address = address;
    this.protocol = protocol;
  }

  /** Parses and validates one handshake line; the message says what was wrong. */
  static Handshake parse(String line) {
    if (line == null) {
      throw new IllegalArgumentException("no handshake line (child closed stdout)");
    }
    String[] parts = line.trim().split("\\|", -1);
    if (parts.length < 4) {
      throw new IllegalArgumentException("malformed handshake line: " + abbreviate(line));
    }
    int core = parseInt(parts[0], "core version", line);
    int app = parseInt(parts[1], "app version", line);
    String network = parts[2];
    String address = parts[3];
    // go-plugin before 0.x omitted the protocol field; it then means net/rpc.
    String protocol = parts.length > 4 ? parts[4] : "netrpc";
    if (core != CORE_VERSION) {
      throw new IllegalArgumentException("unsupported go-plugin core version " + core);
    }
    if (app != APP_VERSION) {
      throw new IllegalArgumentException(
          "co-process speaks app protocol " + app + ", the hook speaks " + APP_VERSION);
    }
    if (!network.equals("unix") && !network.equals("tcp")) {
      throw new IllegalArgumentException("unsupported network " + network);
    }
    if (address.isEmpty()) {
      throw new IllegalArgumentException("empty address in handshake: " + abbreviate(line));
    }
    if (!protocol.equals("grpc")) {
      throw new IllegalArgumentException("co-process serves " + protocol + ", need grpc");
    }
    if (parts.length > 5 && !parts[5].isEmpty()) {
      throw new IllegalArgumentException("co-process requires AutoMTLS, which the hook does not do");
    }
    return new Handshake(core, app, network, address, protocol);
  }

  private static int parseInt(String s, String what, String line) {
    try {
      return Integer.parseInt(s.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("bad " + what + " in handshake: " + abbreviate(line));
    }
  }

  private static String abbreviate(String s) {
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }

  @Override
  public String toString() {
    return coreVersion + "|" + appVersion + "|" + network + "|" + address + "|" + protocol;
  }
}
