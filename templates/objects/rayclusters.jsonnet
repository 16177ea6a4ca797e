// One RayCluster per entry of the environment's `clusters`.
local env = std.extVar('env');
local kr = import '../lib/kuberay.libsonnet';

[
  {
    apiVersion: 'ray.io/v1',
    kind: 'RayCluster',
    metadata: kr.metadata(env, cluster, 'clusters.' + cluster.name),
    spec: kr.clusterSpec(env, cluster),
  }
  for cluster in kr.get(env, 'clusters', [])
]
