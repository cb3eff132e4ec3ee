package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/jcmturner/gokrb5/v8/client"
	krbconfig "github.com/jcmturner/gokrb5/v8/config"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/spnego"
)

// Principals of a secure cluster (realm Realm). Users: alice and bob (plain users), svc (a
// proxy user allowed to act for alice, as hadoop.proxyuser.svc.* says), admin (a member of
// the supergroup through a static group mapping); hdfs is the daemons' own (super)user.
const (
	PrincipalHDFS      = "hdfs/localhost"      // NameNode and DataNodes (Hadoop RPC, SASL data transfer)
	PrincipalHTTP      = "HTTP/localhost"      // SPNEGO on the NameNode's web endpoints (WebHDFS)
	PrincipalNewtricks = "newtricks/localhost" // the co-processes' public APIs
)

// SecureUsers are the user principals a secure cluster's KDC holds.
var SecureUsers = []string{"alice", "bob", "svc", "admin"}

// Secure is the Kerberos and TLS material of a secure (Kerberized) cluster: a running KDC,
// a DataNode keystore made with the JDK's keytool, and a CA-signed certificate for the
// co-processes' public APIs. Apply puts it into a Config.
type Secure struct {
	KDC *KDC
	// Dir holds the keystore, the PEM files and ssl-server.xml (on the daemons' classpath).
	Dir string
	// CACert is the PEM CA certificate clients trust for the public APIs.
	CACert string
	// APICert and APIKey are the public APIs' certificate and key (PEM).
	APICert string
	APIKey  string
	// Keystore is the daemons' HTTPS keystore (JKS); StorePass its password.
	Keystore  string
	StorePass string
	// KeystoreCert is the keystore's self-signed certificate (PEM, localhost/127.0.0.1), for
	// Go clients of the daemons' HTTPS endpoints (e.g. the mirror's WebHDFS to dc-b).
	KeystoreCert string
}

// StartSecure starts a KDC under baseDir/kdc with the cluster's principals and makes the TLS
// material under baseDir/tls. java defaults to "java" (keytool is taken from its directory).
func StartSecure(ctx context.Context, baseDir, java string, detached bool) (*Secure, error) {
	if java == "" {
		java = "java"
	}
	baseDir = absPath(baseDir)
	principals := append([]string{PrincipalHDFS, PrincipalHTTP, PrincipalNewtricks}, SecureUsers...)
	kdc, err := StartKDC(ctx, filepath.Join(baseDir, "kdc"), java, "", detached, principals...)
	if err != nil {
		return nil, err
	}
	s := &Secure{KDC: kdc, Dir: filepath.Join(baseDir, "tls")}
	if err := s.makeTLS(java); err != nil {
		kdc.Stop()
		return nil, err
	}
	return s, nil
}

// Stop stops the KDC.
func (s *Secure) Stop() error { return s.KDC.Stop() }

func (s *Secure) makeTLS(java string) error {
	if err := os.RemoveAll(s.Dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(s.Dir, "classpath"), 0o700); err != nil {
		return err
	}
	pass := make([]byte, 12)
	if _, err := rand.Read(pass); err != nil {
		return err
	}
	s.StorePass = fmt.Sprintf("%x", pass)
	s.Keystore = filepath.Join(s.Dir, "datanode.jks")
	keytool := "keytool"
	if p, err := exec.LookPath(java); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if kt := filepath.Join(filepath.Dir(real), "keytool"); fileExists(kt) {
				keytool = kt
			}
		}
	}
	out, err := exec.Command(keytool, "-genkeypair", "-keystore", s.Keystore, "-storetype", "JKS",
		"-storepass", s.StorePass, "-keypass", s.StorePass, "-alias", "datanode", "-keyalg", "RSA",
		"-keysize", "2048", "-validity", "30", "-dname", "CN=localhost",
		"-ext", "SAN=dns:localhost,ip:127.0.0.1").CombinedOutput()
	if err != nil {
		return fmt.Errorf("keytool: %v\n%s", err, out)
	}
	s.KeystoreCert = filepath.Join(s.Dir, "datanode-cert.pem")
	out, err = exec.Command(keytool, "-exportcert", "-rfc", "-keystore", s.Keystore, "-storepass", s.StorePass,
		"-alias", "datanode", "-file", s.KeystoreCert).CombinedOutput()
	if err != nil {
		return fmt.Errorf("keytool -exportcert: %v\n%s", err, out)
	}
	sslServer := SiteXML(map[string]string{
		"ssl.server.keystore.location":    s.Keystore,
		"ssl.server.keystore.password":    s.StorePass,
		"ssl.server.keystore.keypassword": s.StorePass,
		"ssl.server.keystore.type":        "jks",
	})
	if err := os.WriteFile(filepath.Join(s.Dir, "classpath", "ssl-server.xml"), sslServer, 0o600); err != nil {
		return err
	}
	return s.makePEM()
}

