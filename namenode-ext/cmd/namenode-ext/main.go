// Command namenode-ext is the Go co-process the NameNode hook launches and supervises.
package main

import (
	"google.golang.org/grpc"

	"github.com/newtricks/newtricks/internal/coproc"
	"github.com/newtricks/newtricks/internal/extplugin"
	"github.com/newtricks/newtricks/namenode-ext/nnext"
)

func main() {
	log := extplugin.NewLogger("namenode-ext", "info")
	ext := nnext.New()
	cp := coproc.New(nnext.Options, ext, log)
	extplugin.Serve("namenode-ext", log, func(s *grpc.Server) {
		cp.Register(s)
		ext.RegisterPlugin(s)
	})
}
