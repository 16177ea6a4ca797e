// Plain Kubernetes objects around the Ray workloads: Namespaces and ServiceAccounts.
local env = std.extVar('env');
local kr = import '../lib/kuberay.libsonnet';

[
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: kr.metadata(env, ns, 'namespaces.' + ns.name, namespaced=false),
  }
  for ns in kr.get(env, 'namespaces', [])
] + [
  {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: kr.metadata(env, sa, 'serviceAccounts.' + sa.name),
  }
  for sa in kr.get(env, 'serviceAccounts', [])
]