// makePEM writes a CA and a certificate for localhost/127.0.0.1 signed by it.
func (s *Secure) makePEM() error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "newtricks test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(30 * 24 * time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	s.CACert, s.APICert, s.APIKey = filepath.Join(s.Dir, "ca.pem"), filepath.Join(s.Dir, "api.pem"), filepath.Join(s.Dir, "api-key.pem")
	for path, b := range map[string]*pem.Block{
		s.CACert:  {Type: "CERTIFICATE", Bytes: caDER},
		s.APICert: {Type: "CERTIFICATE", Bytes: leafDER},
		s.APIKey:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(path, pem.EncodeToMemory(b), 0o600); err != nil {
			return err
		}
	}
	return nil
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// Apply makes cfg a Kerberized cluster: kerberos authentication, block access tokens, SASL
// data transfer protection, HTTPS-only DataNodes, WebHDFS behind SPNEGO, the proxy-user and
// group rules the users above need, and the co-processes' Kerberos and TLS keys.
func (s *Secure) Apply(cfg *Config) {
	k := s.KDC
	core := map[string]string{
		"hadoop.security.authentication": "kerberos",
		"hadoop.rpc.protection":          "authentication",
		"hadoop.proxyuser.svc.hosts":     "*",
		"hadoop.proxyuser.svc.users":     "alice",
		// datanode-ext (principal newtricks/localhost) locates datasets and reads from its
		// peers for the offload readers it serves.
		"hadoop.proxyuser.newtricks.hosts":           "127.0.0.1,localhost",
		"hadoop.proxyuser.newtricks.users":           "alice,bob",
		"hadoop.user.group.static.mapping.overrides": "admin=supergroup;dr.who=;",
		// Web endpoints (WebHDFS: delegation tokens) need SPNEGO like RPC needs Kerberos; /jmx
		// stays open on the loopback-only web port because the harness polls it for readiness.
		"hadoop.http.authentication.type":                        "kerberos",
		"hadoop.http.authentication.kerberos.principal":          k.Principal(PrincipalHTTP),
		"hadoop.http.authentication.kerberos.keytab":             k.Keytab(PrincipalHTTP),
		"hadoop.http.authentication.kerberos.endpoint.whitelist": "/jmx",
		"hadoop.http.authentication.simple.anonymous.allowed":    "false",
	}
	hdfsKeys := map[string]string{
		"dfs.namenode.kerberos.principal":           k.Principal(PrincipalHDFS),
		"dfs.namenode.keytab.file":                  k.Keytab(PrincipalHDFS),
		"dfs.datanode.kerberos.principal":           k.Principal(PrincipalHDFS),
		"dfs.datanode.keytab.file":                  k.Keytab(PrincipalHDFS),
		"dfs.web.authentication.kerberos.principal": k.Principal(PrincipalHTTP),
		"dfs.web.authentication.kerberos.keytab":    k.Keytab(PrincipalHTTP),
		// HA: the JournalNodes (RPC from the NameNodes, SPNEGO for the edit segments the
		// standby tails) and the image transfer between the two NameNodes. Unused without HA.
		"dfs.journalnode.kerberos.principal":                 k.Principal(PrincipalHDFS),
		"dfs.journalnode.keytab.file":                        k.Keytab(PrincipalHDFS),
		"dfs.journalnode.kerberos.internal.spnego.principal": k.Principal(PrincipalHTTP),
		"dfs.namenode.kerberos.internal.spnego.principal":    k.Principal(PrincipalHTTP),
		"dfs.block.access.token.enable":                      "true",
		"dfs.data.transfer.protection":                       "authentication",
		// The NameNode's web UI stays plain HTTP (the harness reads its JMX); DataNodes must
		// be HTTPS-only to run secure without privileged ports.
		"dfs.http.policy": "HTTP_ONLY",
	}
	for _, prefix := range []string{"newtricks.namenode.ext", "newtricks.datanode.ext"} {
		hdfsKeys[prefix+".kerberos.principal"] = k.Principal(PrincipalNewtricks)
		hdfsKeys[prefix+".kerberos.keytab"] = k.Keytab(PrincipalNewtricks)
		hdfsKeys[prefix+".tls.cert"] = s.APICert
		hdfsKeys[prefix+".tls.key"] = s.APIKey
	}
	// datanode-ext's own calls to namenode-ext and its peers: TLS with this CA, Kerberos
	// through this KDC.
	hdfsKeys["newtricks.datanode.ext.client.tls.ca"] = s.CACert
	hdfsKeys["newtricks.datanode.ext.kerberos.krb5-conf"] = k.Krb5Conf
	cfg.CoreSite = mergedCopy(cfg.CoreSite, core)
	cfg.HDFSSite = mergedCopy(cfg.HDFSSite, hdfsKeys)
	prev := cfg.DataNodeSite
	cfg.DataNodeSite = func(i int) map[string]string {
		m := map[string]string{}
		if prev != nil {
			merge(m, prev(i))
		}
		m["dfs.http.policy"] = "HTTPS_ONLY"
		m["dfs.datanode.https.address"] = "127.0.0.1:0"
		return m
	}
	cfg.ExtraClasspath = append(append([]string(nil), cfg.ExtraClasspath...), filepath.Join(s.Dir, "classpath"))
	cfg.JavaOpts = append([]string{"-Djava.security.krb5.conf=" + k.Krb5Conf}, cfg.JavaOpts...)
}

