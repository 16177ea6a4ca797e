// Helm values for the kuberay-operator chart, rendered per environment. Built as data and written by krc's YAML
// dumper: no string from an environment file (a gate name, a namespace) is ever pasted into YAML text.
// featureGates: Helm replaces lists whole, so the chart's default gates are written out in full with the
// environment's choices applied; a partial list would silently turn the other defaults off.
local env = std.extVar('env');
local chart = std.extVar('chart');
local orEmpty(value, empty) = if value == null then empty else value;

local op = orEmpty(std.get(env, 'operator'), {});
local gates = orEmpty(std.get(op, 'featureGates'), {});
local defaults = orEmpty(std.get(chart.defaults, 'featureGates'), []);
local defaultNames = [gate.name for gate in defaults];
local watched = orEmpty(std.get(op, 'watchNamespaces'), []);

local featureGates =
  [{ name: gate.name, enabled: if std.objectHas(gates, gate.name) then gates[gate.name] else gate.enabled }
   for gate in defaults]
  + [{ name: name, enabled: gates[name] } for name in std.objectFields(gates) if !std.member(defaultNames, name)];

{
  fullnameOverride: 'kuberay-operator',
  // an empty list stays absent (null), as the chart leaves it
  featureGates: if featureGates == [] then null else featureGates,
  rbacEnable: true,
} + (
  if watched != [] then {
    // Watch only the environment's namespaces, with a Role per namespace instead of a ClusterRole.
    singleNamespaceInstall: true,
    crNamespacedRbacEnable: true,
    watchNamespace: watched,
  } else {
    singleNamespaceInstall: false,
  }
)
