package harness

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/argoproj/argo-cd/gitops-engine/pkg/health"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/lua"
	"github.com/argoproj/argo-cd/v3/util/settings"
)

// HealthChecks reads an argocd-cm (krc's argocd-cm-patch.yaml) the way Argo CD does: its settings manager over
// the ConfigMap and argocd-secret (a fake clientset holding both, as `argocd admin settings resource-overrides
// health --argocd-cm-path` builds one), then its resource overrides, health Lua included.
func HealthChecks(ctx context.Context, configMapPath string) (lua.ResourceHealthOverrides, error) {
	cm, err := readStrictYAML[corev1.ConfigMap](configMapPath)
	if err != nil {
		return nil, err
	}
	secret := corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: common.ArgoCDSecretName},
		Data:       map[string][]byte{"admin.password": []byte("unused"), "server.secretkey": []byte("unused")},
	}
	for _, object := range []metav1.Object{cm, &secret} {
		object.SetNamespace(ControllerNamespace)
		labels := object.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["app.kubernetes.io/part-of"] = "argocd" // what the settings manager's informers select
		object.SetLabels(labels)
	}
	manager := settings.NewSettingsManager(ctx, fake.NewClientset(cm, &secret), ControllerNamespace)
	if err := manager.ResyncInformers(); err != nil {
		return nil, err
	}
	overrides, err := manager.GetResourceOverrides()
	if err != nil {
		return nil, err
	}
	return lua.ResourceHealthOverrides(overrides), nil
}

// Health is what Argo CD's controller computes for one live object (gitops-engine's health.GetResourceHealth
// with Argo CD's Lua overrides); nil when no check applies.
func Health(overrides lua.ResourceHealthOverrides, manifest string) (*health.HealthStatus, error) {
	var object unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(manifest), &object); err != nil {
		return nil, err
	}
	return health.GetResourceHealth(&object, overrides)
}
