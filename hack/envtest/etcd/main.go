// Command etcd is etcd's server built from the etcdmain package at the
// version pinned in this go.mod, for envtest and the local dev stack.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
