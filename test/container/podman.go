// Package container runs the operator's image in a real container runtime (podman) with the
// pod spec the Helm chart renders, against a real kube-apiserver (envtest): the test plays the
// kubelet's part (service-account token, Secret volume, probes, SIGTERM) and checks what the
// operator does from inside the container.
//
// This file is the translator from the chart's pod spec to podman's flags. It is mechanical,
// so that a change to the chart's Deployment reaches the container the test runs, and it refuses
// what it cannot express rather than dropping it.
package container

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// ServiceAccountMountPath is where the kubelet mounts a pod's service-account token, CA bundle
// and namespace (client-go's in-cluster configuration reads them there).
const ServiceAccountMountPath = "/var/run/secrets/kubernetes.io/serviceaccount"

// defaultContainerAnnotation names the pod's main container (kubectl's annotation).
const defaultContainerAnnotation = "kubectl.kubernetes.io/default-container"

// Kubelet is what a kubelet would provide to the pod: its identity, the API server's address
// and the host directories holding the contents of its volumes.
type Kubelet struct {
	PodName   string
	Namespace string
	// APIHost and APIPort become KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT.
	APIHost, APIPort string
	// ServiceAccountDir holds token, ca.crt and namespace.
	ServiceAccountDir string
	// SecretDirs maps a Secret's name to a host directory holding its keys as files.
	SecretDirs map[string]string
}

// HTTPProbe is an httpGet probe resolved to a port number.
type HTTPProbe struct {
	Path string
	Port int32
}

// Run is a pod's main container as a `podman run` command line and what the caller must do
// that podman does not: probe it, stop it within the grace period, check the image's user.
type Run struct {
	// Args are podman's arguments after `podman`, starting with "run".
	Args []string
	// Image is the container's image reference.
	Image string
	// Liveness and Readiness are the container's probes; nil when it has none.
	Liveness, Readiness *HTTPProbe
	// StopTimeout is the pod's termination grace period, in seconds (`podman stop -t`).
	StopTimeout int64
	// RunAsNonRoot: the kubelet refuses to start the container if the image's user is root.
	RunAsNonRoot bool
}

// Translate turns the Deployment's pod template into a podman command that runs its main
// container detached under the given name, with the host's network (the test control plane
// listens on the host's loopback). Options podman would need but the translator does not know
// are errors, naming the field.
func Translate(d *appsv1.Deployment, name string, k Kubelet) (*Run, error) {
	spec := &d.Spec.Template.Spec
	c, err := mainContainer(d)
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("spec.template.spec.containers[%s]", c.Name)
	r := &Run{Image: c.Image, StopTimeout: 30}
	if spec.TerminationGracePeriodSeconds != nil {
		r.StopTimeout = *spec.TerminationGracePeriodSeconds
	}
	args := []string{"run", "--detach", "--name", name, "--hostname", k.PodName, "--network", "host",
		"--stop-timeout", strconv.FormatInt(r.StopTimeout, 10)}
	sec, err := securityFlags(spec.SecurityContext, c.SecurityContext, path, r)
	if err != nil {
		return nil, err
	}
	args = append(args, sec...)
	env, err := envFlags(c, spec, k, path)
	if err != nil {
		return nil, err
	}
	args = append(args, env...)
	mounts, err := mountFlags(c, spec, k, path)
	if err != nil {
		return nil, err
	}
	args = append(args, mounts...)
	args = append(args, resourceFlags(c.Resources)...)
	if r.Liveness, err = httpProbe(c.LivenessProbe, c.Ports, path+".livenessProbe"); err != nil {
		return nil, err
	}
	if r.Readiness, err = httpProbe(c.ReadinessProbe, c.Ports, path+".readinessProbe"); err != nil {
		return nil, err
	}
	if len(c.Command) > 0 {
		args = append(args, "--entrypoint", c.Command[0])
		args = append(args, c.Image)
		args = append(args, c.Command[1:]...)
	} else {
		args = append(args, c.Image)
	}
	r.Args = append(args, c.Args...)
	return r, nil
}

