/**
 * cert-manager's controller as the release's Helm chart deploys it, for the real nodes: its
 * ServiceAccount, the ClusterRoles of the controllers our build runs (the chart's rules, verbatim),
 * a kubeconfig for the ServiceAccount, and the Deployment of the upstream image. Pure: objects only;
 * pod.ts applies them. docs/development.md ("cert-manager") says what differs from the chart and why.
 */
import { pinnedRelease } from '../controlplane/tools.ts';

/** The cert-manager release localcluster/tools/cert-manager/go.mod pins, e.g. `v1.21.2`. */
export const certManagerVersion: string = pinnedRelease('cert-manager', 'github.com/cert-manager/cert-manager');

/** The controller's image as the chart names it (imageRegistry/imageNamespace/image.name:appVersion). */
export const CERT_MANAGER_CONTROLLER_IMAGE = `quay.io/jetstack/cert-manager-controller:${certManagerVersion}`;

/** Where upstream's Containerfile.controller puts the controller: the image's entrypoint. */
export const CONTROLLER_ENTRYPOINT = '/app/cmd/controller/controller';

/** Where a ClusterIssuer's Secrets live, and where the controller runs, as in cert-manager's Helm chart. */
export const clusterResourceNamespace = 'cert-manager';

/** The Deployment's (and ServiceAccount's) name: the chart's fullname for a release called cert-manager. */
export const CONTROLLER_NAME = 'cert-manager';

/** The chart's `http-healthz` port (upstream's default health address, 0.0.0.0:9403). */
export const HEALTH_PORT = 9403;

/** A Kubernetes object as kubectl applies it. */
export type KubeObject = Readonly<Record<string, unknown>>;

/** Where the ServiceAccount's token and the cluster's CA are mounted in every Pod. */
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const KUBECONFIG_DIR = '/var/cert-manager/kubeconfig';

/**
 * Our build's main.go requires --kubeconfig (it was written for the machine), and main.go is not
 * ours to change here (build.sh keys the binary's cache by it): so the Pod's kubeconfig says what
 * client-go's in-cluster config would, the `kubernetes` Service, the ServiceAccount's token file
 * (read again as it rotates) and CA.
 */
export const IN_CLUSTER_KUBECONFIG = `apiVersion: v1
kind: Config
clusters:
- name: in-cluster
  cluster:
    server: https://kubernetes.default.svc:443
    certificate-authority: ${SA_DIR}/ca.crt
users:
- name: ${CONTROLLER_NAME}
  user:
    tokenFile: ${SA_DIR}/token
contexts:
- name: in-cluster
  context: {cluster: in-cluster, user: ${CONTROLLER_NAME}}
current-context: in-cluster
`;

/** The chart's selector of the controller's Pods, and its labels: those and `app`. */
export const CONTROLLER_SELECTOR: Readonly<Record<string, string>> = {
  'app.kubernetes.io/name': CONTROLLER_NAME,
  'app.kubernetes.io/instance': CONTROLLER_NAME,
  'app.kubernetes.io/component': 'controller',
};
const labels = { app: CONTROLLER_NAME, ...CONTROLLER_SELECTOR };
const meta = (name: string, namespaced = true): KubeObject => ({
  name,
  ...(namespaced ? { namespace: clusterResourceNamespace } : {}),
  labels,
});

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] };
const rule = (apiGroups: string[], resources: string[], verbs: string[], resourceNames?: string[]): Rule => ({
  apiGroups,
  resources,
  verbs,
  ...(resourceNames ? { resourceNames } : {}),
});
const read = ['get', 'list', 'watch'];
const events = rule([''], ['events'], ['create', 'patch']);

/**
 * The chart's ClusterRoles (templates/rbac.yaml) of the controllers our build runs: issuers,
 * clusterissuers, certificates (also the CertificateRequests' issuers), the approver, and
 * ingress-shim's (below). Not bound: orders, challenges, certificatesigningrequests (controllers
 * left out of the build) and the leader-election Role (the build does not elect).
 */
