{{/* The seven services, in start order. */}}
{{- define "herald.serviceNames" -}}
gateway identity contacts delivery campaigns automation webhooks
{{- end -}}

{{/*
Who calls each gRPC service, for its NetworkPolicies, ingress and egress (docs/operations.md lists the same):
the gateway calls all six; identity calls delivery (account emails); contacts calls campaigns (whether a segment is
in use); delivery calls contacts; campaigns and automation call contacts and delivery; webhooks calls identity (a
project's admins) and delivery (their system email when an endpoint is disabled).
*/}}
{{- define "herald.callers" -}}
identity: [gateway, webhooks]
contacts: [gateway, delivery, campaigns, automation]
delivery: [gateway, identity, campaigns, automation, webhooks]
campaigns: [gateway, contacts]
automation: [gateway]
webhooks: [gateway]
{{- end -}}

{{/*
One egress rule of networkPolicy.egress: `ports` (TCP, or each of `protocols`) to `to` (omitted: any address).
Call with (dict "rule" $np.egress.redis) or (dict "rule" $np.egress.dns "protocols" (list "UDP" "TCP")).
*/}}
{{- define "herald.egressRule" -}}
- ports:
    {{- range $port := .rule.ports }}
    {{- range $protocol := $.protocols | default (list "TCP") }}
    - port: {{ $port }}
      protocol: {{ $protocol }}
    {{- end }}
    {{- end }}
  {{- with .rule.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/*
The secret keys each service reads: a pod gets only its own. `required` keys must exist in the Secret;
the others are optional (an absent key leaves the variable unset).
*/}}
{{- define "herald.secretKeys" -}}
required: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, JWT_SECRET, LINK_SIGNING_SECRET, DKIM_ENCRYPTION_KEY, INTERNAL_RPC_TOKEN]
generated: [JWT_SECRET, LINK_SIGNING_SECRET, DKIM_ENCRYPTION_KEY, INTERNAL_RPC_TOKEN]
gateway: [REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN, OPERATOR_TOKEN]
identity: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN, JWT_SECRET, STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_LIMITS, GITHUB_CLIENT_SECRET, GOOGLE_CLIENT_SECRET]
contacts: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN]
delivery: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN, LINK_SIGNING_SECRET, DKIM_ENCRYPTION_KEY, SMTP_URL, SYSTEM_EMAIL_FROM, SYSTEM_DKIM_DOMAIN, SYSTEM_DKIM_SELECTOR, SYSTEM_DKIM_PRIVATE_KEY]
campaigns: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN]
automation: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN]
webhooks: [DATABASE_URL, REDIS_URL, KAFKA_BROKERS, INTERNAL_RPC_TOKEN]
migrate: [DATABASE_URL]
{{- end -}}

{{- define "herald.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "herald.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* A component's object name: <fullname>-<component>. Call with (dict "root" $ "component" "gateway"). */}}
{{- define "herald.componentName" -}}
{{- printf "%s-%s" (include "herald.fullname" .root) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "herald.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Selector labels of a component. Call with (dict "root" $ "component" "gateway"). */}}
{{- define "herald.selectorLabels" -}}
app.kubernetes.io/name: {{ include "herald.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* All labels of a component. Call with (dict "root" $ "component" "gateway"). */}}
{{- define "herald.labels" -}}
{{ include "herald.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/part-of: herald
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ include "herald.chart" .root }}
{{- end -}}

{{- define "herald.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "herald.secretName" -}}
{{- default (printf "%s-secrets" (include "herald.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/*
KAFKA_TLS, KAFKA_TLS_CA_FILE and KAFKA_SASL_* of one service (kafka in values.yaml): the password from the Secret's
KAFKA_SASL_PASSWORD, or KAFKA_SASL_PASSWORD_<SERVICE> with perServiceUsers. Call with (dict "root" $ "component" "gateway").
*/}}
{{- define "herald.kafkaEnv" -}}
{{- $kafka := .root.Values.kafka -}}
{{- if $kafka.tls.enabled }}
- name: KAFKA_TLS
  value: "true"
{{- if or $kafka.tls.ca.secretName $kafka.tls.ca.configMapName }}
- name: KAFKA_TLS_CA_FILE
  value: /etc/herald/kafka-ca/{{ $kafka.tls.ca.key }}
{{- end }}
{{- end }}
{{- with $kafka.sasl.mechanism }}
- name: KAFKA_SASL_MECHANISM
  value: {{ . | quote }}
- name: KAFKA_SASL_USERNAME
  value: {{ ternary (printf "%s-%s" $kafka.sasl.username $.component) $kafka.sasl.username $kafka.sasl.perServiceUsers | quote }}
- name: KAFKA_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "herald.secretName" $.root }}
      key: {{ ternary (printf "KAFKA_SASL_PASSWORD_%s" (upper $.component)) "KAFKA_SASL_PASSWORD" $kafka.sasl.perServiceUsers }}
{{- end }}
{{- end -}}

{{/* The volume of the Kafka CA file, when kafka.tls.ca names one. */}}
{{- define "herald.kafkaCaVolume" -}}
{{- $ca := .Values.kafka.tls.ca -}}
{{- if and .Values.kafka.tls.enabled (or $ca.secretName $ca.configMapName) }}
- name: kafka-ca
  {{- if $ca.secretName }}
  secret:
    secretName: {{ $ca.secretName }}
    items: [{ key: {{ $ca.key | quote }}, path: {{ $ca.key | quote }} }]
  {{- else }}
  configMap:
    name: {{ $ca.configMapName }}
    items: [{ key: {{ $ca.key | quote }}, path: {{ $ca.key | quote }} }]
  {{- end }}
{{- end }}
{{- end -}}

{{/* The environment entries of one component's secrets. Call with (dict "root" $ "component" "gateway"). */}}
{{- define "herald.secretEnv" -}}
{{- $keys := include "herald.secretKeys" .root | fromYaml -}}
{{- range $key := get $keys .component }}
- name: {{ $key }}
  valueFrom:
    secretKeyRef:
      name: {{ include "herald.secretName" $.root }}
      key: {{ $key }}
      {{- if not (has $key $keys.required) }}
      optional: true
      {{- end }}
{{- end }}
{{- end -}}

{{/*
Rolls every pod when the settings change: the ConfigMap, and the created Secret (an existing Secret is
outside the chart: restart with `kubectl rollout restart` after changing it, or use a reloader).
*/}}
{{- define "herald.checksum" -}}
{{- $config := include (print .Template.BasePath "/configmap.yaml") . -}}
{{- $secret := "" -}}
{{- if .Values.secrets.existingSecret -}}
{{- $secret = .Values.secrets.existingSecret -}}
{{- else -}}
{{- $secret = toYaml .Values.secrets.values -}}
{{- end -}}
{{- printf "%s\n%s" $config $secret | sha256sum -}}
{{- end -}}

{{/* Call with (dict "root" $ "component" "gateway"). */}}
{{- define "herald.serviceAccountName" -}}
{{- if .root.Values.serviceAccount.create -}}
{{- include "herald.componentName" . -}}
{{- else -}}
default
{{- end -}}
{{- end -}}
