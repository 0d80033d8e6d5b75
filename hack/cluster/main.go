// Command cluster runs a one-node Kubernetes cluster on this machine
// (docs/install.md, "A one-node cluster on this machine"): etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, containerd with
// runc and the CNI plugins, a kubelet, kube-proxy, kube-router's NetworkPolicy
// firewall and CoreDNS, all inside a network namespace it creates.
//
//	cluster up     start it in the background; returns when the node and DNS are ready
//	cluster down   stop it: no process, mount or network namespace is left
//	cluster load F import OCI image archives into the node's containerd
//	cluster image  write an OCI image archive of files (the cluster's own images)
//	cluster status say what runs
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// The cluster's addresses. All of them live in the network namespace
// nodeNetns or in the pods' namespaces inside it; the host holds only hostIP,
// its end of the veth pair to the node.
const (
	nodeNetns   = "bf-node"
	nodeName    = "bf-node"
	hostVeth    = "bf-host"
	hostIP      = "10.250.0.1"
	nodeIP      = "10.250.0.2"
	linkPrefix  = 30
	podCIDR     = "10.244.0.0/16"
	nodePodCIDR = "10.244.0.0/24"
	serviceCIDR = "10.96.0.0/16"
	apiServerIP = "10.96.0.1"
	dnsIP       = "10.96.0.10"
	apiPort     = 6443
	// cniNetwork names the CNI network; libcni's cache files carry it.
	cniNetwork = "bf-cluster"
)

// The cluster's own images, built by `cluster up` from bin/cluster.
const (
	pauseImage   = "browserfleet.local/pause:v1"
	tinyImage    = "browserfleet.local/tiny:v1"
	corednsImage = "browserfleet.local/coredns:v1.15.0"
)

// config is where things are; the Makefile passes every path.
type config struct {
	dir    string // the state directory: certs, data, logs, the kubeconfig
	assets string // envtest's binaries: kube-apiserver, etcd, kubectl
	bin    string // the cluster's own binaries: kubelet, ..., coredns, kube-router, tiny
}

func main() {
	if runtime.GOOS != "linux" {
		fail("the one-node cluster runs on Linux only")
	}
	if len(os.Args) < 2 {
		usage()
	}
	cmd, args := os.Args[1], os.Args[2:]
	fs := flag.NewFlagSet("cluster "+cmd, flag.ExitOnError)
	var c config
	fs.StringVar(&c.dir, "dir", ".cluster", "state directory")
	fs.StringVar(&c.assets, "assets", "bin/k8s/1.37.1-linux-amd64", "directory of kube-apiserver, etcd and kubectl")
	fs.StringVar(&c.bin, "bin", "bin/cluster", "directory of the cluster's binaries")
	timeout := fs.Duration("timeout", 5*time.Minute, "up: how long to wait for the node and DNS")
	keep := fs.Bool("keep", false, "up: leave what started running when the start fails (to look at it; cluster down stops it)")
	var imgOpts imageOptions
	if cmd == "image" {
		fs.StringVar(&imgOpts.out, "o", "", "image: the archive to write")
		fs.StringVar(&imgOpts.name, "name", "", "image: the image's name (registry/repo:tag)")
		fs.Var(&imgOpts.files, "file", "image: DEST=SRC, a file of the image (repeatable)")
		fs.Var(&imgOpts.entrypoint, "entrypoint", "image: an entrypoint argument (repeatable)")
		fs.IntVar(&imgOpts.user, "user", 65532, "image: the user it runs as")
	}
	_ = fs.Parse(args)
	for _, p := range []*string{&c.dir, &c.assets, &c.bin} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fail("%v", err)
		}
		*p = abs
	}

	var err error
	switch cmd {
	case "up":
		err = up(c, *timeout, *keep)
	case "down":
		err = down(c)
	case "load":
		err = load(c, fs.Args())
	case "image":
		err = writeImage(imgOpts)
	case "status":
		err = status(c)
	default:
		usage()
	}
	if err != nil {
		fail("%v", err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: cluster up|down|load ARCHIVE...|image|status [-dir DIR -assets DIR -bin DIR]")
	os.Exit(2)
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "cluster: "+format+"\n", a...)
	os.Exit(1)
}

func logf(format string, a ...any) {
	fmt.Printf("cluster: "+format+"\n", a...)
}
