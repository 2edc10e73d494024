{{/* The chart's name, or nameOverride. */}}
{{- define "etcd-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The name of every object: fullnameOverride, else the release name when it already holds the chart's name, else both. */}}
{{- define "etcd-operator.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Labels that select the manager's Pods; never change them in an upgrade. */}}
{{- define "etcd-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "etcd-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "etcd-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "etcd-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: manager
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The ServiceAccount the manager runs as. */}}
{{- define "etcd-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "etcd-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The manager's image; the tag defaults to the chart's appVersion. */}}
{{- define "etcd-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The Lease the manager replicas elect a leader with. */}}
{{- define "etcd-operator.leaseName" -}}
{{- default (include "etcd-operator.fullname" .) .Values.leaderElection.leaseName }}
{{- end }}

{{/* The claim holding the journal. */}}
{{- define "etcd-operator.journalClaim" -}}
{{- default (printf "%s-journal" (include "etcd-operator.fullname" .)) .Values.persistence.existingClaim }}
{{- end }}

{{/* Requests as a flag's value: cpu=100m,memory=256Mi (empty for none). */}}
{{- define "etcd-operator.requests" -}}
{{- $parts := list }}
{{- range $name, $quantity := . }}
{{- $parts = append $parts (printf "%s=%v" $name $quantity) }}
{{- end }}
{{- join "," $parts }}
{{- end }}
