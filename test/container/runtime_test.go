package container

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// optOutEnv, set to "skip", skips the test where podman cannot be installed. Nothing else skips it:
// without podman the test fails and says how to install it.
const optOutEnv = "APF_CONTAINER_TEST"

// podman runs podman with the settings these machines need (../shared/notes: VMs that refuse
// raising rlimits, cgroup v1 in hybrid mode) and its own storage under a test directory, so that
// nothing is left in the machine's image store.
type podman struct {
	global []string
	env    []string
}

// newPodman fails the test when podman or runc is missing (hack/install-podman.sh installs
// them; `make test-container` runs it first) unless APF_CONTAINER_TEST=skip.
func newPodman(t *testing.T) *podman {
	t.Helper()
	for _, bin := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv(optOutEnv) == "skip" {
				t.Skipf("%s not found and %s=skip: the image is not run in a container runtime", bin, optOutEnv)
			}
			t.Fatalf("%s not found: run hack/install-podman.sh (root, apt-get) or install podman and runc; %s=skip opts out", bin, optOutEnv)
		}
	}
	// Not t.TempDir: the storage holds files owned by the container's user and mounts that
	// podman removes itself in cleanup.
	dir, err := os.MkdirTemp("", "apf-podman-")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "containers.conf")
	// default_ulimits: runc's setrlimit is refused on these VMs. The file logger and events log
	// need no journald.
	data := "[containers]\ndefault_ulimits = []\nlog_driver = \"k8s-file\"\n[engine]\nevents_logger = \"file\"\n"
	if err := os.WriteFile(conf, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &podman{
		global: []string{"--runtime", "runc", "--cgroup-manager", "cgroupfs",
			"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--tmpdir", filepath.Join(dir, "tmp")},
		env: append(os.Environ(), "CONTAINERS_CONF="+conf),
	}
	t.Cleanup(func() {
		if out, err := p.run("system", "reset", "--force"); err != nil {
			t.Logf("podman system reset: %v: %s", err, out)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("removing podman's storage %s: %v", dir, err)
		}
	})
	return p
}

// run runs podman with args and returns its combined output.
func (p *podman) run(args ...string) (string, error) {
	cmd := exec.Command("podman", append(append([]string{}, p.global...), args...)...)
	cmd.Env = p.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return strings.TrimSpace(out.String()), err
}

// must runs podman and fails the test on an error.
func (p *podman) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := p.run(args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// containerState is what the test reads of `podman inspect`.
type containerState struct {
	State struct {
		Status   string
		Running  bool
		Pid      int
		ExitCode int
	}
}

func (p *podman) inspect(t *testing.T, name string) containerState {
	t.Helper()
	var states []containerState
	if err := json.Unmarshal([]byte(p.must(t, "inspect", "--type", "container", name)), &states); err != nil || len(states) != 1 {
		t.Fatalf("podman inspect %s: %v (%d results)", name, err, len(states))
	}
	return states[0]
}

// imageUser returns the image's configured user.
func (p *podman) imageUser(t *testing.T, ref string) string {
	t.Helper()
	return p.must(t, "image", "inspect", "--format", "{{.User}}", ref)
}

// rssKiB reads the resident set size (VmRSS) of the container's main process, by its host pid,
// from /proc: the test runs as root on the same host.
func rssKiB(pid int) (int, error) {
	status, err := procStatus(pid)
	if err != nil {
		return 0, err
	}
	v, ok := status["VmRSS"]
	if !ok {
		return 0, fmt.Errorf("/proc/%d/status has no VmRSS", pid)
	}
	return strconv.Atoi(strings.TrimSuffix(v, " kB"))
}

// nonRootUser reports whether an image's user (name, uid or uid:gid) is a non-zero numeric uid,
// the kubelet's condition for runAsNonRoot (a name it cannot check and refuses).
func nonRootUser(user string) bool {
	uid, _, _ := strings.Cut(user, ":")
	n, err := strconv.Atoi(uid)
	return err == nil && n != 0
}

// procStatus returns the fields of /proc/<pid>/status by name.
func procStatus(pid int) (map[string]string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields, nil
}

// rootMountOptions returns the mount options of the process's root filesystem, from
// /proc/<pid>/mountinfo (field 4 is the mount point, field 5 the options).
func rootMountOptions(pid int) (string, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			return f[5], nil
		}
	}
	return "", fmt.Errorf("/proc/%d/mountinfo has no root mount", pid)
}

// memoryLimit returns the memory limit of the process's cgroup, in bytes: cgroup v1's
// memory.limit_in_bytes, or v2's memory.max.
func memoryLimit(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		var file string
		switch {
		case f[1] == "memory":
			file = filepath.Join("/sys/fs/cgroup/memory", f[2], "memory.limit_in_bytes")
		case f[0] == "0" && f[1] == "":
			file = filepath.Join("/sys/fs/cgroup", f[2], "memory.max")
		default:
			continue
		}
		if v, err := os.ReadFile(file); err == nil {
			return strconv.ParseInt(strings.TrimSpace(string(v)), 10, 64)
		}
	}
	return 0, fmt.Errorf("no memory limit found for the cgroups of pid %d:\n%s", pid, data)
}
