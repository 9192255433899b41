// CoreDNS for the test cluster (tests/k8s): upstream's server with only the plugins a
// cluster DNS needs here (no forward: the test cluster has no upstream resolver).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The order is CoreDNS's own (plugin.cfg): it decides the order a query passes the plugins.
func init() {
	dnsserver.Directives = []string{"ready", "health", "errors", "log", "cache", "kubernetes", "loop"}
}

func main() { coremain.Run() }
