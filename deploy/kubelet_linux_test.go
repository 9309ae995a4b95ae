package deploy

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctest"
	"golang.org/x/sys/unix"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// podScript makes, in a private mount namespace (unshare(1) made it, and
// a pid and a network namespace), the filesystem the container of
// dsh.yaml sees, then runs its command as the pod's user. The image is
// this machine's root through an overlay (writes go to a tmpfs), with
// what deploy/Dockerfile adds: dsh at /usr/local/bin/dsh and the dsh
// user's home; /var/tmp is a fresh tmpfs of mode 1777, as debian ships
// it. Each volume is bind-mounted from the directory the test made as the
// kubelet makes it. Then, as the container runtime does with the pod's
// securityContext: runAsUser/runAsGroup, no supplementary groups, no new
// privileges (allowPrivilegeEscalation: false), no capabilities (drop:
// ALL). The RuntimeDefault seccomp profile is not applied.
//
// $S is the scratch directory, $RUN_UID and $RUN_GID the user, $MOUNTS
// lines of "source target ro|rw"; the arguments are the command.
const podScript = `
set -eu
r=$S/root
mount -t tmpfs -o mode=0755 tmpfs "$S/ovl"
mkdir "$S/ovl/up" "$S/ovl/work"
mount -t overlay overlay -o "lowerdir=/,upperdir=$S/ovl/up,workdir=$S/ovl/work" "$r"
mount --rbind /dev "$r/dev"
mount -t proc proc "$r/proc"
mount --rbind /sys "$r/sys"
mount -t tmpfs -o mode=1777 tmpfs "$r/var/tmp"
mkdir -p "$r/usr/local/bin" "$r/home/dsh"
cp "$S/dsh" "$r/usr/local/bin/dsh"
chown "$RUN_UID:$RUN_GID" "$r/home/dsh"
chmod 0700 "$r/home/dsh"
while read -r src dst mode; do
  [ -n "$src" ] || continue
  mkdir -p "$r$dst"
  mount --bind "$src" "$r$dst"
  if [ "$mode" = ro ]; then mount -o remount,bind,ro "$r$dst"; fi
done <<<"$MOUNTS"
ip link set lo up
u=$RUN_UID g=$RUN_GID
unset S MOUNTS RUN_UID RUN_GID
exec chroot "$r" setpriv --reuid="$u" --regid="$g" --clear-groups --no-new-privs --bounding-set=-all -- "$@"
`

// kubeletEmptyDir makes dir as the kubelet makes an emptyDir volume of
// the default medium: a directory of root's, mode 0777 without the
// sticky bit (pkg/volume/emptydir: setupDir's perm, chmod'ed past the
// umask); with a pod fsGroup the kubelet then gives it that group and the
// setgid bit (pkg/volume: SetVolumeOwnership), still without the sticky
// bit.
func kubeletEmptyDir(t *testing.T, dir string, fsGroup *int64) {
	t.Helper()
	if err := os.Mkdir(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o777)
	if fsGroup != nil {
		if err := os.Lchown(dir, -1, int(*fsGroup)); err != nil {
			t.Fatal(err)
		}
		mode |= os.ModeSetgid
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
}

// netnsDialer dials in the network namespace ns (a /proc/PID/ns/net
// path) from a thread of its own that enters it: the socket belongs to
// that namespace for its life. The thread is never unlocked, so it ends
// with its goroutine, not reused by the runtime in the other namespace.
func netnsDialer(ns string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		type result struct {
			c   net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread()
			fd, err := unix.Open(ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				ch <- result{nil, err}
				return
			}
			defer unix.Close(fd)
			if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
				ch <- result{nil, err}
				return
			}
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			ch <- result{c, err}
		}()
		r := <-ch
		return r.c, r.err
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// podCommand is the container's argv: the image's ENTRYPOINT (or the
// container's command) and its CMD (or the container's args).
func podCommand(t *testing.T, c corev1.Container) []string {
	var entry, cmd []string
	for _, in := range dockerfile(t, "Dockerfile") {
		switch in.cmd {
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(in.args), &entry); err != nil {
				t.Fatalf("ENTRYPOINT %s: %v", in.args, err)
			}
		case "CMD":
			if err := json.Unmarshal([]byte(in.args), &cmd); err != nil {
				t.Fatalf("CMD %s: %v", in.args, err)
			}
		}
	}
	if len(c.Command) > 0 {
		entry, cmd = c.Command, nil
	}
	if len(c.Args) > 0 {
		cmd = c.Args
	}
	return append(entry, cmd...)
}

