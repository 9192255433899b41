// The node's image registry for the test cluster (tests/k8s): upstream's registry server
// (CNCF Distribution) with the filesystem storage driver alone, so that the cloud storage
// drivers' SDKs are not built.
package main

import (
	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		panic(err)
	}
}