export const CONTROLLER_ROLES: Readonly<Record<string, readonly Rule[]>> = {
  'controller-issuers': [
    rule(['cert-manager.io'], ['issuers', 'issuers/status'], ['update', 'patch']),
    rule(['cert-manager.io'], ['issuers'], read),
    rule([''], ['secrets'], [...read, 'create', 'update', 'delete']),
    events,
  ],
  'controller-clusterissuers': [
    rule(['cert-manager.io'], ['clusterissuers', 'clusterissuers/status'], ['update', 'patch']),
    rule(['cert-manager.io'], ['clusterissuers'], read),
    rule([''], ['secrets'], [...read, 'create', 'update', 'delete']),
    events,
  ],
  'controller-certificates': [
    rule(
      ['cert-manager.io'],
      ['certificates', 'certificates/status', 'certificaterequests', 'certificaterequests/status'],
      ['update', 'patch'],
    ),
    rule(['cert-manager.io'], ['certificates', 'certificaterequests', 'clusterissuers', 'issuers'], read),
    rule(['cert-manager.io'], ['certificates/finalizers', 'certificaterequests/finalizers'], ['update']),
    rule(['acme.cert-manager.io'], ['orders'], ['create', 'delete', ...read]),
    rule([''], ['secrets'], [...read, 'create', 'update', 'delete', 'patch']),
    events,
  ],
  // The chart grants create and delete of CertificateRequests (the request and revision managers
  // make and prune them) only through this role, so it is bound though the shim does not run.
  'controller-ingress-shim': [
    rule(['cert-manager.io'], ['certificates', 'certificaterequests'], ['create', 'update', 'delete']),
    rule(['cert-manager.io'], ['certificates', 'certificaterequests', 'issuers', 'clusterissuers'], read),
    rule(['networking.k8s.io'], ['ingresses'], read),
    rule(['networking.k8s.io'], ['ingresses/finalizers'], ['update']),
    rule(['gateway.networking.k8s.io'], ['gateways', 'httproutes', 'listenersets'], read),
    rule(
      ['gateway.networking.k8s.io'],
      ['gateways/finalizers', 'httproutes/finalizers', 'listenersets/finalizers'],
      ['update'],
    ),
    events,
  ],
  'controller-approve:cert-manager-io': [
    rule(
      ['cert-manager.io'],
      ['signers'],
      ['approve'],
      ['issuers.cert-manager.io/*', 'clusterissuers.cert-manager.io/*'],
    ),
  ],
};

/** What the chart's controller container is started with, for our build's flags. */
export const CONTROLLER_ARGS = [
  // The chart's global.logLevel default.
  '--v=2',
  `--kubeconfig=${KUBECONFIG_DIR}/kubeconfig`,
  // The chart's default: the namespace it runs in.
  '--cluster-resource-namespace=$(POD_NAMESPACE)',
  `--health-address=0.0.0.0:${HEALTH_PORT}`,
];

/** Every object of the controller, in the order they are applied (the namespace is made before). */
export function controllerObjects(image: string = CERT_MANAGER_CONTROLLER_IMAGE): KubeObject[] {
  const rbac = Object.entries(CONTROLLER_ROLES).flatMap(([role, rules]): KubeObject[] => {
    const name = `${CONTROLLER_NAME}-${role}`;
    return [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta(name, false), rules },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: meta(name, false),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name: CONTROLLER_NAME, namespace: clusterResourceNamespace }],
      },
    ];
  });
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(CONTROLLER_NAME), automountServiceAccountToken: true },
    ...rbac,
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta(`${CONTROLLER_NAME}-kubeconfig`),
      data: { kubeconfig: IN_CLUSTER_KUBECONFIG },
    },
    deployment(image),
  ];
}

/** The chart's Deployment (templates/deployment.yaml with its default values) of our build. */
function deployment(image: string): KubeObject {
  const probe = { httpGet: { port: 'http-healthz', path: '/healthz', scheme: 'HTTP' } };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(CONTROLLER_NAME),
    spec: {
      replicas: 1,
      selector: { matchLabels: CONTROLLER_SELECTOR },
      // No leader election in our build: never two controllers at once, even for a moment.
      strategy: { type: 'Recreate' },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: CONTROLLER_NAME,
          enableServiceLinks: false,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          volumes: [{ name: 'kubeconfig', configMap: { name: `${CONTROLLER_NAME}-kubeconfig` } }],
          containers: [
            {
              name: 'cert-manager-controller',
              image,
              imagePullPolicy: 'IfNotPresent',
              args: CONTROLLER_ARGS,
              ports: [{ containerPort: HEALTH_PORT, name: 'http-healthz', protocol: 'TCP' }],
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                readOnlyRootFilesystem: true,
              },
              env: [{ name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } }],
              volumeMounts: [{ name: 'kubeconfig', mountPath: KUBECONFIG_DIR, readOnly: true }],
              // The chart's liveness timings. Our build serves /healthz only (upstream's /livez is
              // not there), ok once every informer has synced: also the readiness, which the chart
              // does not set, so that the Deployment is Available when the controller acts.
              livenessProbe: {
                ...probe,
                initialDelaySeconds: 10,
                periodSeconds: 10,
                timeoutSeconds: 15,
                successThreshold: 1,
                failureThreshold: 8,
              },
              readinessProbe: { ...probe, periodSeconds: 1, failureThreshold: 3 },
            },
          ],
        },
      },
    },
  };
}
