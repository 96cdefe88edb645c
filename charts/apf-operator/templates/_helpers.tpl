{{/*
Names. Kubernetes names (and label values) are at most 63 characters, so every name is
truncated after its suffix is added, never before.
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "apf-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The base name of every object: fullnameOverride, else the release name if it already contains
the chart name, else "<release>-<chart>".
*/}}
{{- define "apf-operator.fullname" -}}
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

{{/*
"<fullname>-<suffix>" in at most 63 characters: the base is cut to 44 so that the longest
suffix (-validating-webhook, 19) survives whole. Call with (list . "suffix").
*/}}
{{- define "apf-operator.suffixed" -}}
{{- $ctx := index . 0 }}
{{- printf "%s-%s" (include "apf-operator.fullname" $ctx | trunc 44 | trimSuffix "-") (index . 1) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "apf-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every object. */}}
{{- define "apf-operator.labels" -}}
helm.sh/chart: {{ include "apf-operator.chart" . }}
{{ include "apf-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ (include "apf-operator.imageTag" .) | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/part-of: apf-operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Labels that select the operator's pods; immutable once a Deployment exists. */}}
{{- define "apf-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "apf-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Object names. With the release name "apf-operator" they equal the operator's flag defaults
(apf-operator-webhook, apf-operator-webhook-tls, apf-operator-validating-webhook).
*/}}
{{- define "apf-operator.serviceAccountName" -}}
{{- include "apf-operator.fullname" . }}
{{- end }}

{{- define "apf-operator.webhookServiceName" -}}
{{- include "apf-operator.suffixed" (list . "webhook") }}
{{- end }}

{{- define "apf-operator.metricsServiceName" -}}
{{- include "apf-operator.suffixed" (list . "metrics") }}
{{- end }}

{{- define "apf-operator.webhookSecretName" -}}
{{- include "apf-operator.suffixed" (list . "webhook-tls") }}
{{- end }}

{{- define "apf-operator.webhookConfigName" -}}
{{- include "apf-operator.suffixed" (list . "validating-webhook") }}
{{- end }}

{{- define "apf-operator.certificateName" -}}
{{- include "apf-operator.suffixed" (list . "serving-cert") }}
{{- end }}

{{- define "apf-operator.issuerName" -}}
{{- include "apf-operator.suffixed" (list . "selfsigned") }}
{{- end }}

{{/* The Lease that elects the leader; the Role grants access to this name only. */}}
{{- define "apf-operator.leaderElectionID" -}}
apf-operator.flowcontrol.apf-operator.io
{{- end }}

{{/* Image tag: image.tag, else the chart's appVersion. */}}
{{- define "apf-operator.imageTag" -}}
{{- .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* Image reference: repository:tag, or repository@digest when a digest is given. */}}
{{- define "apf-operator.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (include "apf-operator.imageTag" .) }}
{{- end }}
{{- end }}

{{/* Whether the operator makes and rotates its own webhook certificate. */}}
{{- define "apf-operator.certRotation" -}}
{{- if .Values.certManager.enabled }}false{{ else }}true{{ end }}
{{- end }}

{{/* The in-cluster DNS name of the webhook Service, the name the serving certificate is for. */}}
{{- define "apf-operator.webhookDNSName" -}}
{{- printf "%s.%s.svc" (include "apf-operator.webhookServiceName" .) .Release.Namespace }}
{{- end }}

{{- /*
apf-operator.webhookPeers: the NetworkPolicyPeers that may reach the webhook port, as JSON:
webhook.networkPolicy.from, or else kube-apiserver's addresses from the Endpoints
default/kubernetes and, where it runs, the konnectivity-agent's pods in kube-system (lookup:
empty under helm template and client dry runs); [] when unknown.
*/}}
{{- define "apf-operator.webhookPeers" -}}
{{- $np := .Values.webhook.networkPolicy -}}
{{- $peers := list -}}
{{- if $np.from -}}
{{- $peers = $np.from -}}
{{- else -}}
{{- $ep := lookup "v1" "Endpoints" "default" "kubernetes" -}}
{{- range ($ep.subsets | default list) -}}
{{- range (.addresses | default list) -}}
{{- $bits := ternary "128" "32" (contains ":" .ip) -}}
{{- $peers = append $peers (dict "ipBlock" (dict "cidr" (printf "%s/%s" .ip $bits))) -}}
{{- end -}}
{{- end -}}
{{- /* kube-apiserver reaches pods through konnectivity's agents where they run (GKE, AKS, kubeadm with a konnectivity server) */ -}}
{{- if $peers -}}
{{- range $kind := list "Deployment" "DaemonSet" -}}
{{- $agent := lookup "apps/v1" $kind "kube-system" "konnectivity-agent" -}}
{{- with $agent.spec -}}
{{- $peers = append $peers (dict "namespaceSelector" (dict "matchLabels" (dict "kubernetes.io/metadata.name" "kube-system")) "podSelector" (dict "matchLabels" .selector.matchLabels)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $peers -}}
{{- end -}}

{{- /*
apf-operator.webhookProtected: "true" when a caller check guards the webhook port: the
client-CA check, or a NetworkPolicy with known peers; "" otherwise.
*/}}
{{- define "apf-operator.webhookProtected" -}}
{{- $ca := or .Values.webhook.clientCA.configMapName .Values.webhook.clientCA.secretName -}}
{{- $np := and .Values.webhook.networkPolicy.enabled (gt (len (include "apf-operator.webhookPeers" . | fromJsonArray)) 0) -}}
{{- if or $ca $np }}true{{ end -}}
{{- end -}}