// TestManifestStartsOnKubelet: dsh.yaml's Deployment starts and serves
// with the volumes as a kubelet makes them, above all the emptyDir on
// /tmp (root's, mode 0777, no sticky bit), which dsh refuses as a spill
// base. The container's exact command, args and env (the Secret's token
// as `kubectl create secret` in the manifest's comment makes it), its
// ConfigMap and its volumes come from the manifest; it runs as the pod's
// user in namespaces of its own (podScript). The kubelet's startup probe
// must pass within its budget, then an MCP session runs a command whose
// output spills and reads the spill file back; SIGTERM then stops it and
// every process of the pod is gone.
func TestManifestStartsOnKubelet(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP-REASON: needs root for mount, pid and network namespaces")
	}
	for _, tool := range []string{"unshare", "setpriv", "chroot", "ip", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed (.ci/run installs it): %v", tool, err)
		}
	}
	var (
		dep appsv1.Deployment
		svc corev1.Service
		pdb policyv1.PodDisruptionBudget
		cm  corev1.ConfigMap
	)
	decodeManifest(t, "kubernetes/dsh.yaml",
		kinds{"v1 ConfigMap": &cm, "apps/v1 Deployment": &dep, "v1 Service": &svc, "policy/v1 PodDisruptionBudget": &pdb},
		"v1 ConfigMap", "apps/v1 Deployment", "v1 Service", "policy/v1 PodDisruptionBudget")
	pod := dep.Spec.Template.Spec
	c := pod.Containers[0]
	sc := pod.SecurityContext
	if sc == nil || sc.RunAsUser == nil || sc.RunAsGroup == nil {
		t.Fatalf("pod security context %+v: want runAsUser and runAsGroup", sc)
	}

	scratch, err := os.MkdirTemp("", "dsh-kubelet-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(scratch) })
	for _, d := range []string{"ovl", "root", "vol"} {
		if err := os.Mkdir(filepath.Join(scratch, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The pod's user enters nothing here by path: the volumes are
	// bind-mounted and dsh copied into the overlay.
	if out, err := exec.Command("go", "build", "-o", filepath.Join(scratch, "dsh"), "../cmd/dsh").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	var mounts strings.Builder
	for _, vm := range c.VolumeMounts {
		var vol *corev1.Volume
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == vm.Name {
				vol = &pod.Volumes[i]
			}
		}
		if vol == nil {
			t.Fatalf("volume mount %q names no volume", vm.Name)
		}
		src := filepath.Join(scratch, "vol", vm.Name)
		switch {
		case vol.ConfigMap != nil && vol.ConfigMap.Name == cm.Name:
			if err := os.Mkdir(src, 0o755); err != nil {
				t.Fatal(err)
			}
			for k, v := range cm.Data {
				if err := os.WriteFile(filepath.Join(src, k), []byte(v), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case vol.EmptyDir != nil && vol.EmptyDir.Medium == corev1.StorageMediumDefault:
			kubeletEmptyDir(t, src, sc.FSGroup)
		default:
			t.Fatalf("volume %q: this test makes only the ConfigMap and default-medium emptyDirs", vm.Name)
		}
		mode := "rw"
		if vm.ReadOnly {
			mode = "ro"
		}
		if vm.SubPath != "" || strings.ContainsAny(src+vm.MountPath, " \n") {
			t.Fatalf("volume mount %+v: not made by this test", vm)
		}
		fmt.Fprintf(&mounts, "%s %s %s\n", src, vm.MountPath, mode)
	}

	// The Secret's token, as the manifest's comment makes it.
	raw := make([]byte, 32)
	rand.Read(raw)
	token := hex.EncodeToString(raw)
	env := []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/home/dsh",
		"HOSTNAME=dsh-0",
		"S=" + scratch,
		"MOUNTS=" + mounts.String(),
		"RUN_UID=" + strconv.FormatInt(*sc.RunAsUser, 10),
		"RUN_GID=" + strconv.FormatInt(*sc.RunAsGroup, 10),
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			env = append(env, e.Name+"="+e.Value)
		case e.ValueFrom.SecretKeyRef != nil:
			env = append(env, e.Name+"="+token)
		default:
			t.Fatalf("env %s: this test supplies only values and Secrets", e.Name)
		}
	}

	argv := podCommand(t, c)
	cmd := exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "--net", "--pid", "--fork", "--kill-child", "bash", "-c", podScript, "pod"}, argv...)...)
	cmd.Env = env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// The pod's init (the image's ENTRYPOINT once exec'd), whose end ends
	// every process of its pid namespace.
	var initPid int
	var pidns string
	t.Cleanup(func() {
		if initPid != 0 {
			syscall.Kill(initPid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		<-exited
	})

	// unshare(1) enters the network namespace itself; its child is the
	// pod's PID 1.
	initPid, pidns = unshareChild(t, cmd.Process.Pid)
	netns := fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid)
	// The network namespace is pinned open: unshare may end first.
	nsFile, err := os.Open(netns)
	if err != nil {
		t.Fatal(err)
	}
	defer nsFile.Close()
	client := &http.Client{
		Transport: &http.Transport{DialContext: netnsDialer(fmt.Sprintf("/proc/self/fd/%d", nsFile.Fd())), DisableKeepAlives: true},
		Timeout:   proctest.Scale(10 * time.Second),
	}

	// The startup probe: its path and port, within the time the kubelet
	// gives it (periodSeconds × failureThreshold).
	probe := c.StartupProbe
	if probe == nil || probe.HTTPGet == nil {
		t.Fatalf("startup probe %+v: want an httpGet", probe)
	}
	port := probe.HTTPGet.Port.IntValue()
	for _, p := range c.Ports {
		if p.Name == probe.HTTPGet.Port.String() {
			port = int(p.ContainerPort)
		}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	budget := time.Duration(probe.PeriodSeconds*probe.FailureThreshold) * time.Second
	deadline := time.Now().Add(proctest.Scale(budget))
	for {
		resp, err := client.Get(base + probe.HTTPGet.Path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the pod exited (%v) before its startup probe passed:\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("startup probe GET %s: not 200 within %v (%v):\n%s", probe.HTTPGet.Path, proctest.Scale(budget), err, out.String())
		}
		time.Sleep(time.Duration(probe.PeriodSeconds) * time.Second)
	}

	// A session whose command spills, then a command that reads the spill
	// file back.
	m := &mcpClient{t: t, client: client, url: base + "/mcp", token: token}
	m.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"kubelet-test","version":"1"}}}`)
	m.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	text := m.call(2, "seq 1 200000", "print many numbers")
	spill := regexp.MustCompile(`full output: (\S+)\]`).FindStringSubmatch(text)
	if spill == nil {
		t.Fatalf("seq 1 200000: no spill file named:\n%s\n%s", text, out.String())
	}
	if got := m.call(3, "wc -l < "+spill[1], "count the spilled lines"); !strings.HasPrefix(got, "200000\n") {
		t.Errorf("wc -l < %s: %q, want 200000", spill[1], got)
	}

	// SIGTERM, as the kubelet stops a container: dsh drains and exits 0,
	// and with the pod's PID 1 every process of its pid namespace ends.
	syscall.Kill(initPid, syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(proctest.Scale(time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second)):
		t.Fatalf("still running %v after SIGTERM:\n%s", proctest.Scale(time.Duration(*pod.TerminationGracePeriodSeconds)*time.Second), out.String())
	}
	exited <- nil
	initPid = 0
	pidnsEmpty(t, pidns)
}

// mcpClient speaks MCP's streamable HTTP transport to dsh serve, one
// request at a time.
type mcpClient struct {
	t       *testing.T
	client  *http.Client
	url     string
	token   string
	session string
}

// post sends msg and returns the JSON-RPC response it got, if any.
func (m *mcpClient) post(msg string) string {
	m.t.Helper()
	req, err := http.NewRequest(http.MethodPost, m.url, strings.NewReader(msg))
	if err != nil {
		m.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+m.token)
	if m.session != "" {
		req.Header.Set("Mcp-Session-Id", m.session)
	}
	resp, err := m.client.Do(req)
	if err != nil {
		m.t.Fatalf("POST %s: %v", msg, err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		m.session = id
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusAccepted {
		b, _ := io.ReadAll(resp.Body)
		m.t.Fatalf("POST %s: %s\n%s", msg, resp.Status, b)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.Contains(data, `"id"`) {
			return strings.TrimSpace(data)
		}
	}
	return ""
}

// call runs command with the bash tool and returns the result's text.
func (m *mcpClient) call(id int, command, description string) string {
	m.t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command, "description": description})
	resp := m.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":%s}}`, id, args))
	var r struct {
		Result struct {
			Content []struct{ Text string }
		}
		Error *struct{ Message string }
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil || r.Error != nil || len(r.Result.Content) == 0 {
		m.t.Fatalf("%s: %v %v\n%s", command, err, errors.New(fmt.Sprint(r.Error)), resp)
	}
	return r.Result.Content[0].Text
}
