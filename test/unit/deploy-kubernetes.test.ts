import { readdirSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { parseGatewayConfig } from '../../src/config/gateway-config.js';
import { NODE_FLAGS } from '../../src/cli/serving-flags.js';
import { readObservabilitySettings } from '../../modules/observability/index.js';
import { REPO, RUNTIME_VARIABLES, healthRoutes, repoFile, settingsTheGatewayReads } from '../support/deploy-facts.js';

/**
 * ops/kubernetes/ against the Kubernetes API schemas (kubernetes-models: the official OpenAPI definitions
 * compiled to validators: types, required fields, enumerations) and against the gateway (routes, settings,
 * the image's user and paths). The schemas do not refuse unknown fields (neither does the API server
 * without strict validation), so every field the gateway depends on is also checked by name below.
 */

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [key: string]: any };

const DIR = 'ops/kubernetes';
const files = readdirSync(`${REPO}${DIR}`).filter((name) => name.endsWith('.yaml')).sort();
const manifests: Array<{ file: string; manifest: Manifest }> = files.flatMap((file) =>
  parseAllDocuments(repoFile(`${DIR}/${file}`)).map((document) => {
    if (document.errors.length) throw new Error(`${file}: ${document.errors[0].message}`);
    return { file, manifest: document.toJS() as Manifest };
  }),
);
const resources = manifests.filter(({ manifest }) => manifest.kind !== 'Kustomization');

