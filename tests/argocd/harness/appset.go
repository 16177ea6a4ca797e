package harness

import (
	"encoding/json"
	"fmt"
	"sort"

	log "github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/argoproj/argo-cd/v3/applicationset/controllers/template"
	"github.com/argoproj/argo-cd/v3/applicationset/generators"
	"github.com/argoproj/argo-cd/v3/applicationset/utils"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
)

// Cluster is an Argo CD cluster registration (`argocd cluster add <context> --name NAME --label K=V`).
type Cluster struct {
	Name, Server string
	Labels       map[string]string
}

// Secret is the cluster Secret Argo CD keeps for a registration, where the cluster generator finds it.
func (c Cluster) Secret() *corev1.Secret {
	labels := map[string]string{common.LabelKeySecretType: common.LabelValueSecretTypeCluster}
	for k, v := range c.Labels {
		labels[k] = v
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-" + c.Name, Namespace: ControllerNamespace, Labels: labels},
		Data:       map[string][]byte{"name": []byte(c.Name), "server": []byte(c.Server), "config": []byte("{}")},
	}
}

// ReadApplicationSet reads an ApplicationSet from a YAML file.
func ReadApplicationSet(path string) (*v1alpha1.ApplicationSet, error) {
	return readStrictYAML[v1alpha1.ApplicationSet](path)
}

// ExpandWithClusters is what the ApplicationSet controller makes of appSet with these clusters registered: its
// generators (Argo CD's cluster and list generators, the cluster one over a fake controller-runtime client
// holding the cluster Secrets) and its template rendering (template.GenerateApplications), sorted by name.
func ExpandWithClusters(appSet *v1alpha1.ApplicationSet, clusters []Cluster) ([]v1alpha1.Application, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	var objects []client.Object
	for _, c := range clusters {
		objects = append(objects, c.Secret())
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).Build()
	kinds := map[string]generators.Generator{
		"Clusters": generators.NewClusterGenerator(c, ControllerNamespace),
		"List":     generators.NewListGenerator(),
	}
	apps, reason, err := template.GenerateApplications(log.WithField("applicationset", appSet.Name), *appSet, kinds, &utils.Render{}, c)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", reason, err)
	}
	sort.Slice(apps, func(i, j int) bool { return apps[i].Name < apps[j].Name })
	return apps, nil
}

// WithListGenerator is appSet with its generators replaced by one list generator whose elements carry what the
// cluster generator gives the template for each cluster (name, server, the Secret's labels).
func WithListGenerator(appSet *v1alpha1.ApplicationSet, clusters []Cluster) (*v1alpha1.ApplicationSet, error) {
	listed := appSet.DeepCopy()
	list := &v1alpha1.ListGenerator{}
	for _, c := range clusters {
		element, err := json.Marshal(map[string]any{
			"name": c.Name, "server": c.Server, "metadata": map[string]any{"labels": c.Secret().Labels},
		})
		if err != nil {
			return nil, err
		}
		list.Elements = append(list.Elements, apiextensionsv1.JSON{Raw: element})
	}
	listed.Spec.Generators = []v1alpha1.ApplicationSetGenerator{{List: list}}
	return listed, nil
}
