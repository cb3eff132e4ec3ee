// Package testreq decides what a test does when something it needs from outside (test
// media, the ffmpeg CLI, the reference Python) is missing: under `make test` or
// `make xform-test`, which set NEWTRICKS_XFORM_MEDIA (and NEWTRICKS_CLUSTER_TESTS or
// NEWTRICKS_PYTHON), it fails, since a reference that is not there checks nothing; a plain
// `go test` by hand without that environment skips with the message.
package testreq

import (
	"fmt"
	"os"
	"testing"
)

// Required reports whether the environment says the real parts are supposed to be there.
func Required() bool {
	return os.Getenv("NEWTRICKS_XFORM_MEDIA") != "" || os.Getenv("NEWTRICKS_PYTHON") != "" || os.Getenv("NEWTRICKS_CLUSTER_TESTS") != ""
}

// Missing fails (Required) or skips t with the message.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("%s (required: NEWTRICKS_XFORM_MEDIA/NEWTRICKS_PYTHON/NEWTRICKS_CLUSTER_TESTS is set)", msg)
	}
	t.Skip(msg)
}
