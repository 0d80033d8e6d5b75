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

package devstack

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	managerapp "github.com/browserfleet/browserfleet/cmd/manager/app"
	"github.com/browserfleet/browserfleet/server/apikey"
	"github.com/browserfleet/browserfleet/server/cdptoken"
)

// Names in Dir.
const (
	envFile    = "env"
	cdpKeyFile = "cdp-signing-key"
	// keyEnvVar is the env file's line that holds the API key.
	keyEnvVar = "BROWSERFLEET_API_KEY"
	// keyDescription marks the keys the dev stack made.
	keyDescription = "dev stack (make dev)"
)

// prepareState makes what the parts need in the control plane and in Dir:
// the project namespace, its API key, the env file, the cdpUrl key.
func (s *Stack) prepareState(ctx context.Context) error {
	scheme, err := managerapp.Scheme()
	if err != nil {
		return err
	}
	s.client, err = client.New(s.cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating a client: %w", err)
	}
	if err := s.ensureNamespace(ctx); err != nil {
		return err
	}
	if err := s.ensureAPIKey(ctx); err != nil {
		return err
	}
	if err := s.writeEnv(); err != nil {
		return err
	}
	return ensureCDPKey(s.cdpKeyPath())
}

func (s *Stack) cdpKeyPath() string { return filepath.Join(s.opts.Dir, cdpKeyFile) }

func (s *Stack) ensureNamespace(ctx context.Context) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.opts.Namespace}}
	if err := s.client.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the project namespace %s: %w", s.opts.Namespace, err)
	}
	return nil
}

// ensureAPIKey reuses the key of the env file while its Secret exists, and
// makes a new one otherwise: the plain key is nowhere else.
func (s *Stack) ensureAPIKey(ctx context.Context) error {
	if err := s.ensureProjectBinding(ctx); err != nil {
		return err
	}
	key, err := readKey(s.EnvPath())
	if err != nil {
		return err
	}
	if key != "" {
		ok, err := s.keyExists(ctx, key)
		if err != nil {
			return err
		}
		if ok {
			s.apiKey = key
			s.log.Info("reusing the api key", "namespace", s.opts.Namespace)
			return nil
		}
		s.log.Info("the api key of the env file is gone; making a new one", "namespace", s.opts.Namespace)
	}
	key, id, err := apikey.Create(ctx, s.client, s.opts.Namespace, keyDescription, nil)
	if err != nil {
		return err
	}
	s.apiKey = key
	s.log.Info("made an api key", "namespace", s.opts.Namespace, "id", id)
	return nil
}

// ensureProjectBinding marks the stack's namespace a project as the chart
// does, with a RoleBinding labelled apikey.LabelProject, so that bfkeys
// makes keys there. (The stack's API runs with the envtest admin's rights;
// the binding grants nothing of its own.)
func (s *Stack) ensureProjectBinding(ctx context.Context) error {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "browserfleet-api", Namespace: s.opts.Namespace, Labels: map[string]string{apikey.LabelProject: "true"}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "browserfleet-api"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "browserfleet-api", Namespace: s.opts.Namespace}},
	}
	if err := s.client.Create(ctx, rb); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("marking namespace %s a project: %w", s.opts.Namespace, err)
	}
	return nil
}

// keyExists reports whether a live key Secret of the project holds key's
// hash.
func (s *Stack) keyExists(ctx context.Context, key string) (bool, error) {
	var secrets corev1.SecretList
	err := s.client.List(ctx, &secrets, client.InNamespace(s.opts.Namespace), client.MatchingLabelsSelector{Selector: apikey.Selector()})
	if err != nil {
		return false, fmt.Errorf("listing the api keys of %s: %w", s.opts.Namespace, err)
	}
	hash := apikey.Hash(key)
	for _, sec := range secrets.Items {
		if string(sec.Data[apikey.DataHash]) == hash && !expired(&sec) {
			return true, nil
		}
	}
	return false, nil
}

func expired(sec *corev1.Secret) bool {
	v, ok := sec.Annotations[apikey.AnnotationExpiresAt]
	if !ok {
		return false
	}
	t, err := time.Parse(time.RFC3339, v)
	return err != nil || !t.After(time.Now())
}

// readKey reads the API key of an env file; "" when there is no file or no
// well-formed key in it.
func readKey(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("reading the env file: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		v, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "export "+keyEnvVar+"=")
		if ok && apikey.ParseKey(v) == nil {
			return v, nil
		}
	}
	return "", nil
}

// writeEnv writes the env file, for `source`.
func (s *Stack) writeEnv() error {
	var b strings.Builder
	b.WriteString("# The browserfleet dev stack (make dev): source this file.\n")
	fmt.Fprintf(&b, "export BROWSERFLEET_API_URL=%s\n", shellQuote(s.apiURL))
	fmt.Fprintf(&b, "export %s=%s\n", keyEnvVar, s.apiKey)
	fmt.Fprintf(&b, "export KUBECONFIG=%s\n", shellQuote(s.KubeconfigPath()))
	if err := writeFile(s.EnvPath(), []byte(b.String())); err != nil {
		return fmt.Errorf("writing the env file: %w", err)
	}
	return nil
}

// shellQuote quotes v for sh unless it needs none.
func shellQuote(v string) string {
	if strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:@%+=,") == "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// ensureCDPKey makes the cdpUrl signing key once, so that the cdpUrls handed
// out survive a restart.
func ensureCDPKey(path string) error {
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	key, err := cdptoken.GenerateKey()
	if err != nil {
		return err
	}
	if err := writeFile(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n")); err != nil {
		return fmt.Errorf("writing the cdpUrl signing key: %w", err)
	}
	return nil
}

// writeFile replaces path with data, readable by its owner only (they hold
// credentials), never leaving a half-written file.
func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(data); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
