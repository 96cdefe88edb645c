package container

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

var testKubelet = Kubelet{
	PodName: "op-0", Namespace: "ops", APIHost: "127.0.0.1", APIPort: "6443",
	ServiceAccountDir: "/host/sa", SecretDirs: map[string]string{"op-tls": "/host/tls"},
}

func testDeployment() *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "op"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{defaultContainerAnnotation: "manager"}},
			Spec: corev1.PodSpec{
				ServiceAccountName:            "op-sa",
				TerminationGracePeriodSeconds: ptr.To[int64](10),
				SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)},
				Volumes: []corev1.Volume{
					{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					{Name: "cert", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "op-tls"}}},
				},
				Containers: []corev1.Container{
					{Name: "sidecar", Image: "other"},
					{
						Name: "manager", Image: "img:v1", Args: []string{"manager", "--x=1"},
						Env: []corev1.EnvVar{
							{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
							{Name: "SA", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.serviceAccountName"}}},
							{Name: "PLAIN", Value: "v"},
						},
						Ports: []corev1.ContainerPort{{Name: "health", ContainerPort: 8081}},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
							Path: "/readyz", Port: intstr.FromString("health")}}},
						LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
							Path: "/healthz", Port: intstr.FromInt32(8082)}}},
						SecurityContext: &corev1.SecurityContext{
							ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
							RunAsUser: ptr.To[int64](65532), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{
							corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceCPU: resource.MustParse("500m")}},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "tmp", MountPath: "/tmp"},
							{Name: "cert", MountPath: "/tmp/certs", ReadOnly: true},
						},
					},
				},
			},
		}},
	}
}

// TestTranslate: every field of the pod spec the chart uses becomes its podman flag.
func TestTranslate(t *testing.T) {
	r, err := Translate(testDeployment(), "c1", testKubelet)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(r.Args, " ")
	for _, want := range []string{
		"run --detach --name c1 --hostname op-0 --network host --stop-timeout 10",
		"--read-only --read-only-tmpfs=false",
		"--security-opt no-new-privileges",
		"--cap-drop ALL",
		"--user 65532",
		"--env KUBERNETES_SERVICE_HOST=127.0.0.1 --env KUBERNETES_SERVICE_PORT=6443",
		"--env NS=ops --env SA=op-sa --env PLAIN=v",
		"--mount type=tmpfs,destination=/tmp,tmpfs-mode=1777",
		"--mount type=bind,source=/host/tls,destination=/tmp/certs,ro=true",
		"--mount type=bind,source=/host/sa,destination=" + ServiceAccountMountPath + ",ro=true",
		"--memory 536870912 --cpus 0.5",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("podman %s\nlacks %q", line, want)
		}
	}
	if !slices.Equal(r.Args[len(r.Args)-3:], []string{"img:v1", "manager", "--x=1"}) {
		t.Errorf("podman %s\ndoes not end with the image and the container's args", line)
	}
	if *r.Readiness != (HTTPProbe{"/readyz", 8081}) || *r.Liveness != (HTTPProbe{"/healthz", 8082}) {
		t.Errorf("probes %+v, %+v", *r.Readiness, *r.Liveness)
	}
	if r.StopTimeout != 10 || !r.RunAsNonRoot || r.Image != "img:v1" {
		t.Errorf("stop timeout %d, runAsNonRoot %v, image %q", r.StopTimeout, r.RunAsNonRoot, r.Image)
	}
}

// TestTranslateNoToken: a pod that opts out of the token gets no token mount.
func TestTranslateNoToken(t *testing.T) {
	d := testDeployment()
	d.Spec.Template.Spec.AutomountServiceAccountToken = ptr.To(false)
	r, err := Translate(d, "c1", testKubelet)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(r.Args, " "), ServiceAccountMountPath) {
		t.Errorf("automountServiceAccountToken false, yet the token is mounted: %q", r.Args)
	}
}

// TestTranslateRefuses: what the translator cannot express is an error naming the field, never
// a dropped setting.
func TestTranslateRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(d *appsv1.Deployment)
		want   string
	}{
		{"secret env", func(d *appsv1.Deployment) {
			c := &d.Spec.Template.Spec.Containers[1]
			c.Env = append(c.Env, corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{}}})
		}, "env[S].valueFrom"},
		{"unknown fieldRef", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[1].Env[0].ValueFrom.FieldRef.FieldPath = "status.podIP"
		}, `fieldPath "status.podIP"`},
		{"hostPath volume", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Volumes[0].VolumeSource = corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}
		}, "volume tmp"},
		{"secret without directory", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Volumes[1].Secret.SecretName = "other"
		}, "Secret other"},
		{"missing volume", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Volumes = d.Spec.Template.Spec.Volumes[:1]
		}, "volumeMounts[cert]"},
		{"exec probe", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[1].ReadinessProbe.HTTPGet = nil
		}, "readinessProbe: only httpGet"},
		{"unknown port name", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[1].ReadinessProbe.HTTPGet.Port = intstr.FromString("nope")
		}, `port "nope"`},
		{"privileged", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[1].SecurityContext.Privileged = ptr.To(true)
		}, "privileged"},
		{"default container missing", func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations[defaultContainerAnnotation] = "gone"
		}, `container "gone"`},
	} {
		d := testDeployment()
		tc.change(d)
		_, err := Translate(d, "c1", testKubelet)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one containing %q", tc.name, err, tc.want)
		}
	}
}
