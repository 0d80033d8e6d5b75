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

package controllers

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/browserfleet/browserfleet/api/v1alpha1"
)

// Field indexes the controllers look objects up by. They are all set up here,
// once, for every controller of the manager.
const (
	// IndexAgentTaskSession indexes AgentTasks by the name of their session.
	IndexAgentTaskSession = "spec.sessionRef.name"
	// IndexBrowserSessionSecret indexes BrowserSessions by the names of the
	// Secrets they reference.
	IndexBrowserSessionSecret = "browserfleet.io/secret-refs"
	// IndexAgentTaskSecret indexes AgentTasks by the names of the Secrets
	// they reference.
	IndexAgentTaskSecret = "browserfleet.io/task-secret-refs"
)

// SetupIndexes registers the field indexes with the manager's cache.
func SetupIndexes(ctx context.Context, indexer client.FieldIndexer) error {
	err := indexer.IndexField(ctx, &v1alpha1.AgentTask{}, IndexAgentTaskSession, func(o client.Object) []string {
		return []string{o.(*v1alpha1.AgentTask).Spec.SessionRef.Name}
	})
	if err != nil {
		return fmt.Errorf("indexing %s: %w", IndexAgentTaskSession, err)
	}
	err = indexer.IndexField(ctx, &v1alpha1.BrowserSession{}, IndexBrowserSessionSecret, func(o client.Object) []string {
		return secretNames(sessionSecretRefs(&o.(*v1alpha1.BrowserSession).Spec))
	})
	if err != nil {
		return fmt.Errorf("indexing %s: %w", IndexBrowserSessionSecret, err)
	}
	err = indexer.IndexField(ctx, &v1alpha1.AgentTask{}, IndexAgentTaskSecret, func(o client.Object) []string {
		return secretNames(taskSecretRefs(&o.(*v1alpha1.AgentTask).Spec))
	})
	if err != nil {
		return fmt.Errorf("indexing %s: %w", IndexAgentTaskSecret, err)
	}
	return nil
}
