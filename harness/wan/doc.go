// Package wan emulates a wide-area link between two "data centres" on loopback, for tests and
// benchmarks (the kernels here have no netem). A Relay is a SOCKS5 proxy: every connection
// made through it to a destination the Relay counts as remote crosses one emulated Link that
// adds a one-way delay to every byte in each direction (a connect costs one round trip, as a
// TCP handshake would) and caps the bandwidth shared by all connections, per direction.
// Connections to other destinations are forwarded without delay.
//
// Both sides of a comparison go through the same Relay: Go clients dial with Dialer (a SOCKS5
// client, usable as colinmarc/hdfs NamenodeDialFunc and DatanodeDialFunc), Java clients with
// Hadoop's org.apache.hadoop.net.SocksSocketFactory (hadoop.rpc.socket.factory.class.default
// and hadoop.socks.server).
package wan
