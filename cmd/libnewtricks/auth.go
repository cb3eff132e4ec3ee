package main

/*
#include <stdint.h>
#include <stdlib.h>
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"unsafe"

	"github.com/jcmturner/gokrb5/v8/client"

	"github.com/newtricks/newtricks/internal/authn"
)

// Kerberos for the Python package's gRPC calls, with the Go client code the CLI uses
// (internal/authn), so there is one implementation of the SPNEGO side:
//
//	uint64_t ntx_auth_open(const char *cfg_json, size_t len, char **err);
//	    Log in to Kerberos from a keytab or a ticket cache. cfg_json: {"krb5_conf", "keytab",
//	    "principal", "ccache", "spn"} (authn.ClientConfig). Returns a handle > 0, or 0 with
//	    *err set.
//	int ntx_auth_header(uint64_t auth, char **value, char **err);
//	    A fresh value for the "authorization" gRPC metadata entry of one call
//	    ("Negotiate <base64 SPNEGO token>"; each token is good for one call). Free *value with
//	    ntx_free.
//	char *ntx_auth_principal(uint64_t auth);  The logged-in principal (free with ntx_free), or NULL.
//	int ntx_auth_close(uint64_t auth);        Destroys the login.

type authLogin struct {
	cl    *client.Client
	creds *authn.KerberosCredentials
}

var auths = struct {
	sync.Mutex
	next uint64
	m    map[uint64]*authLogin
}{m: map[uint64]*authLogin{}}

func authGet(h uint64) (*authLogin, error) {
	auths.Lock()
	defer auths.Unlock()
	a := auths.m[h]
	if a == nil {
		return nil, fmt.Errorf("%w: unknown or closed auth handle", errBadHandle)
	}
	return a, nil
}

//export ntx_auth_open
func ntx_auth_open(cfg *C.char, n C.size_t, errOut **C.char) C.uint64_t {
	if cfg == nil {
		cError(errOut, fmt.Errorf("%w: NULL config", errBadArgument))
		return 0
	}
	var c struct {
		Krb5Conf  string `json:"krb5_conf"`
		Keytab    string `json:"keytab"`
		Principal string `json:"principal"`
		CCache    string `json:"ccache"`
		SPN       string `json:"spn"`
	}
	if err := json.Unmarshal(C.GoBytes(unsafe.Pointer(cfg), C.int(n)), &c); err != nil {
		cError(errOut, fmt.Errorf("%w: auth config: %v", errBadArgument, err))
		return 0
	}
	cc := authn.ClientConfig{Krb5Conf: c.Krb5Conf, Keytab: c.Keytab, Principal: c.Principal, CCache: c.CCache, SPN: c.SPN}
	cl, creds, err := cc.KerberosLogin()
	if err != nil {
		cError(errOut, err)
		return 0
	}
	auths.Lock()
	auths.next++
	h := auths.next
	auths.m[h] = &authLogin{cl: cl, creds: creds}
	auths.Unlock()
	return C.uint64_t(h)
}

//export ntx_auth_header
func ntx_auth_header(h C.uint64_t, value **C.char, errOut **C.char) C.int {
	if value == nil {
		err := fmt.Errorf("%w: NULL pointer", errBadArgument)
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	*value = nil
	a, err := authGet(uint64(h))
	if err != nil {
		cError(errOut, err)
		return C.int(codeOf(err))
	}
	md, err := a.creds.GetRequestMetadata(context.Background())
	if err != nil {
		cError(errOut, err)
		return codeInternal
	}
	*value = C.CString(md[authn.MetadataKey])
	return codeOK
}

//export ntx_auth_principal
func ntx_auth_principal(h C.uint64_t) *C.char {
	a, err := authGet(uint64(h))
	if err != nil {
		return nil
	}
	return C.CString(a.cl.Credentials.CName().PrincipalNameString() + "@" + a.cl.Credentials.Realm())
}

//export ntx_auth_close
func ntx_auth_close(h C.uint64_t) C.int {
	auths.Lock()
	a := auths.m[uint64(h)]
	delete(auths.m, uint64(h))
	auths.Unlock()
	if a == nil {
		return C.int(codeOf(errBadHandle))
	}
	a.cl.Destroy()
	return codeOK
}
