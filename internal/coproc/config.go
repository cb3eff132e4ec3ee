package coproc

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// ErrBadConfig is wrapped by every configuration error.
var ErrBadConfig = errors.New("bad configuration")

// Conf is the flat key/value configuration the host pushes in Configure: the daemon's
// "newtricks.*" keys plus a few HDFS keys. Typed getters keep key parsing in one place.
type Conf map[string]string

// String returns the value of key, or def when the key is unset or empty.
func (c Conf) String(key, def string) string {
	if v, ok := c[key]; ok && v != "" {
		return v
	}
	return def
}

// Int returns key parsed as an integer, or def when unset.
func (c Conf) Int(key string, def int64) (int64, error) {
	v, ok := c[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not an integer", ErrBadConfig, key, v)
	}
	return n, nil
}

// Bool returns key parsed as a boolean, or def when unset.
func (c Conf) Bool(key string, def bool) (bool, error) {
	v, ok := c[key]
	if !ok || v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%w: %s=%q is not a boolean", ErrBadConfig, key, v)
	}
	return b, nil
}

// Duration returns key parsed as a Go duration ("10s"), or a bare number of milliseconds
// as Hadoop keys often are, or def when unset.
func (c Conf) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := c[key]
	if !ok || v == "" {
		return def, nil
	}
	if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q is not a duration", ErrBadConfig, key, v)
	}
	return d, nil
}
