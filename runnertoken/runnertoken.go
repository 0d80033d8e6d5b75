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

// Package runnertoken reads a session's runner token, for the API and the
// manager, which both call runners.
package runnertoken

import (
	"context"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
	"github.com/browserfleet/browserfleet/runner/rpc"
)

// ErrMissing says the session's runner token Secret is not (yet) there, or
// is not the one made for this session.
var ErrMissing = errors.New("the session's runner token is missing")

// Read returns the runner token of bs from its token Secret. reader should
// read past any cache: neither pod caches every session's token.
func Read(ctx context.Context, reader client.Reader, bs *v1alpha1.BrowserSession) (string, error) {
	key := types.NamespacedName{Namespace: bs.Namespace, Name: v1alpha1.RunnerTokenSecretName(bs.Name)}
	secret := &corev1.Secret{}
	if err := reader.Get(ctx, key, secret); err != nil {
		if apierrors.IsNotFound(err) {
			return "", ErrMissing
		}
		return "", fmt.Errorf("getting runner token Secret %s: %w", key, err)
	}
	// The Secret must be the one the controller made for this session,
	// not an older one of a session of the same name.
	if !metav1.IsControlledBy(secret, bs) {
		return "", ErrMissing
	}
	tok := strings.TrimSpace(string(secret.Data[rpc.TokenSecretKey]))
	if tok == "" {
		return "", ErrMissing
	}
	return tok, nil
}
