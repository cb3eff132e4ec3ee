package io.newtricks.hadoop.supervise;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;

/** gRPC over unix domain sockets (Netty epoll), sharing one small daemon event loop per JVM. */
public final class UnixSockets {
  private static EventLoopGroup group;

  private UnixSockets() {}

  private static synchronized EventLoopGroup group() {
    if (group == null) {
      group = new EpollEventLoopGroup(2, new DefaultThreadFactory("newtricks-grpc-epoll", true));
    }
    return group;
  }

  /** A plaintext channel to a go-plugin child at "unix" path or "tcp" host:port. */
  public static ManagedChannel channel(String network, String address) {
    NettyChannelBuilder b;
    if (network.equals("unix")) {
      b = NettyChannelBuilder.forAddress(new DomainSocketAddress(address))
          .eventLoopGroup(group())
          .channelType(EpollDomainSocketChannel.class)
          // gRPC sets SO_KEEPALIVE, which a unix socket does not have (Netty warns per connection).
          .withOption(ChannelOption.SO_KEEPALIVE, null)
          // A unix path is no valid authority; go-plugin's server ignores it.
          .overrideAuthority("localhost");
    } else {
      b = NettyChannelBuilder.forTarget(address);
    }
    return b.usePlaintext().maxInboundMessageSize(64 << 20).build();
  }

  /** A server on a unix socket at path, on the same event loop. */
  public static NettyServerBuilder server(String path) {
    return NettyServerBuilder.forAddress(new DomainSocketAddress(path))
        .bossEventLoopGroup(group())
        .workerEventLoopGroup(group())
        .channelType(EpollServerDomainSocketChannel.class)
        .withChildOption(ChannelOption.SO_KEEPALIVE, null);
  }
}
