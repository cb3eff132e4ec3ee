package siteconf

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Keys a client reads to find the namenode-ext of each NameNode.
const (
	// KeyAPI is namenode-ext's public API address (newtricks.namenode.ext.api.address). On a
	// NameNode it is where its namenode-ext listens; a client uses only its port, with the
	// host of each NameNode's RPC address, unless KeyAPI.<ns>.<id> names the address.
	KeyAPI = "newtricks.namenode.ext.api.address"
	// DefaultAPIPort is KeyAPI's port when it is not set (BUILDING.md's example).
	DefaultAPIPort = "9880"
	// DefaultRPCPort is the NameNode RPC port of an hdfs:// URI without one.
	DefaultRPCPort = "8020"
	// MaxNameNodes bounds the NameNodes of one nameservice (Hadoop allows up to five).
	MaxNameNodes = 16
)

// NameNode is one NameNode of a nameservice as its clients reach it.
type NameNode struct {
	// ID is the HA id (an entry of dfs.ha.namenodes.<ns>), "" without HA.
	ID string
	// RPC is the NameNode's RPC address (dfs.namenode.rpc-address[.<ns>.<id>]).
	RPC string
	// API is its namenode-ext's public API.
	API string
}

// NameService is a nameservice's NameNodes, in dfs.ha.namenodes order.
type NameService struct {
	// Name is the nameservice id ("" for a conf without HA).
	Name      string
	NameNodes []NameNode
}

// RPCs are the NameNodes' RPC addresses (colinmarc/hdfs's ClientOptions.Addresses).
func (n NameService) RPCs() []string {
	out := make([]string, len(n.NameNodes))
	for i, nn := range n.NameNodes {
		out[i] = nn.RPC
	}
	return out
}

// APIs are the NameNodes' namenode-ext addresses (apiclient.DialAll's).
func (n NameService) APIs() []string {
	out := make([]string, len(n.NameNodes))
	for i, nn := range n.NameNodes {
		out[i] = nn.API
	}
	return out
}

