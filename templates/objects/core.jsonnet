// Plain Kubernetes objects around the Ray workloads: Namespaces and ServiceAccounts.
// Namespaces are foundations (see deploy/argocd/README.md): Argo CD creates them before anything else (the CRDs
// application, wave -20) and never deletes them, neither when an application is deleted nor when one is removed
// from Git: deleting a namespace deletes every Ray object in it, a step for a person with kubectl, not a sync.
local env = std.extVar('env');
local kr = import '../lib/kuberay.libsonnet';

local foundation = {
  'argocd.argoproj.io/sync-options': 'Prune=false,Delete=false',
  'argocd.argoproj.io/sync-wave': '-20',
};

[
  {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: kr.metadata(env, ns, 'namespaces.' + ns.name, namespaced=false) + {
      annotations+: foundation,
    },
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
