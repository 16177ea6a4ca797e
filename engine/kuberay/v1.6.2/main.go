// Command krc-kuberay-v1.6.2 answers krc's questions about KubeRay v1.6.2 with KubeRay's own code: what its
// validators and webhooks say of a defaulted custom resource, and which Pods and Services its controllers create.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"

	glue "github.com/krc/kuberay-glue"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/pkg/features"
	"k8s.io/apimachinery/pkg/util/rand"
)

const kuberayModule = "github.com/ray-project/kuberay/ray-operator"

type buildArgs struct {
	Operator operator          `json:"operator"`
	Objects  []json.RawMessage `json:"objects"`
}

// objectResult is KubeRay's answer for one custom resource: its refusals, why its controller does nothing with
// it (skipped), and the clusters it leads to.
type objectResult struct {
	Refusals []rejection `json:"refusals"`
	Skipped  string      `json:"skipped,omitempty"`
	Clusters []cluster   `json:"clusters"`
	Error    string      `json:"error,omitempty"`
}

type kindOnly struct {
	Kind string `json:"kind"`
}

// buildOp sets the process up as the operator the chart configures, then answers every object. Random name
// suffixes (a RayJob's cluster, a multi-host replica group) come from a generator seeded afresh for each object,
// so an object gets the same answer whatever else the request holds (krc keeps answers by object).
func buildOp(raw json.RawMessage) (any, error) {
	return answerAll(context.Background(), "build", raw)
}

// validateOp answers as buildOp does, up to the refusals: the controllers' validators and the webhooks', and
// whether a controller skips the object, without building the Pods and Services (`krc lint` reads only the
// refusals, and the built objects are most of an answer).
func validateOp(raw json.RawMessage) (any, error) {
	return answerAll(context.WithValue(context.Background(), refusalsOnly{}, true), "validate", raw)
}

// refusalsOnly marks a context whose answers stop at the refusals (validateOp).
type refusalsOnly struct{}

func podsWanted(ctx context.Context) bool {
	only, _ := ctx.Value(refusalsOnly{}).(bool)
	return !only
}

func answerAll(ctx context.Context, op string, raw json.RawMessage) (any, error) {
	var args buildArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, fmt.Errorf("%s: %v", op, err)
	}
	if err := args.Operator.apply(); err != nil {
		return nil, err
	}
	results := make([]objectResult, 0, len(args.Objects))
	for _, document := range args.Objects {
		rand.Seed(1)
		results = append(results, answerObject(ctx, document))
	}
	return map[string]any{"results": results}, nil
}

func answerObject(ctx context.Context, document json.RawMessage) objectResult {
	var kind kindOnly
	if err := json.Unmarshal(document, &kind); err != nil {
		return objectResult{Error: err.Error()}
	}
	var result objectResult
	var err error
	switch kind.Kind {
	case "RayCluster":
		result, err = decodeAndAnswer(ctx, document, answerCluster)
	case "RayJob":
		result, err = decodeAndAnswer(ctx, document, answerJob)
	case "RayService":
		result, err = decodeAndAnswer(ctx, document, answerService)
	case "RayCronJob":
		result, err = decodeAndAnswer(ctx, document, answerCronJob)
	default:
		err = fmt.Errorf("kind %q is not one of KubeRay's", kind.Kind)
	}
	if err != nil {
		result.Error = err.Error()
	}
	if result.Refusals == nil {
		result.Refusals = []rejection{}
	}
	if result.Clusters == nil {
		result.Clusters = []cluster{}
	}
	return result
}

// decodeAndAnswer reads the document as its kind's Go type and answers it; a document that does not decode gets
// no answer, only the error.
func decodeAndAnswer[T any](ctx context.Context, document json.RawMessage, answer func(context.Context, T) (objectResult, error)) (objectResult, error) {
	var object T
	if err := json.Unmarshal(document, &object); err != nil {
		return objectResult{}, err
	}
	return answer(ctx, object)
}

func managedElsewhere(managedBy *string) string {
	if manager := utils.ManagedByExternalController(managedBy); manager != nil {
		return fmt.Sprintf("managed by %s: KubeRay's controller leaves it alone", *manager)
	}
	return ""
}

// answerCluster follows rayClusterReconcile: the managedBy skip, setDefaults, the validators (a refusal stops
// the reconcile), then the Pods and Services.
func answerCluster(ctx context.Context, instance rayv1.RayCluster) (objectResult, error) {
	if skipped := managedElsewhere(instance.Spec.ManagedBy); skipped != "" {
		return objectResult{Skipped: skipped}, nil
	}
	setDefaults(&instance)
	result := objectResult{Refusals: clusterRefusals(ctx, &instance)}
	if controllerRefused(result.Refusals) || !podsWanted(ctx) {
		return result, nil
	}
	built, err := buildCluster(ctx, instance)
	result.Clusters = []cluster{built}
	return result, err
}

