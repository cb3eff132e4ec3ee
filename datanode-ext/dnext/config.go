package dnext

import (
	"fmt"

	"github.com/newtricks/newtricks/internal/coproc"
)

// Prefix of every datanode-ext key in hdfs-site.xml.
const Prefix = "newtricks.datanode.ext"

// Config is datanode-ext's own configuration.
type Config struct {
	// MaxReadBytes (newtricks.datanode.ext.read.max.bytes, default 64 MiB) bounds the bytes one
	// Replicas.Read returns; larger replicas are refused with RESOURCE_EXHAUSTED.
	MaxReadBytes int64
}

// ConfigFromConf reads and validates Config.
func ConfigFromConf(c coproc.Conf) (Config, error) {
	max, err := c.Int(Prefix+".read.max.bytes", 64<<20)
	if err != nil {
		return Config{}, err
	}
	cfg := Config{MaxReadBytes: max}
	return cfg, cfg.Validate()
}

// Validate checks ranges.
func (c Config) Validate() error {
	if c.MaxReadBytes < 1 || c.MaxReadBytes > 1<<30 {
		return fmt.Errorf("%w: %s.read.max.bytes=%d must be in [1, 1GiB]", coproc.ErrBadConfig, Prefix, c.MaxReadBytes)
	}
	return nil
}
