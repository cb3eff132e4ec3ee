package main

import (
	"flag"
	"fmt"

	"github.com/colinmarc/hdfs/v2"

	"github.com/newtricks/newtricks/reader"
)

// datasetAuth is the dataset commands' credentials on a Kerberized cluster: the reader's
// (reader.Auth), so that index, show and read authenticate to HDFS (and read to namenode-ext
// and the datanode-ext nodes) exactly as a trainer's reader does.
type datasetAuth struct{ a reader.Auth }

func (d *datasetAuth) flags(fs *flag.FlagSet, apis bool) {
	fs.StringVar(&d.a.Keytab, "keytab", "", "log in to Kerberos from this keytab (with --principal, --krb5-conf)")
	fs.StringVar(&d.a.Principal, "principal", "", "Kerberos principal to log in as, e.g. alice@EXAMPLE.COM")
	fs.StringVar(&d.a.CCache, "ccache", "", "use the Kerberos ticket cache (kinit's) instead of a keytab")
	fs.StringVar(&d.a.Krb5Conf, "krb5-conf", "/etc/krb5.conf", "krb5.conf for the Kerberos login")
	fs.StringVar(&d.a.HDFSSPN, "hdfs-spn", "hdfs/_HOST", "the NameNode's principal (dfs.namenode.kerberos.principal)")
	fs.StringVar(&d.a.DataTransferProtection, "data-transfer-protection", "", "SASL protection of DataNode reads (dfs.data.transfer.protection; default authentication with Kerberos)")
	if apis {
		fs.StringVar(&d.a.CACert, "ca", "", "PEM CA certificate of the APIs' TLS certificates (secure clusters)")
		fs.StringVar(&d.a.SPN, "spn", "newtricks/_HOST", "namenode-ext's service principal (with Kerberos)")
		fs.StringVar(&d.a.NodeSPN, "node-spn", "", "the datanode-ext nodes' service principal (default: --spn's service on each node's host)")
	}
}

func (d *datasetAuth) kerberos() bool { return d.a.Keytab != "" || d.a.CCache != "" }

// hdfsClient connects to the NameNode: with Kerberos as the logged-in principal, else as user
// under simple authentication. The returned function releases the login.
func (d *datasetAuth) hdfsClient(nn, user string) (*hdfs.Client, func(), error) {
	noop := func() {}
	if !d.kerberos() {
		c, err := hdfs.NewClient(hdfs.ClientOptions{Addresses: []string{nn}, User: user})
		if err != nil {
			return nil, noop, fmt.Errorf("connect to %s: %w", nn, err)
		}
		return c, noop, nil
	}
	cc := d.a.ClientConfig
	cc.SPN = d.a.HDFSSPN // the only service this login is for
	cl, _, err := cc.KerberosLogin()
	if err != nil {
		return nil, noop, usagef("%v", err)
	}
	o, err := reader.KerberosHDFSOptions(cl, []string{nn}, d.a.HDFSSPN, d.a.DataTransferProtection)
	if err != nil {
		cl.Destroy()
		return nil, noop, usagef("%v", err)
	}
	c, err := hdfs.NewClient(o)
	if err != nil {
		cl.Destroy()
		return nil, noop, fmt.Errorf("connect to %s as %s: %w", nn, d.a.Principal, err)
	}
	return c, cl.Destroy, nil
}
