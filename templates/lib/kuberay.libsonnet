// Building blocks for KubeRay custom resources from krc's environment model.
local merge = (import 'merge.libsonnet').merge;

local get(obj, key, default) = if std.objectHas(obj, key) && obj[key] != null then obj[key] else default;

// '1.6.2' >= '1.7.0'? Numeric comparison of major.minor.patch.
local versionAtLeast(version, minimum) =
  local parse(v) = [std.parseInt(std.splitLimit(p, '-', 1)[0]) for p in std.split(v, '.')];
  local a = parse(version), b = parse(minimum);
  a[0] > b[0] || (a[0] == b[0] && (a[1] > b[1] || (a[1] == b[1] && a[2] >= b[2])));

local quantity(value) = if std.isString(value) then value else std.toString(value);

local gpuToleration = { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' };

// Metadata every object gets: its name, namespace, the environment's labels, and where it came from.
local metadata(env, item, source, namespaced=true) =
  local labels = get(env, 'labels', {}) + get(item, 'labels', {});
  {
    name: item.name,
    [if std.length(labels) > 0 then 'labels']: labels,
    annotations: get(item, 'annotations', {}) + { 'krc.dev/source': source },
  } + (if namespaced then { namespace: get(item, 'namespace', env.namespace) } else {});

// A Ray container with requests = limits; GPUs go to limits only, as Kubernetes requires for extended resources.
local container(env, name, spec) =
  local gpu = get(spec, 'gpu', 0);
  local base = {
    [if std.objectHas(spec, 'cpu') then 'cpu']: quantity(spec.cpu),
    [if std.objectHas(spec, 'memory') then 'memory']: quantity(spec.memory),
  };
  local envVars = get(spec, 'env', {});
  {
    name: name,
    image: get(spec, 'image', if gpu > 0 && std.objectHas(env.ray, 'gpuImage') then env.ray.gpuImage else env.ray.image),
    resources: {
      requests: base,
      limits: base + (if gpu > 0 then { 'nvidia.com/gpu': quantity(gpu) } else {}),
    },
    [if std.length(envVars) > 0 then 'env']: [{ name: k, value: envVars[k] } for k in std.objectFields(envVars)],
  };

// Ray's logical GPU count stated explicitly, so Kubernetes limits and Ray agree at a glance.
local rayStartParams(spec) =
  local gpu = get(spec, 'gpu', 0);
  (if gpu > 0 then { 'num-gpus': std.toString(gpu) } else {}) + get(spec, 'rayStartParams', {});

local podSpec(env, containerName, spec) =
  local gpu = get(spec, 'gpu', 0);
  local tolerations = get(spec, 'tolerations', []);
  local hasGpuToleration = std.length([t for t in tolerations if get(t, 'key', '') == 'nvidia.com/gpu']) > 0;
  {
    containers: [container(env, containerName, spec)],
    [if std.length(get(spec, 'nodeSelector', {})) > 0 then 'nodeSelector']: spec.nodeSelector,
    [if std.length(tolerations) > 0 || gpu > 0 then 'tolerations']:
      tolerations + (if gpu > 0 && !hasGpuToleration then [gpuToleration] else []),
  };

local template(env, containerName, spec, serviceAccountName) = {
  [if std.length(get(spec, 'labels', {})) + std.length(get(spec, 'annotations', {})) > 0 then 'metadata']: {
    [if std.length(get(spec, 'labels', {})) > 0 then 'labels']: spec.labels,
    [if std.length(get(spec, 'annotations', {})) > 0 then 'annotations']: spec.annotations,
  },
  spec: podSpec(env, containerName, spec)
        + (if serviceAccountName != null then { serviceAccountName: serviceAccountName } else {}),
};

local headGroup(env, head, serviceAccountName) = merge({
  [if std.objectHas(head, 'serviceType') then 'serviceType']: head.serviceType,
  rayStartParams: rayStartParams(head),
  [if std.objectHas(head, 'resources') then 'resources']: head.resources,
  template: template(env, 'ray-head', head, serviceAccountName),
}, get(head, 'raw', {}));

local workerGroup(env, group, autoscalerV2, serviceAccountName) = merge({
  groupName: group.name,
  replicas: get(group, 'replicas', get(group, 'minReplicas', 0)),
  minReplicas: get(group, 'minReplicas', 0),
  maxReplicas: get(group, 'maxReplicas', get(group, 'replicas', 1)),
  [if std.objectHas(group, 'numOfHosts') then 'numOfHosts']: group.numOfHosts,
  [if autoscalerV2 && std.objectHas(group, 'idleTimeoutSeconds') then 'idleTimeoutSeconds']: group.idleTimeoutSeconds,
  rayStartParams: rayStartParams(group),
  [if std.objectHas(group, 'resources') then 'resources']: group.resources,
  template: template(env, 'ray-worker', group, serviceAccountName),
}, get(group, 'raw', {}));

// The RayCluster spec shared by RayCluster, RayJob.rayClusterSpec and RayService.rayClusterConfig.
local clusterSpec(env, body) =
  local autoscaling = get(body, 'autoscaling', {});
  local enabled = get(autoscaling, 'enabled', false);
  local version = get(autoscaling, 'version', 'v2');
  local sa = get(body, 'serviceAccountName', null);
  merge({
    rayVersion: get(body, 'rayVersion', env.ray.version),
    [if enabled then 'enableInTreeAutoscaling']: true,
    [if enabled then 'autoscalerOptions']: {
      version: version,
      [if std.objectHas(autoscaling, 'idleTimeoutSeconds') then 'idleTimeoutSeconds']: autoscaling.idleTimeoutSeconds,
      [if std.objectHas(autoscaling, 'upscalingMode') then 'upscalingMode']: autoscaling.upscalingMode,
    },
    headGroupSpec: headGroup(env, get(body, 'head', {}), sa),
    [if std.length(get(body, 'workerGroups', [])) > 0 then 'workerGroupSpecs']:
      [workerGroup(env, g, enabled && version == 'v2', sa) for g in body.workerGroups],
  }, get(body, 'raw', {}));

local jobSpec(env, job) = {
  [if std.objectHas(job, 'entrypoint') then 'entrypoint']: job.entrypoint,
  [if std.objectHas(job, 'runtimeEnv') then 'runtimeEnvYAML']: std.native('yaml')(std.manifestJsonMinified(job.runtimeEnv)),
  [if std.objectHas(job, 'submissionMode') then 'submissionMode']: job.submissionMode,
  [if std.objectHas(job, 'shutdownAfterJobFinishes') then 'shutdownAfterJobFinishes']: job.shutdownAfterJobFinishes,
  [if std.objectHas(job, 'ttlSecondsAfterFinished') then 'ttlSecondsAfterFinished']: job.ttlSecondsAfterFinished,
  [if std.objectHas(job, 'backoffLimit') then 'backoffLimit']: job.backoffLimit,
  [if std.objectHas(job, 'activeDeadlineSeconds') then 'activeDeadlineSeconds']: job.activeDeadlineSeconds,
  [if std.objectHas(job, 'preRunningDeadlineSeconds') then 'preRunningDeadlineSeconds']: job.preRunningDeadlineSeconds,
  [if std.objectHas(job, 'suspend') then 'suspend']: job.suspend,
  [if std.objectHas(job, 'clusterSelector') then 'clusterSelector']: job.clusterSelector,
  [if std.objectHas(job, 'cluster') then 'rayClusterSpec']: clusterSpec(env, job.cluster),
};

{
  versionAtLeast:: versionAtLeast,
  get:: get,
  merge:: merge,
  metadata:: metadata,
  clusterSpec:: clusterSpec,
  jobSpec:: jobSpec,
}
