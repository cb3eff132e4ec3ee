package doctor

import (
	"fmt"

	"github.com/newtricks/newtricks/internal/siteconf"
)

// Conf is a Hadoop configuration as the daemons read it (package siteconf).
type Conf = siteconf.Conf

// LoadConf reads core-site.xml (optional) and hdfs-site.xml (required) from dir.
func LoadConf(dir string) (*Conf, error) {
	c, err := siteconf.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadInput, err)
	}
	return c, nil
}