function find(kind: string, name: string): Manifest {
  const found = resources.find(({ manifest }) => manifest.kind === kind && manifest.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} in ${DIR}`);
  return found.manifest;
}

const gateway = find('Deployment', 'switchyard');
const projector = find('Deployment', 'switchyard-projector');
const pod = gateway.spec.template.spec;
const container = pod.containers[0];
const envValue = (name: string) => container.env.find((variable: { name: string }) => variable.name === name)?.value;

/** The model class of a kind, from kubernetes-models (one module per apiVersion and kind). */
async function modelOf(apiVersion: string, kind: string): Promise<new (data: unknown) => { validate(): void }> {
  const module = await import(`kubernetes-models/${apiVersion}/${kind}`);
  return module[kind];
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

describe('ops/kubernetes manifests', () => {
  test.each(resources.map(({ file, manifest }) => [file, manifest.kind, manifest] as const))('%s: %s is valid against the Kubernetes API schema', async (_file, _kind, manifest) => {
    const Model = await modelOf(manifest.apiVersion, manifest.kind);
    expect(() => new Model(manifest).validate()).not.toThrow();
  });

  test('the schema check refuses what the API server would (a wrong type, a missing required field)', async () => {
    const Model = await modelOf('apps/v1', 'Deployment');
    const wrongType = structuredClone(gateway);
    wrongType.spec.replicas = 'two';
    expect(() => new Model(wrongType).validate()).toThrow(/replicas/);
    const missing = structuredClone(gateway);
    delete missing.spec.template.spec.containers[0].name;
    expect(() => new Model(missing).validate()).toThrow(/name/);
  });

  test('the kustomization lists every resource file but the optional projector, and sets the image', () => {
    const kustomization = manifests.find(({ manifest }) => manifest.kind === 'Kustomization')!.manifest;
    expect(kustomization.apiVersion).toBe('kustomize.config.k8s.io/v1beta1');
    expect([...kustomization.resources].sort()).toEqual(files.filter((file) => !['kustomization.yaml', 'projector.yaml'].includes(file)));
    expect(kustomization.images.map((image: { name: string }) => image.name)).toEqual([container.image]);
  });

  test('two gateway replicas; a rolling update never goes below them; a disruption budget keeps one', () => {
    expect(gateway.spec.replicas).toBe(2);
    expect(gateway.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    const budget = find('PodDisruptionBudget', 'switchyard');
    expect(budget.spec.minAvailable).toBe(1);
    expect(matches(budget.spec.selector.matchLabels, gateway.spec.template.metadata.labels)).toBe(true);
    // …and not the projector's pods.
    expect(matches(budget.spec.selector.matchLabels, projector.spec.template.metadata.labels)).toBe(false);
  });

  test("every Deployment's selector matches its pods' labels; the Service selects the gateway pods on their port", () => {
    for (const deployment of [gateway, projector]) {
      expect(matches(deployment.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
    }
    const service = find('Service', 'switchyard');
    expect(matches(service.spec.selector, gateway.spec.template.metadata.labels)).toBe(true);
    expect(matches(service.spec.selector, projector.spec.template.metadata.labels)).toBe(false);
    const [port] = service.spec.ports;
    const containerPort = container.ports.find((candidate: { name: string }) => candidate.name === port.targetPort);
    expect(containerPort).toBeDefined();
    // The port the gateway listens on (PORT) and the one the image exposes.
    expect(String(containerPort.containerPort)).toBe(envValue('PORT'));
    expect(String(containerPort.containerPort)).toBe(/^EXPOSE\s+(\d+)/m.exec(repoFile('Dockerfile'))![1]);
    expect(envValue('HOST')).toBe('0.0.0.0');
  });

  test("the probes ask the gateway's own health routes on its port", () => {
    const routes = healthRoutes();
    expect(container.readinessProbe.httpGet).toEqual({ path: routes.readiness, port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: routes.liveness, port: 'http' });
    // Liveness never probes a dependency: a readiness route there would restart pods during a database outage.
    expect(container.livenessProbe.httpGet.path).not.toBe(routes.readiness);
    expect(container.startupProbe.httpGet).toEqual({ path: routes.liveness, port: 'http' });
  });

  test('every variable set is a setting the gateway reads; secrets come from Secrets, never values', () => {
    const read = settingsTheGatewayReads();
    for (const deployment of [gateway, projector]) {
      for (const variable of deployment.spec.template.spec.containers[0].env) {
        expect([variable.name, read.has(variable.name) || RUNTIME_VARIABLES.has(variable.name)]).toEqual([variable.name, true]);
      }
    }
    for (const name of ['ADMIN_TOKEN', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL']) {
      const variable = container.env.find((candidate: { name: string }) => candidate.name === name);
      expect(variable.value).toBeUndefined();
      expect(variable.valueFrom.secretKeyRef.name).toBe('switchyard-secrets');
    }
  });

  test("the ConfigMap holds a configuration the gateway's parser accepts, mounted where SWITCHYARD_CONFIG points", () => {
    const configMap = find('ConfigMap', 'switchyard-config');
    const mount = container.volumeMounts.find((candidate: { name: string }) => candidate.name === 'config');
    const volume = pod.volumes.find((candidate: { name: string }) => candidate.name === 'config');
    expect(volume.configMap.name).toBe('switchyard-config');
    const path = envValue('SWITCHYARD_CONFIG') as string;
    expect(path.startsWith(`${mount.mountPath}/`)).toBe(true);
    const text = configMap.data[path.slice(mount.mountPath.length + 1)];
    expect(parseGatewayConfig(text, 'configmap.yaml').providers.length).toBeGreaterThan(0);
    // file: references lie in the provider-keys Secret's mount, which is where references may read.
    const secretsDir = envValue('SWITCHYARD_SECRETS_DIR');
    const keys = container.volumeMounts.find((candidate: { name: string }) => candidate.name === 'provider-keys');
    expect(keys.mountPath).toBe(secretsDir);
    const files = [...text.matchAll(/\bfile:(\S+)/g)].map((match) => match[1]);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(file.startsWith(`${secretsDir}/`)).toBe(true);
  });

  test("non-root with the image's uid, a read-only root filesystem, writable volumes where the gateway writes", () => {
    const uid = Number(/^USER\s+(\d+)/m.exec(repoFile('Dockerfile'))![1]);
    for (const deployment of [gateway, projector]) {
      const spec = deployment.spec.template.spec;
      expect(spec.securityContext.runAsNonRoot).toBe(true);
      expect(spec.securityContext.runAsUser).toBe(uid);
      const security = spec.containers[0].securityContext;
      expect(security).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    }
    const writable = container.volumeMounts.filter((mount: { readOnly?: boolean }) => !mount.readOnly).map((mount: { mountPath: string }) => mount.mountPath);
    expect(writable).toContain(envValue('SWITCHYARD_DATA_DIR'));
    expect(writable).toContain('/tmp');
    // The data directory of the manifests is the image's volume.
    expect(repoFile('Dockerfile')).toContain(`VOLUME ["${envValue('SWITCHYARD_DATA_DIR')}"]`);
  });

  test("termination waits for the preStop pause, the gateway's shutdown deadline and the settling after it", () => {
    const pause = container.lifecycle.preStop.exec.command;
    expect(pause.slice(0, 2)).toEqual(['node', '-e']);
    const pauseMs = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(pause[2])![1]);
    const deadlineMs = readObservabilitySettings({}).shutdownDeadlineMs;
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(pauseMs + deadlineMs + 5_000);
  });

  test('the containers run CLI commands of the image (its entrypoint is node with the serving flags on bin/switchyard.js)', () => {
    expect(container.args).toEqual(['serve']);
    expect(container.command).toBeUndefined();
    expect(projector.spec.template.spec.containers[0].args).toEqual(['projector']);
    const entrypoint = JSON.parse(/^ENTRYPOINT\s+(\[.*\])$/m.exec(repoFile('Dockerfile'))![1]);
    expect(entrypoint).toEqual(['node', ...NODE_FLAGS, 'bin/switchyard.js']);
  });
});
