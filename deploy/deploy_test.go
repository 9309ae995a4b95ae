// Package deploy holds what runs dsh serve in containers: the Dockerfile
// and the Kubernetes manifests (docs/operations.md). Its tests validate
// them offline, with no cluster, container engine or Envoy: each manifest
// is decoded strictly (an unknown or misspelt field fails) into the
// k8s.io/api types; the Envoy bootstrap in envoy.yaml's ConfigMap into the
// Envoy API's Go types (go-control-plane) of the version its image runs,
// typed extension configs included, then checked against the API's
// validation rules and for deprecated fields (envoy_test.go); and the
// Dockerfile is read instruction by instruction for what docs/spec.md §15
// asks of it, its ENTRYPOINT run as PID 1 of a pid namespace (reap_test.go)
// and its HEALTHCHECK against its CMD (healthcheck_linux_test.go). As
// root, the Deployment's container runs as a kubelet would run it
// (kubelet_linux_test.go), and the systemd unit is verified and its
// ExecStart run (systemd_linux_test.go).
package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// documents splits a multi-document YAML file.
func documents(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]byte
	for _, d := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
		if strings.TrimSpace(stripComments(d)) != "" {
			docs = append(docs, []byte(d))
		}
	}
	return docs
}

func stripComments(s string) string {
	return regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(s, "")
}

// strict decodes one YAML document into v, refusing unknown fields.
func strict(t *testing.T, doc []byte, v any) {
	t.Helper()
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%T: %v\n%s", v, err, doc)
	}
}

// kindOf reads a document's apiVersion and kind.
func kindOf(t *testing.T, doc []byte) string {
	var tm metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		t.Fatal(err)
	}
	return tm.APIVersion + " " + tm.Kind
}

// drainBudget is what terminationGracePeriodSeconds must cover
// (docs/spec.md §15): the drain timeout + graceMs + 10 s.
func drainBudget(t *testing.T, args []string, cfg string) time.Duration {
	drain := 30 * time.Second
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--drain-timeout="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			drain = d
		}
	}
	grace := 3 * time.Second
	if m := regexp.MustCompile(`graceMs:\s*(\d+)`).FindStringSubmatch(cfg); m != nil {
		var ms int
		fmt.Sscan(m[1], &ms)
		grace = time.Duration(ms) * time.Millisecond
	}
	return drain + grace + 10*time.Second
}

// TestManifests: dsh.yaml is a ConfigMap, a Deployment, a Service and a
// PodDisruptionBudget, strictly valid, with what docs/spec.md §15 asks:
// probes on /healthz and /readyz, a grace period that covers the drain,
// the token from a Secret, a non-root user; the Service is headless, so
// Envoy (envoy.yaml) sees each replica.
func TestManifests(t *testing.T) {
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
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers", len(pod.Containers))
	}
	c := pod.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	budget := drainBudget(t, c.Args, cm.Data["dsh.yaml"])
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < budget {
		t.Errorf("terminationGracePeriodSeconds %v, want at least %v", g, budget)
	}
	tokenFromSecret := slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool {
		return e.Name == "DSH_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil
	})
	if !tokenFromSecret {
		t.Errorf("DSH_TOKEN does not come from a Secret: %+v", c.Env)
	}
	if sc := pod.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod security context %+v: want a non-root user", sc)
	}
	// Built and pushed by the user (docs/operations.md), never pulled as
	// a public "dsh:latest".
	if c.Image != "REGISTRY/dsh:VERSION" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %q, pull policy %q: want the placeholder REGISTRY/dsh:VERSION and IfNotPresent", c.Image, c.ImagePullPolicy)
	}
	if !slices.Contains(c.Args, "serve") {
		t.Errorf("args %q do not run dsh serve", c.Args)
	}
	sel := dep.Spec.Selector.MatchLabels
	for what, labels := range map[string]map[string]string{"service": svc.Spec.Selector, "pdb": pdb.Spec.Selector.MatchLabels, "pod": dep.Spec.Template.Labels} {
		for k, v := range sel {
			if labels[k] != v {
				t.Errorf("%s labels %v do not match the deployment's selector %v", what, labels, sel)
			}
		}
	}
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses {
		t.Errorf("the Service is not headless with every pod listed (clusterIP %q, publishNotReadyAddresses %v): Envoy must see each replica, draining ones too", svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
	}
	if pdb.Spec.MaxUnavailable == nil && pdb.Spec.MinAvailable == nil {
		t.Error("the PodDisruptionBudget bounds nothing")
	}
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
	line      int
}