var nsID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$`)

// NameService resolves nameservice ns as a Hadoop client does (dfs.nameservices,
// dfs.ha.namenodes.<ns>, dfs.namenode.rpc-address.<ns>.<id>) and the namenode-ext API of each
// NameNode: newtricks.namenode.ext.api.address.<ns>.<id> when set (an address without a host
// gets the NameNode's RPC host), else the NameNode's RPC host with the port of
// newtricks.namenode.ext.api.address (default 9880). An empty ns is the one fs.defaultFS
// names (hdfs://<ns>), else the only entry of dfs.nameservices; a conf without nameservices
// is its one NameNode (fs.defaultFS or dfs.namenode.rpc-address).
func (c *Conf) NameService(ns string) (NameService, error) {
	services := c.List("dfs.nameservices")
	fsHost, fsPort := "", ""
	if u, err := url.Parse(c.Get("fs.defaultFS", "")); err == nil && u.Scheme == "hdfs" {
		fsHost, fsPort = u.Hostname(), u.Port()
	}
	if ns == "" {
		switch {
		case fsHost != "" && fsPort == "" && contains(services, fsHost):
			ns = fsHost
		case len(services) == 1:
			ns = services[0]
		case len(services) > 1:
			return NameService{}, fmt.Errorf("%w: %s: dfs.nameservices lists %s and fs.defaultFS names none of them: name the nameservice",
				ErrBadConf, c.Dir, strings.Join(services, ", "))
		default:
			return c.single(fsHost, fsPort)
		}
	}
	if !nsID.MatchString(ns) {
		return NameService{}, fmt.Errorf("%w: nameservice %q is not a nameservice id", ErrBadConf, ns)
	}
	if !contains(services, ns) {
		return NameService{}, fmt.Errorf("%w: %s: nameservice %q is not in dfs.nameservices (%q)", ErrBadConf, c.Dir, ns, strings.Join(services, ","))
	}
	ids := c.List("dfs.ha.namenodes." + ns)
	if len(ids) == 0 {
		// A federated nameservice without HA: one NameNode under the nameservice's suffix.
		rpc, err := c.rpc("dfs.namenode.rpc-address." + ns)
		if err != nil {
			return NameService{}, err
		}
		api, err := c.api(KeyAPI+"."+ns, rpc)
		if err != nil {
			return NameService{}, err
		}
		return NameService{Name: ns, NameNodes: []NameNode{{RPC: rpc, API: api}}}, nil
	}
	if len(ids) > MaxNameNodes {
		return NameService{}, fmt.Errorf("%w: dfs.ha.namenodes.%s lists %d NameNodes, at most %d", ErrBadConf, ns, len(ids), MaxNameNodes)
	}
	out := NameService{Name: ns}
	for _, id := range ids {
		rpc, err := c.rpc("dfs.namenode.rpc-address." + ns + "." + id)
		if err != nil {
			return NameService{}, err
		}
		api, err := c.api(KeyAPI+"."+ns+"."+id, rpc)
		if err != nil {
			return NameService{}, err
		}
		out.NameNodes = append(out.NameNodes, NameNode{ID: id, RPC: rpc, API: api})
	}
	return out, nil
}

// single is the one NameNode of a conf without nameservices.
func (c *Conf) single(fsHost, fsPort string) (NameService, error) {
	rpc := ""
	if c.Get("dfs.namenode.rpc-address", "") != "" {
		var err error
		if rpc, err = c.rpc("dfs.namenode.rpc-address"); err != nil {
			return NameService{}, err
		}
	} else if fsHost != "" {
		if fsPort == "" {
			fsPort = DefaultRPCPort
		}
		rpc = net.JoinHostPort(fsHost, fsPort)
	} else {
		return NameService{}, fmt.Errorf("%w: %s: no dfs.nameservices, hdfs:// fs.defaultFS or dfs.namenode.rpc-address: which NameNode?", ErrBadConf, c.Dir)
	}
	api, err := c.api("", rpc)
	if err != nil {
		return NameService{}, err
	}
	return NameService{NameNodes: []NameNode{{RPC: rpc, API: api}}}, nil
}

// rpc is key's value, a host:port with a host a client can dial.
func (c *Conf) rpc(key string) (string, error) {
	v := c.Get(key, "")
	if v == "" {
		return "", fmt.Errorf("%w: %s: %s is not set", ErrBadConf, c.Dir, key)
	}
	h, p, err := net.SplitHostPort(v)
	if err != nil || !validPort(p) {
		return "", fmt.Errorf("%w: %s: %s = %q is not host:port", ErrBadConf, c.Dir, key, v)
	}
	if unspecified(h) {
		return "", fmt.Errorf("%w: %s: %s = %q names no host a client can dial", ErrBadConf, c.Dir, key, v)
	}
	return v, nil
}

// api is the namenode-ext address of the NameNode at rpc: key's value when set (a missing
// host is rpc's), else rpc's host with KeyAPI's port.
func (c *Conf) api(key, rpc string) (string, error) {
	rpcHost, _, _ := net.SplitHostPort(rpc)
	v := ""
	if key != "" {
		v = c.Get(key, "")
	}
	if v == "" {
		// KeyAPI itself: on a NameNode's own conf it may name that NameNode's host; a client of
		// a nameservice takes only its port (one host cannot be every NameNode's).
		port := DefaultAPIPort
		if a := c.Get(KeyAPI, ""); a != "" {
			h, p, err := net.SplitHostPort(a)
			if err != nil || !validPort(p) {
				return "", fmt.Errorf("%w: %s: %s = %q is not [host]:port", ErrBadConf, c.Dir, KeyAPI, a)
			}
			if key == "" && !unspecified(h) {
				return a, nil // no HA: the one namenode-ext's address as written
			}
			port = p
		}
		return net.JoinHostPort(rpcHost, port), nil
	}
	h, p, err := net.SplitHostPort(v)
	if err != nil || !validPort(p) {
		return "", fmt.Errorf("%w: %s: %s = %q is not [host]:port", ErrBadConf, c.Dir, key, v)
	}
	if unspecified(h) {
		h = rpcHost
	}
	return net.JoinHostPort(h, p), nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n > 0 && n <= 65535
}

func unspecified(h string) bool {
	ip := net.ParseIP(h)
	return h == "" || (ip != nil && ip.IsUnspecified())
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// ConfDirEnv names the Hadoop client conf dir when none is given, as Hadoop's tools read it.
const ConfDirEnv = "HADOOP_CONF_DIR"

// LoadNameService reads nameservice ns from conf dir dir (empty: $HADOOP_CONF_DIR).
func LoadNameService(dir, ns string) (NameService, error) {
	if dir == "" {
		dir = os.Getenv(ConfDirEnv)
	}
	if dir == "" {
		return NameService{}, fmt.Errorf("%w: no conf dir: give the directory holding hdfs-site.xml or set $%s", ErrBadConf, ConfDirEnv)
	}
	c, err := Load(dir)
	if err != nil {
		return NameService{}, err
	}
	return c.NameService(ns)
}
