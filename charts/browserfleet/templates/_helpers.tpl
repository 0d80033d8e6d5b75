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

{{/* The quota flags, the same for the API and the manager. */}}
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
