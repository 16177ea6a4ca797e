// One RayCronJob per entry of the environment's `cronJobs`.
// `timeZone` arrives with the 1.7.0 CRDs: older CRDs would prune it silently, so it is an error there.
local env = std.extVar('env');
local chart = std.extVar('chart');
local kr = import '../lib/kuberay.libsonnet';

local timeZone(cron) =
  if !std.objectHas(cron, 'timeZone') then {}
  else if kr.versionAtLeast(chart.version, '1.7.0') then { timeZone: cron.timeZone }
  else error 'cronJobs[%s].timeZone needs kuberay-operator >= 1.7.0 (pinned: %s); remove it or write the zone as the schedule\'s base time' % [cron.name, chart.version];

[
  {
    apiVersion: 'ray.io/v1',
    kind: 'RayCronJob',
    metadata: kr.metadata(env, cron, 'cronJobs.' + cron.name),
    spec: kr.merge({
      schedule: cron.schedule,
      [if std.objectHas(cron, 'suspend') then 'suspend']: cron.suspend,
      jobTemplate: kr.jobSpec(env, cron.job),
    } + timeZone(cron), kr.get(cron, 'raw', {})),
  }
  for cron in kr.get(env, 'cronJobs', [])
]