// dockerfile reads path's instructions.
func dockerfile(t *testing.T, path string) []instruction {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	start, n := 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasPrefix(line, "#") {
			continue // a comment inside a continued instruction
		}
		if s, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.Join(strings.Fields(args), " "), start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("%s ends inside a continued instruction", path)
	}
	return out
}

// TestDockerfile: the Dockerfile, read as a container engine would, has
// only known instructions; builds dsh from source with the Go of go.mod;
// and runs it from debian slim with bash, coreutils and bubblewrap as a
// non-root user, in the exec form (the drain needs the SIGTERM), dsh last.
func TestDockerfile(t *testing.T) {
	known := []string{"FROM", "RUN", "COPY", "ADD", "WORKDIR", "ENV", "ARG", "USER", "EXPOSE", "ENTRYPOINT", "CMD", "LABEL", "STOPSIGNAL", "HEALTHCHECK", "SHELL", "VOLUME", "ONBUILD"}
	ins := dockerfile(t, "Dockerfile")
	var froms []instruction
	for _, in := range ins {
		if !slices.Contains(known, in.cmd) {
			t.Errorf("line %d: unknown instruction %s", in.line, in.cmd)
		}
		if in.cmd == "FROM" {
			froms = append(froms, in)
		}
	}
	if len(froms) != 2 {
		t.Fatalf("%d stages, want a build stage and the image", len(froms))
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goVersion == nil || !strings.HasPrefix(froms[0].args, "golang:"+string(goVersion[1])+"-") {
		t.Errorf("build stage %q does not use the Go of go.mod (%s)", froms[0].args, goVersion)
	}
	if !regexp.MustCompile(`^debian:[a-z]+-slim@`).MatchString(froms[1].args) {
		t.Errorf("image stage %q is not debian slim", froms[1].args)
	}
	// Pinned by tag and digest: a rebuild gets the same base images.
	pinned := regexp.MustCompile(`^[a-z0-9./-]+:[A-Za-z0-9._-]+@sha256:[0-9a-f]{64}( AS [a-z]+)?$`)
	for _, f := range froms {
		if !pinned.MatchString(f.args) {
			t.Errorf("line %d: FROM %s is not pinned by tag and digest (IMAGE:TAG@sha256:DIGEST)", f.line, f.args)
		}
	}
	final := ins[slices.IndexFunc(ins, func(in instruction) bool { return in.line == froms[1].line }):]
	var apt, user, entry, health string
	built := false
	for _, in := range ins {
		if in.cmd == "RUN" && strings.Contains(in.args, "go build") && strings.Contains(in.args, "./cmd/dsh") {
			built = true
		}
	}
	for _, in := range final {
		switch {
		case in.cmd == "RUN" && strings.Contains(in.args, "apt-get install"):
			apt = in.args
		case in.cmd == "USER":
			user = in.args
		case in.cmd == "ENTRYPOINT":
			entry = in.args
		case in.cmd == "HEALTHCHECK":
			health = in.args
		}
	}
	if !built {
		t.Error("dsh is not built from source (go build ./cmd/dsh)")
	}
	for _, pkg := range []string{"bash", "coreutils", "bubblewrap"} {
		if !slices.Contains(strings.Fields(apt), pkg) {
			t.Errorf("the image does not install %s: %q", pkg, apt)
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("USER %q: want a non-root user", user)
	}
	var argv []string
	if err := json.Unmarshal([]byte(entry), &argv); err != nil || len(argv) == 0 || !strings.HasSuffix(argv[len(argv)-1], "/dsh") {
		t.Errorf("ENTRYPOINT %q: want the exec form running dsh (under an init: TestEntrypointReapsOrphans)", entry)
	}
	if probe := healthcheck(t, ins); !strings.Contains(strings.Join(probe, " "), "/healthz") {
		t.Errorf("HEALTHCHECK %q: want a probe of /healthz (run by TestHealthcheck)", health)
	}
}

// healthcheck is the argv of the final stage's HEALTHCHECK, in the exec
// form (CMD [...]), after its options.
func healthcheck(t *testing.T, ins []instruction) []string {
	t.Helper()
	var health string
	for _, in := range ins {
		if in.cmd == "HEALTHCHECK" {
			health = in.args
		}
	}
	_, js, ok := strings.Cut(health, "CMD ")
	var argv []string
	if err := json.Unmarshal([]byte(js), &argv); !ok || err != nil || len(argv) == 0 {
		t.Fatalf("HEALTHCHECK %q: want one, in the exec form (CMD [...]): %v", health, err)
	}
	return argv
}

// TestDockerignore: the build context leaves out the repository's
// history, the npm clients .ci/run installs and release builds.
func TestDockerignore(t *testing.T) {
	data, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	for _, want := range []string{".git", ".ci/node", "dist"} {
		if !slices.Contains(lines, want) {
			t.Errorf(".dockerignore lacks %s: %q", want, lines)
		}
	}
}

// kinds maps a document's "apiVersion kind" to what it decodes into.
type kinds map[string]any

// decodeManifest decodes the documents of path strictly, each into the
// value its kind names in into, and checks that they come in the order
// want.
func decodeManifest(t *testing.T, path string, into kinds, want ...string) {
	t.Helper()
	var seen []string
	for _, doc := range documents(t, path) {
		k := kindOf(t, doc)
		seen = append(seen, k)
		v, ok := into[k]
		if !ok {
			t.Errorf("%s: unexpected document %s", path, k)
			continue
		}
		strict(t, doc, v)
	}
	if !slices.Equal(seen, want) {
		t.Fatalf("%s: documents %q, want %q", path, seen, want)
	}
}

// TestOperationsDocs: docs/operations.md's container examples work end to
// end: docker run publishes on loopback only and takes a token the user
// set and keeps (not one made inline and never shown), the client side
// sends it, and the Kubernetes steps build, push, name the image, create
// the Secret and apply, in that order.
func TestOperationsDocs(t *testing.T) {
	data, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	var runs []string
	for _, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(l, "docker run") {
			runs = append(runs, l)
		}
	}
	if len(runs) == 0 {
		t.Fatal("no docker run example")
	}
	for _, r := range runs {
		if !regexp.MustCompile(`-p 127\.0\.0\.1:\d+:\d+`).MatchString(r) || regexp.MustCompile(`-p \d+:\d+`).MatchString(r) {
			t.Errorf("%q: want the port published on 127.0.0.1 only", r)
		}
		if strings.Contains(r, "$(") || !regexp.MustCompile(`-e DSH_TOKEN( |$)`).MatchString(r) {
			t.Errorf("%q: want the token from the user's environment (-e DSH_TOKEN), not made inline", r)
		}
	}
	if !strings.Contains(doc, `-H "Authorization: Bearer $DSH_TOKEN"`) {
		t.Error("no client example sends the token")
	}
	last := -1
	for _, step := range []string{"docker build", "docker push", "sed -i \"s|REGISTRY/dsh:VERSION|", "kubectl create secret", "kubectl apply"} {
		i := strings.Index(doc[last+1:], step)
		if i < 0 {
			t.Errorf("the Kubernetes steps lack %q after the one before", step)
			continue
		}
		last += 1 + i
	}
}