func controllerRefused(refusals []rejection) bool {
	for _, r := range refusals {
		if !r.Webhook {
			return true
		}
	}
	return false
}

// answerJob follows the RayJob controller: the managedBy skip, validateRayJob, then (without a clusterSelector)
// the RayCluster it creates, which the RayCluster controller then validates and builds.
func answerJob(ctx context.Context, job rayv1.RayJob) (objectResult, error) {
	if skipped := managedElsewhere(job.Spec.ManagedBy); skipped != "" {
		return objectResult{Skipped: skipped}, nil
	}
	result := objectResult{Refusals: jobRefusals(ctx, &job)}
	if controllerRefused(result.Refusals) {
		return result, nil
	}
	if len(job.Spec.ClusterSelector) != 0 {
		result.Skipped = "clusterSelector set: the RayJob runs on an existing cluster and creates none"
		return result, nil
	}
	if job.Spec.RayClusterSpec == nil {
		return result, nil
	}
	annotations := map[string]string{}
	if job.Spec.SubmissionMode == rayv1.SidecarMode {
		annotations[utils.DisableProvisionedHeadRestartAnnotationKey] = "true"
	}
	instance, err := ownedCluster(&job, utils.RayJobCRD, *job.Spec.RayClusterSpec, utils.GenerateRayClusterName(job.Name),
		map[string]string{utils.RayJobSubmissionModeLabelKey: string(job.Spec.SubmissionMode)}, annotations)
	if err != nil {
		return result, err
	}
	owned, err := answerCluster(ctx, instance)
	result.Refusals = append(result.Refusals, owned.Refusals...)
	result.Clusters = owned.Clusters
	return result, err
}

// answerService follows the RayService controller: its validators, then the RayCluster it creates, plus the
// RayService's own head and serve Services.
func answerService(ctx context.Context, service rayv1.RayService) (objectResult, error) {
	result := objectResult{Refusals: serviceRefusals(ctx, &service)}
	if controllerRefused(result.Refusals) {
		return result, nil
	}
	instance, err := ownedCluster(&service, utils.RayServiceCRD, service.Spec.RayClusterSpec,
		utils.GenerateRayClusterName(service.Name), nil, nil)
	if err != nil {
		return result, err
	}
	owned, err := answerCluster(ctx, instance)
	result.Refusals = append(result.Refusals, owned.Refusals...)
	result.Clusters = owned.Clusters
	if err != nil || len(result.Clusters) == 0 {
		return result, err
	}
	head, err := common.BuildHeadServiceForRayService(ctx, service, instance)
	if err != nil {
		return result, err
	}
	serve, err := common.BuildServeServiceForRayService(ctx, service, instance)
	if err != nil {
		return result, err
	}
	result.Clusters[0].Services = append(result.Clusters[0].Services, head, serve)
	return result, nil
}

// answerCronJob: the RayCronJob controller runs only with its gate on; it validates, then creates RayJobs from
// the template (one is shown, named after the RayCronJob).
func answerCronJob(ctx context.Context, cronJob rayv1.RayCronJob) (objectResult, error) {
	if !features.Enabled(features.RayCronJob) {
		return objectResult{Skipped: "the RayCronJob feature gate is off: no controller acts on RayCronJobs"}, nil
	}
	result := objectResult{Refusals: cronJobRefusals(&cronJob)}
	if controllerRefused(result.Refusals) {
		return result, nil
	}
	job := rayv1.RayJob{ObjectMeta: *cronJob.ObjectMeta.DeepCopy(), Spec: *cronJob.Spec.JobTemplate.DeepCopy()}
	job.Kind, job.APIVersion = "RayJob", rayv1.GroupVersion.String()
	spawned, err := answerJob(ctx, job)
	result.Refusals = append(result.Refusals, spawned.Refusals...)
	result.Clusters, result.Skipped = spawned.Clusters, spawned.Skipped
	return result, err
}

func version() any {
	found := map[string]string{"go": "", kuberayModule: "", "k8s.io/api": "", "sigs.k8s.io/controller-runtime": ""}
	if info, ok := debug.ReadBuildInfo(); ok {
		found["go"] = info.GoVersion
		for _, dep := range info.Deps {
			if _, wanted := found[dep.Path]; wanted {
				found[dep.Path] = dep.Version
			}
		}
	}
	found["kuberay"] = utils.KUBERAY_VERSION
	return found
}

func main() {
	glue.Main("krc-kuberay-v1.6.2", version, map[string]glue.Handler{
		"version":  func(json.RawMessage) (any, error) { return version(), nil },
		"build":    buildOp,
		"validate": validateOp,
	})
}
