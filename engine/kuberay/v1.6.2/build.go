package main

import (
	"context"
	"fmt"
	"maps"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/pkg/features"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
)

// groupPods is the Pod the operator makes for one group, and how many of it: at the group's minimum, at its
// maximum, and what the operator creates first (replicas clamped to [min, max]; 0 when suspended).
type groupPods struct {
	Group   string     `json:"group"`
	Type    string     `json:"type"` // head | worker
	Min     int64      `json:"min"`
	Max     int64      `json:"max"`
	Desired int64      `json:"desired"`
	Pod     corev1.Pod `json:"pod"`
}

// cluster is what the operator makes for one RayCluster (its own, or one a RayJob, RayService or RayCronJob
// creates): its Pods per group and its Services.
type cluster struct {
	Name     string            `json:"name"`
	Pods     []groupPods       `json:"pods"`
	Services []*corev1.Service `json:"services"`
}

var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := rayv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// setDefaults is what the RayCluster controller does before it validates (raycluster_controller.go setDefaults,
// unexported): a missing rayStartParams map becomes an empty one.
func setDefaults(instance *rayv1.RayCluster) {
	if instance.Spec.HeadGroupSpec.RayStartParams == nil {
		instance.Spec.HeadGroupSpec.RayStartParams = map[string]string{}
	}
	for i := range instance.Spec.WorkerGroupSpecs {
		if instance.Spec.WorkerGroupSpecs[i].RayStartParams == nil {
			instance.Spec.WorkerGroupSpecs[i].RayStartParams = map[string]string{}
		}
	}
}

// buildHeadPod is the controller's buildHeadPod (unexported) without the options the chart cannot set (sidecar
// containers and default container environment come only from the operator's --config file).
func buildHeadPod(ctx context.Context, instance rayv1.RayCluster) (corev1.Pod, error) {
	podName := utils.PodName(instance.Name, rayv1.HeadNode, !utils.IsDeterministicHeadPodNameEnabled())
	fqdnRayIP := utils.GenerateFQDNServiceName(ctx, instance, instance.Namespace)
	headPort := common.GetHeadPort(instance.Spec.HeadGroupSpec.RayStartParams)
	template := common.DefaultHeadPodTemplate(ctx, instance, instance.Spec.HeadGroupSpec, podName, headPort)
	creator := utils.GetCRDType(instance.Labels[utils.RayOriginatedFromCRDLabelKey])
	pod := common.BuildPod(ctx, template, rayv1.HeadNode, instance.Spec.HeadGroupSpec.RayStartParams, headPort,
		utils.IsAutoscalingEnabled(&instance.Spec), creator, fqdnRayIP, nil, instance.Spec.RayVersion)
	return pod, controllerutil.SetControllerReference(&instance, &pod, scheme)
}

// buildWorkerPod is the controller's buildWorkerPod for the group's first replica (index 0, host 0).
func buildWorkerPod(ctx context.Context, instance rayv1.RayCluster, worker rayv1.WorkerGroupSpec) (corev1.Pod, error) {
	podName := utils.PodName(fmt.Sprintf("%s-%s", instance.Name, worker.GroupName), rayv1.WorkerNode, true)
	fqdnRayIP := utils.GenerateFQDNServiceName(ctx, instance, instance.Namespace)
	headPort := common.GetHeadPort(instance.Spec.HeadGroupSpec.RayStartParams)
	replicaGroup := ""
	if worker.NumOfHosts > 1 && features.Enabled(features.RayMultiHostIndexing) {
		replicaGroup = utils.GenerateRayWorkerReplicaGroupName(worker.GroupName)
	}
	template := common.DefaultWorkerPodTemplate(ctx, instance, worker, podName, fqdnRayIP, headPort, replicaGroup, 0, 0)
	creator := utils.GetCRDType(instance.Labels[utils.RayOriginatedFromCRDLabelKey])
	pod := common.BuildPod(ctx, template, rayv1.WorkerNode, worker.RayStartParams, headPort,
		utils.IsAutoscalingEnabled(&instance.Spec), creator, fqdnRayIP, nil, instance.Spec.RayVersion)
	return pod, controllerutil.SetControllerReference(&instance, &pod, scheme)
}

