package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
)

// operator is how the chart configures the operator: its container's arguments and environment, as the
// rendered Deployment has them.
type operator struct {
	Args []string `json:"args"`
	Env  []envVar `json:"env"`
}

type envVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// readEnv is every environment variable KubeRay's validators and builders read (controllers/ray/common and
// utils): only these are set from the operator's environment, and each request starts with all of them unset.
var readEnv = []string{
	common.EnableInitContainerInjectionEnvKey, utils.ENABLE_PROBES_INJECTION, utils.ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE,
	utils.ClusterDomainEnvKey, utils.USE_INGRESS_ON_OPENSHIFT, utils.ENABLE_LOGIN_SHELL,
	utils.ENABLE_DETERMINISTIC_HEAD_POD_NAME,
}

// kuberayGates are the gates KubeRay registers (pkg/features), with their defaults as the registry holds them.
func kuberayGates() map[featuregate.Feature]featuregate.FeatureSpec {
	known := map[featuregate.Feature]featuregate.FeatureSpec{}
	for name, specs := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		if isKubeRayGate(name) {
			known[name] = specs
		}
	}
	return known
}

// isKubeRayGate tells KubeRay's gates from the API server's, which share the same registry.
func isKubeRayGate(name featuregate.Feature) bool {
	for _, gate := range kuberayGateNames {
		if gate == name {
			return true
		}
	}
	return false
}

var kuberayGateNames = []featuregate.Feature{
	features.RayClusterStatusConditions, features.RayJobDeletionPolicy, features.RayMultiHostIndexing,
	features.RayServiceIncrementalUpgrade, features.RayCronJob, features.AsyncJobInfoQuery,
}

// featureGates reads --feature-gates=A=true,B=false as the operator's flag parser does (the last flag wins).
func (o operator) featureGates() (map[string]bool, error) {
	gates := map[string]bool{}
	for i, arg := range o.Args {
		value, found := strings.CutPrefix(arg, "--feature-gates=")
		if !found && arg == "--feature-gates" && i+1 < len(o.Args) {
			value, found = o.Args[i+1], true
		}
		if !found {
			continue
		}
		gates = map[string]bool{}
		for _, pair := range strings.Split(value, ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			name, setting, ok := strings.Cut(pair, "=")
			if !ok {
				return nil, fmt.Errorf("--feature-gates: %q is not NAME=true|false", pair)
			}
			switch strings.ToLower(strings.TrimSpace(setting)) {
			case "true":
				gates[strings.TrimSpace(name)] = true
			case "false":
				gates[strings.TrimSpace(name)] = false
			default:
				return nil, fmt.Errorf("--feature-gates: %q is not NAME=true|false", pair)
			}
		}
	}
	return gates, nil
}

// apply makes the process look like the operator o describes: every KubeRay gate at its default unless o sets
// it, every variable of readEnv unset unless o sets it. A gate KubeRay does not know is the error the operator
// exits with.
func (o operator) apply() error {
	gates, err := o.featureGates()
	if err != nil {
		return err
	}
	known := kuberayGates()
	settings := map[string]bool{}
	for name, spec := range known {
		settings[string(name)] = spec.Default
	}
	var unknown []string
	for name, value := range gates {
		if _, ok := known[featuregate.Feature(name)]; !ok {
			unknown = append(unknown, name)
			continue
		}
		settings[name] = value
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return fmt.Errorf("the operator exits at start: unrecognized feature gate %s", strings.Join(unknown, ", "))
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(settings); err != nil {
		return fmt.Errorf("feature gates: %w", err)
	}
	for _, name := range readEnv {
		os.Unsetenv(name)
	}
	for _, variable := range o.Env {
		for _, name := range readEnv {
			if variable.Name == name {
				os.Setenv(name, variable.Value)
			}
		}
	}
	return nil
}
