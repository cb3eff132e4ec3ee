// Command datanode-ext is the Go co-process the DataNode hook launches and supervises.
package main

import (
	"github.com/newtricks/newtricks/datanode-ext/dnext"
	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/extplugin"
)

func main() {
	log := extplugin.NewLogger("datanode-ext", "info")
	cp := coproc.New(dnext.Options, dnext.New(), log)
	extplugin.Serve("datanode-ext", log, cp.Register)
}