// headService is what reconcileHeadService builds (the app-name label and the headServiceAnnotations carried over).
func headService(ctx context.Context, instance rayv1.RayCluster) (*corev1.Service, error) {
	labels := map[string]string{}
	if value, ok := instance.Spec.HeadGroupSpec.Template.ObjectMeta.Labels[utils.KubernetesApplicationNameLabelKey]; ok {
		labels[utils.KubernetesApplicationNameLabelKey] = value
	}
	annotations := map[string]string{}
	maps.Copy(annotations, instance.Spec.HeadServiceAnnotations)
	service, err := common.BuildServiceForHeadPod(ctx, instance, labels, annotations)
	if err != nil {
		return nil, err
	}
	return service, controllerutil.SetControllerReference(&instance, service, scheme)
}

// buildCluster is what the RayCluster controller creates for a valid cluster: the head Pod, one Pod per worker
// group, the head Service and, with a multi-host group, the headless Service. Every builder gets its own copy:
// DefaultHeadPodTemplate and its kin change the rayStartParams they are given.
func buildCluster(ctx context.Context, instance rayv1.RayCluster) (cluster, error) {
	built := cluster{Name: instance.Name}
	head, err := buildHeadPod(ctx, *instance.DeepCopy())
	if err != nil {
		return built, err
	}
	built.Pods = append(built.Pods, groupPods{Group: "headgroup", Type: "head", Min: 1, Max: 1, Desired: 1, Pod: head})
	multiHost := false
	for _, worker := range instance.Spec.WorkerGroupSpecs {
		copied := instance.DeepCopy()
		pod, err := buildWorkerPod(ctx, *copied, *worker.DeepCopy())
		if err != nil {
			return built, err
		}
		hosts := int64(max(worker.NumOfHosts, 1))
		multiHost = multiHost || worker.NumOfHosts > 1
		built.Pods = append(built.Pods, groupPods{
			Group: worker.GroupName, Type: "worker", Pod: pod,
			Min:     int64(ptr.Deref(worker.MinReplicas, 0)) * hosts,
			Max:     int64(ptr.Deref(worker.MaxReplicas, 0)) * hosts,
			Desired: int64(utils.GetWorkerGroupDesiredReplicas(worker)) * hosts,
		})
	}
	service, err := headService(ctx, *instance.DeepCopy())
	if err != nil {
		return built, err
	}
	built.Services = append(built.Services, service)
	if multiHost {
		headless := common.BuildHeadlessServiceForRayCluster(*instance.DeepCopy())
		if err := controllerutil.SetControllerReference(&instance, headless, scheme); err != nil {
			return built, err
		}
		built.Services = append(built.Services, headless)
	}
	return built, nil
}

// ownedCluster is the RayCluster a RayJob or RayService controller creates from its spec (constructRayClusterFor*,
// unexported): the owner's labels and annotations, the originated-from labels, the owner reference.
func ownedCluster(owner client.Object, crd utils.CRDType, spec rayv1.RayClusterSpec, name string,
	labels, annotations map[string]string) (rayv1.RayCluster, error) {
	all := maps.Clone(owner.GetLabels())
	if all == nil {
		all = map[string]string{}
	}
	all[utils.RayOriginatedFromCRNameLabelKey] = owner.GetName()
	all[utils.RayOriginatedFromCRDLabelKey] = utils.RayOriginatedFromCRDLabelValue(crd)
	maps.Copy(all, labels)
	notes := maps.Clone(owner.GetAnnotations())
	if notes == nil {
		notes = map[string]string{}
	}
	maps.Copy(notes, annotations)
	instance := rayv1.RayCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: rayv1.GroupVersion.String(), Kind: "RayCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: owner.GetNamespace(), Labels: all, Annotations: notes},
		Spec:       *spec.DeepCopy(),
	}
	return instance, controllerutil.SetControllerReference(owner, &instance, scheme)
}