// mainContainer is the container the default-container annotation names, else the first.
func mainContainer(d *appsv1.Deployment) (*corev1.Container, error) {
	containers := d.Spec.Template.Spec.Containers
	if len(containers) == 0 {
		return nil, fmt.Errorf("the Deployment %s: spec.template.spec.containers is empty", d.Name)
	}
	want := d.Spec.Template.Annotations[defaultContainerAnnotation]
	for i := range containers {
		if containers[i].Name == want {
			return &containers[i], nil
		}
	}
	if want != "" {
		return nil, fmt.Errorf("the Deployment %s: annotation %s names container %q, which the pod does not have", d.Name, defaultContainerAnnotation, want)
	}
	return &containers[0], nil
}

// securityFlags maps the pod's and the container's security contexts (the container's wins).
// seccompProfile RuntimeDefault is podman's default profile, so it needs no flag.
func securityFlags(pod *corev1.PodSecurityContext, c *corev1.SecurityContext, path string, r *Run) ([]string, error) {
	var user, group *int64
	if pod != nil {
		user, group = pod.RunAsUser, pod.RunAsGroup
		r.RunAsNonRoot = pod.RunAsNonRoot != nil && *pod.RunAsNonRoot
		if p := pod.SeccompProfile; p != nil && p.Type != corev1.SeccompProfileTypeRuntimeDefault {
			return nil, fmt.Errorf("spec.template.spec.securityContext.seccompProfile.type %q: only RuntimeDefault is translated", p.Type)
		}
	}
	var args []string
	if c != nil {
		if c.RunAsUser != nil {
			user = c.RunAsUser
		}
		if c.RunAsGroup != nil {
			group = c.RunAsGroup
		}
		if c.RunAsNonRoot != nil {
			r.RunAsNonRoot = *c.RunAsNonRoot
		}
		if c.Privileged != nil && *c.Privileged {
			return nil, fmt.Errorf("%s.securityContext.privileged: not translated", path)
		}
		if c.ReadOnlyRootFilesystem != nil && *c.ReadOnlyRootFilesystem {
			// podman's --read-only also mounts tmpfs on /tmp, /var/tmp and /run; a pod's
			// read-only root has no writable path but its volumes.
			args = append(args, "--read-only", "--read-only-tmpfs=false")
		}
		if c.AllowPrivilegeEscalation != nil && !*c.AllowPrivilegeEscalation {
			args = append(args, "--security-opt", "no-new-privileges")
		}
		if caps := c.Capabilities; caps != nil {
			for _, d := range caps.Drop {
				args = append(args, "--cap-drop", string(d))
			}
			for _, a := range caps.Add {
				args = append(args, "--cap-add", string(a))
			}
		}
	}
	if user != nil {
		u := strconv.FormatInt(*user, 10)
		if group != nil {
			u += ":" + strconv.FormatInt(*group, 10)
		}
		args = append(args, "--user", u)
	}
	return args, nil
}

// envFlags sets the container's variables, resolving the downward-API fields the kubelet
// would, and the variables the kubelet adds for in-cluster clients.
func envFlags(c *corev1.Container, spec *corev1.PodSpec, k Kubelet, path string) ([]string, error) {
	if len(c.EnvFrom) > 0 {
		return nil, fmt.Errorf("%s.envFrom: not translated", path)
	}
	args := []string{"--env", "KUBERNETES_SERVICE_HOST=" + k.APIHost, "--env", "KUBERNETES_SERVICE_PORT=" + k.APIPort}
	for _, e := range c.Env {
		value := e.Value
		if e.ValueFrom != nil {
			f := e.ValueFrom.FieldRef
			if f == nil {
				return nil, fmt.Errorf("%s.env[%s].valueFrom: only fieldRef is translated", path, e.Name)
			}
			switch f.FieldPath {
			case "metadata.namespace":
				value = k.Namespace
			case "metadata.name":
				value = k.PodName
			case "spec.serviceAccountName":
				value = serviceAccountName(spec)
			default:
				return nil, fmt.Errorf("%s.env[%s].valueFrom.fieldRef.fieldPath %q: not translated", path, e.Name, f.FieldPath)
			}
		}
		args = append(args, "--env", e.Name+"="+value)
	}
	return args, nil
}

