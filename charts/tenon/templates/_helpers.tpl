{{/* The chart's name, or nameOverride. */}}
{{- define "tenon.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The name of the release's objects: fullnameOverride, or the release name joined with the chart name unless it contains it already. */}}
{{- define "tenon.fullname" -}}
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

{{/* The labels that select the controller's pods. */}}
{{- define "tenon.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tenon.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* The labels of every object. */}}
{{- define "tenon.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "tenon.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- with .Values.additionalLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The annotations of every object, as a metadata field indented for metadata (nothing when there are none). */}}
{{- define "tenon.annotations" -}}
{{- with .Values.additionalAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
{{- end }}
{{- end }}

{{/* The ServiceAccount the controller runs as. */}}
{{- define "tenon.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "tenon.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The image: repository@digest, or repository:tag (tag defaulting to the appVersion). */}}
{{- define "tenon.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}
{{- end }}

{{/* The --feature-gates value: Karpenter's gate names from settings.featureGates. */}}
{{- define "tenon.featureGates" -}}
{{- $gates := list }}
{{- range $name, $on := .Values.settings.featureGates }}
{{- $gates = append $gates (printf "%s%s=%t" (upper (substr 0 1 $name)) (substr 1 (len $name) $name) $on) }}
{{- end }}
{{- join "," $gates }}
{{- end }}

{{/* The container's environment: the settings Karpenter's chart passes as variables, each only when set, then extraEnv. */}}
{{- define "tenon.env" -}}
{{- with .Values.settings.clusterName }}
- name: CLUSTER_NAME
  value: {{ . | quote }}
{{- end }}
{{- with .Values.settings.clusterEndpoint }}
- name: CLUSTER_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- with .Values.settings.interruptionQueue }}
- name: INTERRUPTION_QUEUE
  value: {{ . | quote }}
{{- end }}
{{- with .Values.settings.awsEndpointURL }}
- name: AWS_ENDPOINT_URL
  value: {{ . | quote }}
{{- end }}
{{- if .Values.settings.isolatedVPC }}
- name: ISOLATED_VPC
  value: "true"
{{- end }}
{{- with .Values.settings.kubeClientQPS }}
- name: KUBE_CLIENT_QPS
  value: {{ . | quote }}
{{- end }}
{{- with .Values.settings.kubeClientBurst }}
- name: KUBE_CLIENT_BURST
  value: {{ . | quote }}
{{- end }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}
