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


// webhookRefusals is what the kind's admission webhook says on create, each field error on its own.
func webhookRefusals(ctx context.Context, obj runtime.Object, validate func(context.Context, runtime.Object) error) []rejection {
	err := validate(ctx, obj)
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
	found := firstRefusal([]check{
		{"ValidateRayClusterMetadata", func() error { return utils.ValidateRayClusterMetadata(cluster.ObjectMeta) }},
		{"ValidateRayClusterSpec", func() error { return utils.ValidateRayClusterSpec(&cluster.Spec, cluster.Annotations) }},
		{"ValidateRayClusterUpgradeOptions", func() error { return utils.ValidateRayClusterUpgradeOptions(cluster) }},
	})
	return withWebhook(found, webhookRefusals(ctx, cluster.DeepCopy(), func(ctx context.Context, obj runtime.Object) error {
		_, err := (&webhooks.RayClusterWebhook{}).ValidateCreate(ctx, obj)
		return err
	}))
}

func jobRefusals(ctx context.Context, job *rayv1.RayJob) []rejection {
	found := firstRefusal([]check{
		{"ValidateRayJobMetadata", func() error { return utils.ValidateRayJobMetadata(job.ObjectMeta) }},
		{"ValidateRayJobSpec", func() error { return utils.ValidateRayJobSpec(job) }},
	})
	return withWebhook(found, webhookRefusals(ctx, job.DeepCopy(), func(ctx context.Context, obj runtime.Object) error {
		_, err := (&webhooks.RayJobWebhook{}).ValidateCreate(ctx, obj)
		return err
	}))
}

func serviceRefusals(ctx context.Context, service *rayv1.RayService) []rejection {
	found := firstRefusal([]check{
		{"ValidateRayServiceMetadata", func() error { return utils.ValidateRayServiceMetadata(service.ObjectMeta) }},
		{"ValidateRayServiceSpec", func() error { return utils.ValidateRayServiceSpec(service) }},
	})
	return withWebhook(found, webhookRefusals(ctx, service.DeepCopy(), func(ctx context.Context, obj runtime.Object) error {
		_, err := (&webhooks.RayServiceWebhook{}).ValidateCreate(ctx, obj)
		return err
	}))
}

// cronJobRefusals: KubeRay has no RayCronJob webhook.
func cronJobRefusals(cronJob *rayv1.RayCronJob) []rejection {
	return firstRefusal([]check{
		{"ValidateRayCronJobSpec", func() error { return utils.ValidateRayCronJobSpec(cronJob) }},
	})
}