func mergedCopy(base, over map[string]string) map[string]string {
	m := make(map[string]string, len(base)+len(over))
	merge(m, base)
	merge(m, over)
	return m
}

// Login returns a gokrb5 client logged in as principal ("alice") from its keytab.
func (s *Secure) Login(principal string) (*client.Client, error) {
	conf, err := krbconfig.Load(s.KDC.Krb5Conf)
	if err != nil {
		return nil, fmt.Errorf("krb5.conf: %w", err)
	}
	kt, err := keytab.Load(s.KDC.Keytab(principal))
	if err != nil {
		return nil, fmt.Errorf("keytab of %s: %w", principal, err)
	}
	cl := client.NewWithKeytab(principal, Realm, kt, conf, client.DisablePAFXFAST(true))
	if err := cl.Login(); err != nil {
		return nil, fmt.Errorf("kinit %s: %w", principal, err)
	}
	return cl, nil
}

// ClientOptions are colinmarc/hdfs options for c as principal, logged in from its keytab,
// with SASL data transfer protection.
func (s *Secure) ClientOptions(c *Cluster, principal string) (hdfs.ClientOptions, error) {
	cl, err := s.Login(principal)
	if err != nil {
		return hdfs.ClientOptions{}, err
	}
	return hdfs.ClientOptions{Addresses: c.NameNodeAddrs(), KerberosClient: cl,
		KerberosServicePrincipleName: PrincipalHDFS,
		DataTransferProtection:       hdfs.DataTransferProtectionAuthentication}, nil
}

// Client connects a Kerberized colinmarc/hdfs client to c as principal.
func (s *Secure) Client(c *Cluster, principal string) (*hdfs.Client, error) {
	o, err := s.ClientOptions(c, principal)
	if err != nil {
		return nil, err
	}
	cl, err := hdfs.NewClient(o)
	if err != nil {
		return nil, fmt.Errorf("hdfs client for %s as %s: %w", c.Name(), principal, err)
	}
	return cl, nil
}

// webHDFS calls the NameNode's WebHDFS with SPNEGO as principal.
func (s *Secure) webHDFS(ctx context.Context, c *Cluster, principal, method, query string) ([]byte, error) {
	cl, err := s.Login(principal)
	if err != nil {
		return nil, err
	}
	defer cl.Destroy()
	addr := c.NameNodeHTTPAddr()
	if c.HA() {
		i, err := c.ActiveNameNode(ctx)
		if err != nil {
			return nil, err
		}
		addr = c.NameNodes()[i].HTTPAddr
	}
	u := "http://" + addr + "/webhdfs/v1/?" + query
	req, err := http.NewRequestWithContext(ctx, method, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := spnego.NewClient(cl, &http.Client{Timeout: 10 * time.Second}, PrincipalHTTP).Do(req)
	if err != nil {
		return nil, fmt.Errorf("webhdfs %s as %s: %w", query, principal, err)
	}
	defer resp.Body.Close()
	var body []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		body = append(body, buf[:n]...)
		if err != nil {
			break
		}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("webhdfs %s as %s: HTTP %s: %s", query, principal, resp.Status, body)
	}
	return body, nil
}

// DelegationToken asks the NameNode (WebHDFS GETDELEGATIONTOKEN, SPNEGO) for an HDFS
// delegation token of principal, renewable by principal, in Hadoop's URL-safe string form.
func (s *Secure) DelegationToken(ctx context.Context, c *Cluster, principal string) (string, error) {
	body, err := s.webHDFS(ctx, c, principal, http.MethodGet, "op=GETDELEGATIONTOKEN&renewer="+url.QueryEscape(principal))
	if err != nil {
		return "", err
	}
	var r struct {
		Token struct {
			URLString string `json:"urlString"`
		} `json:"Token"`
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Token.URLString == "" {
		return "", fmt.Errorf("webhdfs GETDELEGATIONTOKEN: unexpected answer %s", body)
	}
	return r.Token.URLString, nil
}

// CancelDelegationToken cancels token (WebHDFS CANCELDELEGATIONTOKEN as principal).
func (s *Secure) CancelDelegationToken(ctx context.Context, c *Cluster, principal, token string) error {
	_, err := s.webHDFS(ctx, c, principal, http.MethodPut, "op=CANCELDELEGATIONTOKEN&token="+url.QueryEscape(token))
	return err
}

// Authentication returns the NameNode's hadoop.security.authentication ("simple" when unset)
// from its generated core-site.xml, for `cluster status`.
func (c *Cluster) Authentication() string {
	core := readSite(filepath.Join(c.confDir(NameNode), "core-site.xml"))
	if core == nil {
		return "unknown"
	}
	if v := core["hadoop.security.authentication"]; v != "" {
		return v
	}
	return "simple"
}

// readSite reads a Hadoop configuration file's properties; nil if it cannot.
func readSite(path string) map[string]string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var conf struct {
		Properties []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(b, &conf); err != nil {
		return nil
	}
	m := map[string]string{}
	for _, p := range conf.Properties {
		m[p.Name] = p.Value
	}
	return m
}
