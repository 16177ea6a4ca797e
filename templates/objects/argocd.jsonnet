// Argo CD Applications of one environment, as an app-of-apps (only when the environment has an `argocd` block):
//   <prefix>            the root: the krc plugin with applications=only, i.e. the three children below
//   <prefix>-crds       wave -2, the foundations through the krc plugin (crds=only): the environment's Namespaces
//                       and the chart's CRDs (server-side apply), never pruned or deleted. Its plugin parameters
//                       carry the chart version, so a chart bump changes this app's spec and the root app syncs it
//                       in its wave, before the operator.
//   <prefix>-operator   wave -1, the operator chart through the krc plugin (operator=only): the objects the pinned
//                       Helm renders from the pinned chart and krc's values, without CRDs (the CRDs app owns
//                       them), i.e. exactly golden/<env>/chart/. Rendering it in the plugin rather than as a Helm
//                       source means Argo CD applies what krc reviewed, whichever Helm the repo-server bundles.
//                       Its Roles in the watched namespaces find those namespaces in place; its parameters carry
//                       the chart version too, so a chart bump changes its spec in its wave.
//   <prefix>-workloads  wave 0, the environment's objects through the krc plugin (crds=exclude: no CRDs, no
//                       Namespaces; operator=exclude), tolerating the autoscaler
// Argo CD only waits for a child to be healthy before the next wave when the Application health check is enabled
// in argocd-cm (see deploy/argocd/README.md); `krc lint`'s argocd/sync-order replays this order.
local env = std.extVar('env');
local environment = std.extVar('environment');
local chart = std.extVar('chart');
local kr = import '../lib/kuberay.libsonnet';

local argocd = kr.get(env, 'argocd', null);
local enabled = argocd != null && kr.get(argocd, 'enabled', true);

local inCluster = 'https://kubernetes.default.svc';
local prefix(cd) = kr.get(cd, 'name', 'krc-' + environment);
local destination(cd, namespace) =
  local dest = kr.get(cd, 'destination', {});
  (if std.objectHas(dest, 'name') then { name: dest.name } else { server: kr.get(dest, 'server', inCluster) })
  + (if namespace != null then { namespace: namespace } else {});

local syncPolicy(cd, prune, options) = {
  [if kr.get(cd, 'automated', true) then 'automated']: {
    prune: prune,
    selfHeal: kr.get(cd, 'selfHeal', true),
  },
  [if std.length(options) > 0 then 'syncOptions']: options,
};

// The krc plugin as a source: the environment and the CRD/Application selection travel as parameters.
local pluginSource(cd, parameters) = {
  repoURL: if std.objectHas(cd, 'repoURL') then cd.repoURL
           else error 'argocd.repoURL is not set: set the Git repository Argo CD reads this project from',
  targetRevision: kr.get(cd, 'targetRevision', 'HEAD'),
  path: kr.get(cd, 'path', '.'),
  plugin: {
    name: kr.get(cd, 'plugin', 'krc'),
    parameters: [{ name: 'environment', string: environment }]
                + [{ name: k, string: parameters[k] } for k in std.objectFields(parameters)],
  },
};

local application(cd, role, name, wave, spec) = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name: name,
    namespace: kr.get(cd, 'namespace', 'argocd'),
    labels: kr.get(env, 'labels', {}) + { 'krc.dev/environment': environment, 'krc.dev/argocd-role': role },
    annotations: { 'krc.dev/source': 'argocd' }
                 + (if wave != null then { 'argocd.argoproj.io/sync-wave': std.toString(wave) } else {})
                 + (if role == 'workloads' then { 'argocd.argoproj.io/compare-options': 'ServerSideDiff=true' }
                    else {}),
    // cascade deletion for what krc owns outright; the CRDs app has none (deleting CRDs deletes every Ray object)
    [if role == 'operator' || role == 'workloads' then 'finalizers']: ['resources-finalizer.argocd.argoproj.io'],
  },
  spec: { project: kr.get(cd, 'project', 'default') } + spec,
};

// RayClusters whose worker replicas the autoscaler owns (rendered the same way as rayclusters.jsonnet).
local autoscaled = [
  cluster
  for cluster in kr.get(env, 'clusters', [])
  if kr.get(kr.clusterSpec(env, cluster), 'enableInTreeAutoscaling', false) == true
];

local workloadsIgnore = [
  {
    group: 'ray.io',
    kind: 'RayCluster',
    name: cluster.name,
    namespace: kr.get(cluster, 'namespace', env.namespace),
    // replicas: written by the autoscaler; scaleStrategy: workersToDelete, written by the autoscaler and cleared
    // by the operator. workerGroupSpecs is an atomic list, so index-free jq paths cover every group.
    jqPathExpressions: ['.spec.workerGroupSpecs[].replicas', '.spec.workerGroupSpecs[].scaleStrategy'],
  }
  for cluster in autoscaled
];

local children(cd) = [
  application(cd, 'crds', prefix(cd) + '-crds', -2, {
    source: pluginSource(cd, { crds: 'only', chartVersion: chart.version }),
    destination: destination(cd, null),
    // KubeRay CRDs exceed the client-side apply annotation limit. Never pruned: automated prune is off here, and
    // Prune=false,Delete=false are resource-level options, carried by each CRD's and Namespace's sync-options
    // annotation; no cascade finalizer either.
    syncPolicy: syncPolicy(cd, false, ['ServerSideApply=true']),
  }),
  application(cd, 'operator', prefix(cd) + '-operator', -1, {
    source: pluginSource(cd, { crds: 'exclude', operator: 'only', chartVersion: chart.version }),
    destination: destination(cd, env.operator.namespace),
    syncPolicy: syncPolicy(cd, kr.get(cd, 'prune', true), ['CreateNamespace=true', 'ServerSideApply=true']),
  }),
  application(cd, 'workloads', prefix(cd) + '-workloads', 0, {
    source: pluginSource(cd, { crds: 'exclude', operator: 'exclude' }),
    destination: destination(cd, kr.get(kr.get(cd, 'destination', {}), 'namespace', env.namespace)),
    [if std.length(workloadsIgnore) > 0 then 'ignoreDifferences']: workloadsIgnore,
    // RespectIgnoreDifferences is opt-in: workerGroupSpecs is an atomic list, so Argo CD would carry the whole
    // live list into the apply and could drop Git changes to worker groups (an image bump).
    syncPolicy: syncPolicy(cd, kr.get(cd, 'prune', true), [
      'ServerSideApply=true',
    ] + (if kr.get(cd, 'respectIgnoreDifferences', false) then ['RespectIgnoreDifferences=true'] else []) + [
      'ApplyOutOfSyncOnly=true',
      'SkipDryRunOnMissingResource=true',  // the CRDs may still be syncing in their own app
    ]),
  }),
];

local root(cd) = application(cd, 'root', prefix(cd), null, {
  source: pluginSource(cd, { crds: 'exclude', applications: 'only' }),
  // the children are Application objects: they live beside Argo CD, not in the target cluster
  destination: { server: inCluster, namespace: kr.get(cd, 'namespace', 'argocd') },
  syncPolicy: syncPolicy(cd, kr.get(cd, 'prune', true), []),
});

if enabled then [root(argocd)] + children(argocd) else []
