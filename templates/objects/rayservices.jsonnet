// One RayService per entry of the environment's `services`.
local env = std.extVar('env');
local kr = import '../lib/kuberay.libsonnet';

local upgradeStrategy(upgrade) =
  local type = kr.get(upgrade, 'type', 'NewCluster');
  {
    type: type,
    [if type == 'NewClusterWithIncrementalUpgrade' then 'clusterUpgradeOptions']: {
      gatewayClassName: upgrade.gatewayClassName,
      stepSizePercent: upgrade.stepSizePercent,
      intervalSeconds: upgrade.intervalSeconds,
      [if std.objectHas(upgrade, 'maxSurgePercent') then 'maxSurgePercent']: upgrade.maxSurgePercent,
    },
  };

[
  {
    apiVersion: 'ray.io/v1',
    kind: 'RayService',
    metadata: kr.metadata(env, service, 'services.' + service.name),
    spec: kr.merge({
      [if std.objectHas(service, 'serveConfig') then 'serveConfigV2']: std.native('yaml')(std.manifestJsonMinified(service.serveConfig)),
      [if std.objectHas(service, 'upgrade') then 'upgradeStrategy']: upgradeStrategy(service.upgrade),
      rayClusterConfig: kr.clusterSpec(env, kr.get(service, 'cluster', {})),
    }, kr.get(service, 'raw', {})),
  }
  for service in kr.get(env, 'services', [])
]
