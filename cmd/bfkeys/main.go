/*
Copyright 2026 The browserfleet Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Command bfkeys creates, lists and revokes the API keys of browserfleet's
// /v1 API. A key belongs to one project, which is a namespace; see
// docs/api-keys.md.
//
//	bfkeys create --namespace NS [--description D] [--expires 720h]
//	bfkeys list   --namespace NS
//	bfkeys revoke --namespace NS --id ID
//
// It talks to the cluster of the current kubeconfig: --kubeconfig, else
// $KUBECONFIG, else the in-cluster config, else ~/.kube/config.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/browserfleet/browserfleet/server/apikey"
)

const usage = `usage:
  bfkeys create --namespace NS [--description D] [--expires 720h]
  bfkeys list   --namespace NS
  bfkeys revoke --namespace NS --id ID
Every command also takes --kubeconfig PATH.
`

// errUsage marks a command line error: exit status 2, as flag's.
var errUsage = errors.New("usage")

func main() {
	// controller-runtime's client logs nothing bfkeys' user needs, and
	// complains once if no logger is set.
	logf.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, errUsage):
		os.Exit(2)
	case err != nil:
		fmt.Fprintf(os.Stderr, "bfkeys: %v\n", err)
		os.Exit(1)
	}
}

// run runs one command. Usage errors are reported on stderr and returned as
// errUsage.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("bfkeys "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	// Binds --kubeconfig to the flag set; config.GetConfig reads it.
	config.RegisterFlags(fs)
	namespace := fs.String("namespace", "", "the project (namespace) of the keys; required")
	var (
		description string
		expires     time.Duration
		id          string
	)
	switch cmd {
	case "create":
		fs.StringVar(&description, "description", "", "what the key is for")
		fs.DurationVar(&expires, "expires", 0, "how long the key works, e.g. 720h; 0 means until revoked")
	case "list":
	case "revoke":
		fs.StringVar(&id, "id", "", "the id of the key to revoke; required")
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprintf(stderr, "bfkeys: unknown command %q\n%s", cmd, usage)
		return errUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bfkeys %s: unexpected arguments %q\n", cmd, fs.Args())
		return errUsage
	}
	if *namespace == "" {
		fmt.Fprintf(stderr, "bfkeys %s: --namespace is required\n", cmd)
		return errUsage
	}
	if cmd == "revoke" && id == "" {
		fmt.Fprintf(stderr, "bfkeys revoke: --id is required\n")
		return errUsage
	}
	if expires < 0 {
		fmt.Fprintf(stderr, "bfkeys create: --expires must not be negative\n")
		return errUsage
	}

	c, err := newClient()
	if err != nil {
		return err
	}
	switch cmd {
	case "create":
		var until *time.Time
		if expires > 0 {
			t := time.Now().Add(expires)
			until = &t
		}
		if err := apikey.CheckProject(ctx, c, *namespace); err != nil {
			return err
		}
		key, id, err := apikey.Create(ctx, c, *namespace, description, until)
		if err != nil {
			return err
		}
		// The key goes to stdout only, once; the reminder goes to stderr
		// so that `| awk '/^key:/{print $2}'` gets just the key.
		fmt.Fprintf(stdout, "id: %s\nkey: %s\n", id, key)
		fmt.Fprintln(stderr, "Store the key now: it cannot be shown again.")
		return nil
	case "list":
		infos, err := apikey.List(ctx, c, *namespace)
		if err != nil {
			return err
		}
		if len(infos) == 0 {
			fmt.Fprintf(stderr, "No API keys in namespace %s.\n", *namespace)
			return nil
		}
		return printInfos(stdout, infos)
	default: // revoke
		if err := apikey.Revoke(ctx, c, *namespace, id); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked API key %s in namespace %s\n", id, *namespace)
		return nil
	}
}

// newClient returns a client for the cluster of the current kubeconfig.
func newClient() (client.Client, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return c, nil
}

// printInfos prints keys as a table, kubectl style.
func printInfos(w io.Writer, infos []apikey.Info) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "ID\tDESCRIPTION\tCREATED\tEXPIRES")
	for _, info := range infos {
		expires := "never"
		if info.ExpiresAt != nil {
			expires = info.ExpiresAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", info.ID, oneLine(info.Description), info.CreatedAt.UTC().Format(time.RFC3339), expires)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("printing keys: %w", err)
	}
	return nil
}

// oneLine keeps a description made by hand, which may hold tabs or newlines,
// from breaking the table.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
