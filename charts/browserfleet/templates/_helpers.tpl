{{/*
Names. The full name is at most 40 characters, so that the names made from
it (bf-apikey-<fullname>-bootstrap, <fullname>-leader-election, ...) stay
within 63.
*/}}
{{- define "browserfleet.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "browserfleet.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "browserfleet.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels. Call the component ones with (dict "root" $ "component" "manager").
The manager selects the pods and Secrets it made by
app.kubernetes.io/managed-by=browserfleet; the chart's objects carry Helm's
value instead, so they never fall into its cache.
*/}}
{{- define "browserfleet.labels" -}}
helm.sh/chart: {{ include "browserfleet.chart" . }}
app.kubernetes.io/name: {{ include "browserfleet.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: browserfleet
{{- end }}

{{- define "browserfleet.componentLabels" -}}
{{ include "browserfleet.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "browserfleet.selectorLabels" -}}
app.kubernetes.io/name: {{ include "browserfleet.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/*
Images: repository, then @digest or :tag (the chart's appVersion when empty).
*/}}
{{- define "browserfleet.image" -}}
{{- $img := .image }}
{{- if $img.digest }}
{{- printf "%s@%s" $img.repository $img.digest }}
{{- else }}
{{- printf "%s:%s" $img.repository (default .root.Chart.AppVersion $img.tag) }}
{{- end }}
{{- end }}

{{/*
Object names.
*/}}
{{- define "browserfleet.managerName" -}}
{{- printf "%s-manager" (include "browserfleet.fullname" .) }}
{{- end }}

{{- define "browserfleet.apiName" -}}
{{- printf "%s-api" (include "browserfleet.fullname" .) }}
{{- end }}

{{- define "browserfleet.cdpSigningKeySecretName" -}}
{{- default (printf "%s-cdp-signing-key" (include "browserfleet.fullname" .)) .Values.api.cdpSigningKey.existingSecret }}
{{- end }}

{{/* The id of the bootstrap key: its Secret is bf-apikey-<id>. */}}
{{- define "browserfleet.bootstrapKeyID" -}}
{{- printf "%s-bootstrap" (include "browserfleet.fullname" .) }}
{{- end }}

{{/* The Secret that keeps a generated bootstrap key's value. */}}
{{- define "browserfleet.bootstrapKeyValueSecretName" -}}
{{- printf "%s-bootstrap-api-key" (include "browserfleet.fullname" .) }}
{{- end }}

{{- define "browserfleet.bootstrapKeyNamespace" -}}
{{- default .Release.Namespace .Values.apiKeys.bootstrap.namespace }}
{{- end }}

{{/*
The project namespaces, as a list: projects.namespaces and the bootstrap
key's (a key counts only in a project). Each gets the API's Role and the
runner NetworkPolicy.
*/}}
{{- define "browserfleet.projectNamespaces" -}}
{{- $list := .Values.projects.namespaces }}
{{- if or (not $list) .Values.apiKeys.bootstrap.enabled }}
{{- $list = append $list (include "browserfleet.bootstrapKeyNamespace" .) }}
{{- end }}
{{- toJson (uniq $list) }}
{{- end }}

{{/* The API's quota flags: the manager's Configuration has the same limits. */}}
{{- define "browserfleet.quotaArgs" -}}
{{- $q := .Values.projects.quota }}
- {{ printf "--quota-concurrent-sessions=%d" (int64 $q.concurrentSessions) | quote }}
- {{ printf "--quota-live-sessions=%d" (int64 $q.liveSessions) | quote }}
{{- range $ns, $o := $q.overrides }}
{{- $parts := list }}
{{- with $o.concurrentSessions }}{{ $parts = append $parts (printf "concurrentSessions:%d" (int64 .)) }}{{ end }}
{{- with $o.liveSessions }}{{ $parts = append $parts (printf "liveSessions:%d" (int64 .)) }}{{ end }}
- {{ printf "--project-quota=%s=%s" $ns (join "," $parts) | quote }}
{{- end }}
{{- end }}

{{/*
The manager's Configuration file (api/config/v1alpha1, docs/configuration.md),
made from the runner, sessions, projects.quota and manager.task* values. The
manager validates it again when it starts.
*/}}
{{- define "browserfleet.managerConfig" -}}
{{- $r := .Values.runner }}
{{- $runner := dict "image" (include "browserfleet.image" (dict "root" . "image" $r.image)) "imagePullPolicy" $r.image.pullPolicy }}
{{- with $r.command }}{{ $_ := set $runner "command" . }}{{ end }}
{{- with $r.args }}{{ $_ := set $runner "args" . }}{{ end }}
{{- $_ := set $runner "resources" $r.resources }}
{{- $_ := set $runner "shmSize" $r.shmSize }}
{{- $_ := set $runner "tmpSize" $r.tmpSize }}
{{- $_ := set $runner "runAsUser" (int64 $r.runAsUser) }}
{{- $_ := set $runner "terminationGracePeriodSeconds" (int64 $r.terminationGracePeriodSeconds) }}
{{- $_ := set $runner "forceDeleteAfter" $r.forceDeleteAfter }}
{{- with $r.nodeSelector }}{{ $_ := set $runner "nodeSelector" . }}{{ end }}
{{- with $r.tolerations }}{{ $_ := set $runner "tolerations" . }}{{ end }}
{{- with $r.runtimeClassName }}{{ $_ := set $runner "runtimeClassName" . }}{{ end }}
{{- $regions := dict "nodeLabel" $r.regions.nodeLabel }}
{{- with $r.regions.accepted }}{{ $_ := set $regions "accepted" . }}{{ end }}
{{- with $r.regions.mappings }}{{ $_ := set $regions "mappings" . }}{{ end }}
{{- $_ := set $runner "regions" $regions }}
{{- with $r.modelBaseURLs }}{{ $_ := set $runner "modelBaseURLs" . }}{{ end }}
{{- with $r.allowedExecutables }}{{ $_ := set $runner "allowedExecutables" . }}{{ end }}
{{- $egress := dict }}
{{- with $r.egress.allowCIDRs }}{{ $_ := set $egress "allowCIDRs" . }}{{ end }}
{{- with $r.egress.clusterCIDRs }}{{ $_ := set $egress "clusterCIDRs" . }}{{ end }}
{{- with $egress }}{{ $_ := set $runner "egress" . }}{{ end }}
{{- if .Values.search.provider }}
{{- $_ := set $runner "searchURL" (include "browserfleet.searchRelayURL" .) }}
{{- end }}
{{- $_ := set $runner "servicesURL" (include "browserfleet.servicesURL" .) }}
{{- if include "browserfleet.gatewayEnabled" . }}
{{- $_ := set $runner "modelGateway" true }}
{{- end }}
{{- if and .Values.tracing.endpoint .Values.tracing.runners }}
{{- $_ := set $runner "otlpEndpoint" .Values.tracing.endpoint }}
{{- end }}
{{- $q := .Values.projects.quota }}
{{- $quota := dict "concurrentSessions" (int64 $q.concurrentSessions) "liveSessions" (int64 $q.liveSessions) }}
{{- $projects := list }}
{{- range $ns, $o := $q.overrides }}
{{- $p := dict "namespace" $ns }}
{{- with $o.concurrentSessions }}{{ $_ := set $p "concurrentSessions" (int64 .) }}{{ end }}
{{- with $o.liveSessions }}{{ $_ := set $p "liveSessions" (int64 .) }}{{ end }}
{{- $projects = append $projects $p }}
{{- end }}
{{- with $projects }}{{ $_ := set $quota "projects" . }}{{ end }}
{{- $s := .Values.sessions }}
{{- $sessions := dict "defaultTimeout" $s.defaultTimeout "maxTimeout" $s.maxTimeout "ttlAfterEnded" $s.ttlAfterEnded "startupTimeout" $s.startupTimeout "secretWait" $s.secretWait }}
{{- $tasks := dict "sessionWait" .Values.manager.taskSessionWait "defaultActiveDeadline" .Values.manager.taskDefaultActiveDeadline "maxRunning" (int64 .Values.manager.taskMaxRunning) }}
{{- toYaml (dict "apiVersion" "config.browserfleet.io/v1alpha1" "kind" "Configuration" "runner" $runner "sessions" $sessions "quota" $quota "tasks" $tasks) | trim }}
{{- end }}

{{/* The API's search relay, as runners reach it: the runners Service. */}}
{{- define "browserfleet.searchRelayURL" -}}
{{- printf "http://%s-runners.%s.svc:%d/runner/v1/search" (include "browserfleet.apiName" .) .Release.Namespace (int .Values.search.runnerPort) }}
{{- end }}

{{/*
The API's runner listener, as runners reach it (the manager's
runner.servicesURL): the runners Service. The cache's and the gateway's
runner paths are under it.
*/}}
{{- define "browserfleet.servicesURL" -}}
{{- printf "http://%s-runners.%s.svc:%d" (include "browserfleet.apiName" .) .Release.Namespace (int .Values.search.runnerPort) }}
{{- end }}

{{/* The Redis the release runs (cache.redis.deploy). */}}
{{- define "browserfleet.redisName" -}}
{{- printf "%s-redis" (include "browserfleet.fullname" .) }}
{{- end }}

{{/* The cache's Redis, host:port, as the API reaches it; empty: none. */}}
{{- define "browserfleet.cacheRedisAddress" -}}
{{- $r := .Values.cache.redis }}
{{- if and $r.deploy $r.address }}
{{- fail "cache.redis.deploy runs a Redis of the release: leave cache.redis.address empty, or set deploy false to use the Redis at that address" }}
{{- end }}
{{- if $r.deploy }}
{{- printf "%s.%s.svc:6379" (include "browserfleet.redisName" .) .Release.Namespace }}
{{- else }}
{{- $r.address }}
{{- end }}
{{- end }}

{{/* The Secret and key of the cache Redis's password; empty: none. */}}
{{- define "browserfleet.cacheRedisPasswordSecret" -}}
{{- if .Values.cache.redis.deploy }}{{ include "browserfleet.redisName" . }}{{ else if .Values.cache.redis.address }}{{ .Values.cache.redis.existingSecret }}{{ end }}
{{- end }}

{{- define "browserfleet.cacheRedisPasswordKey" -}}
{{- if .Values.cache.redis.deploy }}password{{ else }}{{ .Values.cache.redis.passwordKey }}{{ end }}
{{- end }}

{{/* The port of tracing.endpoint: its own, or its scheme's. */}}
{{- define "browserfleet.tracingPort" -}}
{{- $u := urlParse .Values.tracing.endpoint }}
{{- $hostPort := splitList ":" $u.host }}
{{- if gt (len $hostPort) 1 }}{{ last $hostPort }}{{ else if eq $u.scheme "https" }}443{{ else }}80{{ end }}
{{- end }}

{{/* Where the manager reads its Configuration file. */}}
{{- define "browserfleet.managerConfigDir" -}}
/etc/browserfleet/manager
{{- end }}

{{/*
Security contexts of the manager and API pods: non-root, no privileges, a
read-only root filesystem.
*/}}
{{- define "browserfleet.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{- define "browserfleet.containerSecurityContext" -}}
allowPrivilegeEscalation: false
privileged: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* --metrics-bind-address and --metrics-secure, the same for both binaries. */}}
{{- define "browserfleet.metricsArgs" -}}
{{- if .Values.metrics.enabled }}
- {{ printf "--metrics-bind-address=:%d" (int .Values.metrics.port) | quote }}
{{- if .Values.metrics.secure }}
- "--metrics-secure"
{{- end }}
{{- else }}
- "--metrics-bind-address=0"
{{- end }}
{{- end }}

{{/*
browserfleet.gatewayEnabled is "true" when a gateway provider has a
Secret or a base URL, else empty.
*/}}
{{- define "browserfleet.gatewayEnabled" -}}
{{- range $name, $p := .Values.gateway.providers }}{{ if or $p.existingSecret $p.baseURL }}true{{ end }}{{ end }}
{{- end }}
