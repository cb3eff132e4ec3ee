package dnext

import (
	"fmt"
	"os"
	"strings"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/nsclient"
)

// Prefix of every datanode-ext key in hdfs-site.xml.
const Prefix = "newtricks.datanode.ext"

// Keys of datanode-ext's client side (namenode-ext and peers).
const (
	// KeyNameNodeAPI: namenode-ext's public API address(es), host:port, comma-separated (one
	// per NameNode of an HA pair). Offload locates datasets through it, as the caller, and
	// learns where other DataNodes' datanode-ext listen from its directory; without it
	// offload sessions are refused.
	KeyNameNodeAPI = Prefix + ".namenode.api"
	// KeyNameNodePrincipal: namenode-ext's Kerberos service principal (_HOST: its host);
	// default datanode-ext's own principal pattern (<prefix>.kerberos.principal).
	KeyNameNodePrincipal = Prefix + ".namenode.api.principal"
	// KeyClientCA: PEM CA certificate(s) that sign namenode-ext's and the other datanode-ext's
	// API certificates; default the system's roots. With it (or with Kerberos) datanode-ext
	// talks TLS to namenode-ext.
	KeyClientCA = Prefix + ".client.tls.ca"
	// KeyKrb5Conf: krb5.conf for datanode-ext's own Kerberos login (its keytab and principal,
	// <prefix>.kerberos.*); default $KRB5_CONFIG, else /etc/krb5.conf.
	KeyKrb5Conf = Prefix + ".kerberos.krb5-conf"
)

// Config is datanode-ext's own configuration.
type Config struct {
	// MaxReadBytes (newtricks.datanode.ext.read.max.bytes, default 64 MiB) bounds the bytes one
	// Replicas.Read returns; larger replicas are refused with RESOURCE_EXHAUSTED.
	MaxReadBytes int64
	// NameNodeAPI (KeyNameNodeAPI) are namenode-ext's addresses.
	NameNodeAPI []string
	// NameNodePrincipal (KeyNameNodePrincipal), ClientCA (KeyClientCA), Krb5Conf (KeyKrb5Conf).
	NameNodePrincipal, ClientCA, Krb5Conf string
}

// ConfigFromConf reads and validates Config.
func ConfigFromConf(c coproc.Conf) (Config, error) {
	max, err := c.Int(Prefix+".read.max.bytes", 64<<20)
	if err != nil {
		return Config{}, err
	}
	krb5 := os.Getenv("KRB5_CONFIG")
	if krb5 == "" {
		krb5 = "/etc/krb5.conf"
	}
	cfg := Config{MaxReadBytes: max, NameNodePrincipal: c.String(KeyNameNodePrincipal, ""),
		ClientCA: c.String(KeyClientCA, ""), Krb5Conf: c.String(KeyKrb5Conf, krb5)}
	for _, a := range strings.Split(c.String(KeyNameNodeAPI, ""), ",") {
		if a = strings.TrimSpace(a); a != "" {
			cfg.NameNodeAPI = append(cfg.NameNodeAPI, a)
		}
	}
	return cfg, cfg.Validate()
}

// Validate checks ranges.
func (c Config) Validate() error {
	if c.MaxReadBytes < 1 || c.MaxReadBytes > 1<<30 {
		return fmt.Errorf("%w: %s.read.max.bytes=%d must be in [1, 1GiB]", coproc.ErrBadConfig, Prefix, c.MaxReadBytes)
	}
	for _, a := range c.NameNodeAPI {
		if !nsclient.ValidAddr(a) {
			return fmt.Errorf("%w: %s: %q is not host:port", coproc.ErrBadConfig, KeyNameNodeAPI, a)
		}
	}
	return nil
}
