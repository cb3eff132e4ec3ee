package main

import (
	"flag"
	"strings"

	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/apiclient"
	"github.com/newtricks/newtricks/internal/authn"
	"github.com/newtricks/newtricks/internal/siteconf"
)

// addrList is a flag that may repeat and takes comma-separated host:port entries.
type addrList []string

func (l *addrList) String() string { return strings.Join(*l, ",") }

func (l *addrList) Set(v string) error {
	a, err := apiclient.SplitAddrs(v)
	if err != nil {
		return err
	}
	*l = append(*l, a...)
	return nil
}

// apiTarget is how a client command names namenode-ext: --addr (one address, or a
// nameservice's namenode-ext addresses, comma-separated or repeated), or --nameservice and
// --conf (the nameservice's NameNodes in hdfs-site.xml, siteconf.NameService).
type apiTarget struct {
	addrs             addrList
	nameservice, conf string
}

const apiTargetUsage = `namenode-ext: --addr HOST:PORT (an HA pair: --addr A:PORT,B:PORT, or --addr repeated; calls
go to the active NameNode's namenode-ext and fail over as HDFS clients do), or --nameservice NS
[--conf DIR]: the nameservice's NameNodes from DIR/hdfs-site.xml (default $HADOOP_CONF_DIR),
each one's namenode-ext at newtricks.namenode.ext.api.address.NS.ID, else at the NameNode's
host with the port of newtricks.namenode.ext.api.address (9880). --conf alone: the
nameservice fs.defaultFS names.
`

func (t *apiTarget) register(fs *flag.FlagSet) {
	fs.Var(&t.addrs, "addr", "namenode-ext public API address host:port (several: comma-separated or repeated, an HA pair)")
	fs.StringVar(&t.nameservice, "nameservice", "", "HDFS nameservice whose NameNodes' namenode-ext to call (from --conf's hdfs-site.xml)")
	fs.StringVar(&t.conf, "conf", "", "Hadoop client conf dir for --nameservice (default $HADOOP_CONF_DIR)")
}

// resolve returns the namenode-ext addresses, comma-separated (apiclient.Dial's form).
func (t *apiTarget) resolve() (string, error) {
	ns, err := t.nameService()
	if err != nil {
		return "", err
	}
	if ns == nil {
		return t.addrs.String(), nil
	}
	return strings.Join(ns.APIs(), ","), nil
}

// nameService is the nameservice --nameservice/--conf name (nil with --addr).
func (t *apiTarget) nameService() (*siteconf.NameService, error) {
	switch {
	case len(t.addrs) > 0 && (t.nameservice != "" || t.conf != ""):
		return nil, usagef("--addr or --nameservice/--conf, not both")
	case len(t.addrs) > 0:
		return nil, nil
	case t.nameservice == "" && t.conf == "":
		return nil, usagef("--addr HOST:PORT[,HOST:PORT] or --nameservice NS [--conf DIR] is required")
	}
	ns, err := siteconf.LoadNameService(t.conf, t.nameservice)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return &ns, nil
}

// dialAPI connects to namenode-ext at addr (one host:port, or several comma-separated: a
// Failover connection) with a's credentials. One address gets a's options as before; with
// several, each address gets its own (authn.PerHost): TLS with its host as the server name
// and, under Kerberos, the service principal --spn with _HOST replaced by that host
// (newtricks/_HOST, as Hadoop names its daemons; an SPN without _HOST is used for every
// address). The returned function releases the Kerberos login after the connection closes.
func dialAPI(addr string, a authn.ClientConfig) (*apiclient.Conn, func(), error) {
	addrs, err := apiclient.SplitAddrs(addr)
	if err != nil {
		return nil, func() {}, usagef("%v", err)
	}
	if len(addrs) == 1 || (a.CACert == "" && !a.Authenticated()) {
		opts, logout, err := a.DialOptions()
		if err != nil {
			return nil, func() {}, usagef("%v", err)
		}
		conn, err := apiclient.DialAll(addrs, opts...)
		if err != nil {
			logout()
			return nil, func() {}, err
		}
		return conn, logout, nil
	}
	// Several addresses with TLS or credentials: DialOptions' checks, then options per host.
	if (a.Keytab != "" || a.CCache != "") && a.Token != "" {
		return nil, func() {}, usagef("%v: Kerberos or a token, not both", authn.ErrBadConfig)
	}
	if a.Authenticated() && a.CACert == "" {
		return nil, func() {}, usagef("%v: Kerberos and tokens need TLS: give the API's CA certificate", authn.ErrBadConfig)
	}
	tc, err := a.TLSConfig()
	if err != nil {
		return nil, func() {}, usagef("%v", err)
	}
	if a.Token != "" {
		if _, err := authn.DecodeToken(a.Token); err != nil {
			return nil, func() {}, usagef("%v", err)
		}
	}
	ph := &authn.PerHost{TLS: tc, Token: a.Token}
	logout := func() {}
	if a.Keytab != "" || a.CCache != "" {
		cl, _, err := a.KerberosLogin()
		if err != nil {
			return nil, func() {}, usagef("%v", err)
		}
		ph.Krb, logout = cl, cl.Destroy
	}
	conn, err := apiclient.DialConn(addrs, func(addr string) ([]grpc.DialOption, error) {
		return ph.Options(authn.HostOf(addr), a.CACert != "", a.SPN)
	})
	if err != nil {
		logout()
		return nil, func() {}, err
	}
	return conn, logout, nil
}
