package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	"github.com/argoproj/argo-cd/v3/reposerver/apiclient"
	"github.com/argoproj/argo-cd/v3/reposerver/repository"
	"github.com/argoproj/argo-cd/v3/util/git"
	utilio "github.com/argoproj/argo-cd/v3/util/io"
)

// What the application controller sends with every manifest request (controller/state.go) for a cluster of
// the environments' Kubernetes version: its server version and the API versions discovery lists, the default
// instance label key, and v3's default tracking method.
const (
	KubeVersion    = "v1.33.1"
	AppLabelKey    = common.LabelKeyAppInstance
	TrackingMethod = string(v1alpha1.TrackingMethodAnnotation)
	// ControllerTimeout is the controller's --repo-server-timeout-seconds default: the deadline of a request.
	ControllerTimeout = 60 * time.Second
	// ControllerNamespace is where Argo CD and the Applications live.
	ControllerNamespace = "argocd"
)

// APIVersions is what the controller puts in ApiVersions: group/version and group/version/kind of what the
// cluster serves (here: what krc's objects use, with the KubeRay and Argo CD CRDs installed).
var APIVersions = []string{
	"v1", "v1/ConfigMap", "v1/Namespace", "v1/Secret", "v1/Service", "v1/ServiceAccount",
	"apps/v1", "apps/v1/Deployment",
	"rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1/Role", "rbac.authorization.k8s.io/v1/RoleBinding",
	"rbac.authorization.k8s.io/v1/ClusterRole", "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
	"apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1/CustomResourceDefinition",
	"ray.io/v1", "ray.io/v1/RayCluster", "ray.io/v1/RayJob", "ray.io/v1/RayService", "ray.io/v1/RayCronJob",
	"argoproj.io/v1alpha1", "argoproj.io/v1alpha1/Application", "argoproj.io/v1alpha1/ApplicationSet",
}

// ManifestRequest is the request the controller makes for one Application at a revision (controller/state.go
// GetRepoObjs, for a single-source Application).
func ManifestRequest(app *v1alpha1.Application, revision string) *apiclient.ManifestRequest {
	source := app.Spec.GetSource()
	return &apiclient.ManifestRequest{
		Repo:              &v1alpha1.Repository{Repo: source.RepoURL},
		Revision:          revision,
		AppLabelKey:       AppLabelKey,
		AppName:           app.InstanceName(ControllerNamespace),
		Namespace:         app.Spec.Destination.Namespace,
		ApplicationSource: &source,
		KubeVersion:       KubeVersion,
		ApiVersions:       APIVersions,
		TrackingMethod:    TrackingMethod,
		ProjectName:       app.Spec.GetProject(),
	}
}

// Generate asks the plugin server listening in socketDir for an Application's manifests through the
// repo-server's own function (reposerver/repository.GenerateManifests: source type, .argocd-source overrides,
// the plugin's environment and parameters, discovery, the tarball stream, parsing, List flattening, tracking),
// with the repository checked out at repo.Root, under the controller's deadline. The manifests come back as
// the repo-server returns them to the controller: JSON, one object each, in the plugin's order.
func Generate(ctx context.Context, socketDir string, repo Repository, app *v1alpha1.Application, opts ...repository.GenerateManifestOpt) ([]*unstructured.Unstructured, error) {
	if err := os.Setenv(common.EnvPluginSockFilePath, socketDir); err != nil {
		return nil, err
	}
	q := ManifestRequest(app, repo.Revision)
	appPath := filepath.Join(repo.Root, q.ApplicationSource.Path)
	scratch, err := os.MkdirTemp("", "krc-harness-helm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	response, err := repository.GenerateManifests(ctx, appPath, repo.Root, repo.Revision, q, false,
		git.NoopCredsStore{}, resource.MustParse("0"), utilio.NewRandomizedTempPaths(scratch), opts...)
	if err != nil {
		return nil, err
	}
	objects := make([]*unstructured.Unstructured, 0, len(response.Manifests))
	for _, manifest := range response.Manifests {
		object, err := v1alpha1.UnmarshalToUnstructured(manifest) // as the controller reads them
		if err != nil {
			return nil, fmt.Errorf("repo-server manifest: %w", err)
		}
		objects = append(objects, object)
	}
	if response.SourceType != string(v1alpha1.ApplicationSourceTypePlugin) {
		return nil, fmt.Errorf("source type %q, not %q", response.SourceType, v1alpha1.ApplicationSourceTypePlugin)
	}
	return objects, nil
}
