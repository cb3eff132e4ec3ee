// Package authn is the one place where a public API learns who its caller is and which HDFS
// user a call may act as.
//
// Every public gRPC server of the co-processes (namenode-ext, datanode-ext and every later
// service) is built with the interceptors of this package. An Authenticator turns the incoming
// call (its metadata, its TLS peer) into an Identity and stores a Caller in the context.
// Handlers never read a user name from a request and act on it directly: they call
//
//	user, err := authn.ActAs(ctx, req.GetUser())
//
// which returns the HDFS user the call acts as, or an error that the RPC edge maps to
// UNAUTHENTICATED or PERMISSION_DENIED. Under simple authentication (the Simple
// authenticator) the caller's claimed name is trusted exactly as HDFS trusts it under
// hadoop.security.authentication=simple; under Kerberos or delegation tokens the proven
// identity is the only user, and a different requested name is honoured only where Hadoop's
// proxy-user rules (hadoop.proxyuser.*) allow it, checked by the Impersonator the
// authenticator installed.
package authn
