package main

import (
	"context"
	"errors"
	"regexp"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	webhooks "github.com/ray-project/kuberay/ray-operator/pkg/webhooks/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// rejection is one refusal by KubeRay's code: which check, its own message, and the field when it names one.
type rejection struct {
	By      string `json:"by"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
	// Webhook: the check runs only in the operator's admission webhook (ENABLE_WEBHOOKS=true), not in its
	// controller; the chart installs no webhook.
	Webhook bool `json:"webhook,omitempty"`
}

type check struct {
	by  string
	run func() error
}

// firstRefusal runs the checks in the controller's order and keeps the first refusal, as the controller stops
// at it (KubeRay's validators themselves return their first error).
func firstRefusal(checks []check) []rejection {
	for _, c := range checks {
		if err := c.run(); err != nil {
			return []rejection{{By: c.by, Message: err.Error()}}
		}
	}
	return nil
}

// createValidator is the part of a kind's admission webhook that answers a create.
type createValidator interface {
	ValidateCreate(context.Context, runtime.Object) (admission.Warnings, error)
}

// refusals is what KubeRay says of a kind's object: the controller's first refusal, then the webhook's.
func refusals(ctx context.Context, checks []check, obj runtime.Object, webhook createValidator) []rejection {
	return withWebhook(firstRefusal(checks), webhookRefusals(ctx, obj, webhook))
}

// webhookRefusals is what the kind's admission webhook says on create, each field error on its own.
func webhookRefusals(ctx context.Context, obj runtime.Object, webhook createValidator) []rejection {
	_, err := webhook.ValidateCreate(ctx, obj)
	if err == nil {
		return nil
	}
	var status *apierrors.StatusError
	if errors.As(err, &status) && status.ErrStatus.Details != nil && len(status.ErrStatus.Details.Causes) > 0 {
		var found []rejection
		for _, cause := range status.ErrStatus.Details.Causes {
			found = append(found, rejection{By: "webhook", Message: detail(cause.Message), Field: cause.Field, Webhook: true})
		}
		return found
	}
	return []rejection{{By: "webhook", Message: err.Error(), Webhook: true}}
}

// invalidValue is how a field.Invalid error prints (ErrorBody): the value, then the validator's own words.
var invalidValue = regexp.MustCompile(`^Invalid value: (?:\{.*\}|"(?:[^"\\]|\\.)*"|[^ ]*): (.*)$`)

// detail is the validator's own words of a webhook cause, without the value printed before them (a whole
// worker group as JSON).
func detail(message string) string {
	if match := invalidValue.FindStringSubmatch(message); match != nil {
		return match[1]
	}
	return message
}

// withWebhook adds the webhook's refusals that the controller's checks did not already give (the webhooks run
// the same metadata validators).
func withWebhook(found, webhook []rejection) []rejection {
	for _, w := range webhook {
		repeated := false
		for _, f := range found {
			repeated = repeated || (!f.Webhook && f.Message == w.Message)
		}
		if !repeated {
			found = append(found, w)
		}
	}
	return found
}

func clusterRefusals(ctx context.Context, cluster *rayv1.RayCluster) []rejection {
	return refusals(ctx, []check{
		{"ValidateRayClusterMetadata", func() error { return utils.ValidateRayClusterMetadata(cluster.ObjectMeta) }},
		{"ValidateRayClusterSpec", func() error { return utils.ValidateRayClusterSpec(&cluster.Spec, cluster.Annotations) }},
		{"ValidateRayClusterUpgradeOptions", func() error { return utils.ValidateRayClusterUpgradeOptions(cluster) }},
	}, cluster.DeepCopy(), &webhooks.RayClusterWebhook{})
}

func jobRefusals(ctx context.Context, job *rayv1.RayJob) []rejection {
	return refusals(ctx, []check{
		{"ValidateRayJobMetadata", func() error { return utils.ValidateRayJobMetadata(job.ObjectMeta) }},
		{"ValidateRayJobSpec", func() error { return utils.ValidateRayJobSpec(job) }},
	}, job.DeepCopy(), &webhooks.RayJobWebhook{})
}

func serviceRefusals(ctx context.Context, service *rayv1.RayService) []rejection {
	return refusals(ctx, []check{
		{"ValidateRayServiceMetadata", func() error { return utils.ValidateRayServiceMetadata(service.ObjectMeta) }},
		{"ValidateRayServiceSpec", func() error { return utils.ValidateRayServiceSpec(service) }},
	}, service.DeepCopy(), &webhooks.RayServiceWebhook{})
}

// cronJobRefusals: KubeRay has no RayCronJob webhook.
func cronJobRefusals(cronJob *rayv1.RayCronJob) []rejection {
	return firstRefusal([]check{
		{"ValidateRayCronJobSpec", func() error { return utils.ValidateRayCronJobSpec(cronJob) }},
	})
}
