// One RayJob per entry of the environment's `jobs`.
local env = std.extVar('env');
local kr = import '../lib/kuberay.libsonnet';

[
  {
    apiVersion: 'ray.io/v1',
    kind: 'RayJob',
    metadata: kr.metadata(env, job, 'jobs.' + job.name),
    spec: kr.merge(kr.jobSpec(env, job), kr.get(job, 'raw', {})),
  }
  for job in kr.get(env, 'jobs', [])
]