func serviceAccountName(spec *corev1.PodSpec) string {
	if spec.ServiceAccountName == "" {
		return "default"
	}
	return spec.ServiceAccountName
}

// mountFlags mounts the container's volumes: an emptyDir as a tmpfs (writable by anyone, as the
// kubelet makes it), a Secret from the host directory the caller keeps in sync, and the
// service-account token unless the pod opts out.
func mountFlags(c *corev1.Container, spec *corev1.PodSpec, k Kubelet, path string) ([]string, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	var args []string
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return nil, fmt.Errorf("%s.volumeMounts[%s]: no volume of that name in the pod", path, m.Name)
		}
		if m.SubPath != "" || m.SubPathExpr != "" {
			return nil, fmt.Errorf("%s.volumeMounts[%s].subPath: not translated", path, m.Name)
		}
		switch {
		case v.EmptyDir != nil:
			args = append(args, "--mount", "type=tmpfs,destination="+m.MountPath+",tmpfs-mode=1777")
		case v.Secret != nil:
			dir, ok := k.SecretDirs[v.Secret.SecretName]
			if !ok {
				return nil, fmt.Errorf("volume %s: no host directory for Secret %s", v.Name, v.Secret.SecretName)
			}
			args = append(args, "--mount", bind(dir, m.MountPath, m.ReadOnly))
		default:
			return nil, fmt.Errorf("volume %s: only emptyDir and secret volumes are translated", v.Name)
		}
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		args = append(args, "--mount", bind(k.ServiceAccountDir, ServiceAccountMountPath, true))
	}
	return args, nil
}

func bind(source, destination string, readOnly bool) string {
	s := "type=bind,source=" + source + ",destination=" + destination
	if readOnly {
		s += ",ro=true"
	}
	return s
}

// resourceFlags applies the container's limits (its requests only schedule it).
func resourceFlags(r corev1.ResourceRequirements) []string {
	var args []string
	if m, ok := r.Limits[corev1.ResourceMemory]; ok {
		args = append(args, "--memory", strconv.FormatInt(m.Value(), 10))
	}
	if cpu, ok := r.Limits[corev1.ResourceCPU]; ok {
		args = append(args, "--cpus", strconv.FormatFloat(float64(cpu.MilliValue())/1000, 'f', -1, 64))
	}
	return args
}

// httpProbe resolves an httpGet probe's port (a number or a container port's name).
func httpProbe(p *corev1.Probe, ports []corev1.ContainerPort, path string) (*HTTPProbe, error) {
	if p == nil {
		return nil, nil
	}
	if p.HTTPGet == nil {
		return nil, fmt.Errorf("%s: only httpGet probes are translated", path)
	}
	if p.HTTPGet.Scheme != "" && p.HTTPGet.Scheme != corev1.URISchemeHTTP {
		return nil, fmt.Errorf("%s.httpGet.scheme %q: only HTTP is translated", path, p.HTTPGet.Scheme)
	}
	port := p.HTTPGet.Port
	if port.IntValue() > 0 {
		return &HTTPProbe{Path: p.HTTPGet.Path, Port: int32(port.IntValue())}, nil
	}
	for _, cp := range ports {
		if cp.Name == port.String() {
			return &HTTPProbe{Path: p.HTTPGet.Path, Port: cp.ContainerPort}, nil
		}
	}
	return nil, fmt.Errorf("%s.httpGet.port %q: no container port of that name", path, strings.TrimSpace(port.String()))
}

// ContainerPort returns the number of the container's port of the given name.
func ContainerPort(d *appsv1.Deployment, portName string) (int32, error) {
	c, err := mainContainer(d)
	if err != nil {
		return 0, err
	}
	for _, p := range c.Ports {
		if p.Name == portName {
			return p.ContainerPort, nil
		}
	}
	return 0, fmt.Errorf("container %s has no port named %q", c.Name, portName)
}
