package deploy

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	statefulv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/stateful_session/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	envelopev3 "github.com/envoyproxy/go-control-plane/envoy/extensions/http/stateful_session/envelope/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	// The typed configs envoy.yaml names: linked in, their types resolve
	// when the bootstrap's Any fields are decoded.
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
)

// sessionHeader is the header MCP's streamable HTTP transport carries a
// session's id in.
const sessionHeader = "Mcp-Session-Id"

// decodeBootstrap reads an Envoy bootstrap (YAML) as Envoy would, with
// the Envoy API of go.mod's go-control-plane: an unknown field anywhere,
// typed configs included, or an unknown typed config fails; so does a
// value the API's validation rules refuse, or a deprecated field.
func decodeBootstrap(y string) (*bootstrapv3.Bootstrap, error) {
	js, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		return nil, err
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &b); err != nil {
		return nil, err
	}
	if err := b.ValidateAll(); err != nil {
		return nil, err
	}
	if err := current(b.ProtoReflect(), "bootstrap"); err != nil {
		return nil, err
	}
	return &b, nil
}

// current walks m and the typed configs inside it: it refuses deprecated
// fields and enum values (Envoy warns, and a later version drops them),
// and validates each typed config, which the bootstrap's ValidateAll does
// not reach into.
func current(m protoreflect.Message, path string) error {
	if a, ok := m.Interface().(*anypb.Any); ok {
		inner, err := a.UnmarshalNew()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if v, ok := inner.(interface{ ValidateAll() error }); ok {
			if err := v.ValidateAll(); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
		}
		return current(inner.ProtoReflect(), path+"("+a.TypeUrl+")")
	}
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		err = currentField(fd, v, path+"."+string(fd.Name()))
		return err == nil
	})
	return err
}

// currentField is current for one set field.
func currentField(fd protoreflect.FieldDescriptor, v protoreflect.Value, path string) error {
	if fd.Options().(*descriptorpb.FieldOptions).GetDeprecated() {
		return fmt.Errorf("%s is deprecated", path)
	}
	if fd.Enum() != nil && !fd.IsList() {
		ev := fd.Enum().Values().ByNumber(v.Enum())
		if ev != nil && ev.Options().(*descriptorpb.EnumValueOptions).GetDeprecated() {
			return fmt.Errorf("%s: %s is deprecated", path, ev.Name())
		}
	}
	switch {
	case fd.IsMap():
		if fd.MapValue().Message() == nil {
			return nil
		}
		var err error
		v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
			err = current(mv.Message(), path+"["+k.String()+"]")
			return err == nil
		})
		return err
	case fd.IsList() && fd.Message() != nil:
		for i := range v.List().Len() {
			if err := current(v.List().Get(i).Message(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case !fd.IsList() && fd.Message() != nil:
		return current(v.Message(), path)
	}
	return nil
}

// unpack reads a typed config into T.
func unpack[T proto.Message](t *testing.T, a *anypb.Any, into T) T {
	t.Helper()
	if err := a.UnmarshalTo(into); err != nil {
		t.Fatalf("typed config %s: %v", a.GetTypeUrl(), err)
	}
	return into
}

// envoyManifests reads envoy.yaml: its ConfigMap, Deployment and Service,
// strictly.
func envoyManifests(t *testing.T) (corev1.ConfigMap, appsv1.Deployment, corev1.Service) {
	var (
		cm  corev1.ConfigMap
		dep appsv1.Deployment
		svc corev1.Service
	)
	decodeManifest(t, "kubernetes/envoy.yaml",
		kinds{"v1 ConfigMap": &cm, "apps/v1 Deployment": &dep, "v1 Service": &svc},
		"v1 ConfigMap", "apps/v1 Deployment", "v1 Service")
	return cm, dep, svc
}

// dshPods reads dsh.yaml's Deployment and Service.
func dshPods(t *testing.T) (appsv1.Deployment, corev1.Service) {
	var dep appsv1.Deployment
	var svc corev1.Service
	for _, doc := range documents(t, "kubernetes/dsh.yaml") {
		switch kindOf(t, doc) {
		case "apps/v1 Deployment":
			strict(t, doc, &dep)
		case "v1 Service":
			strict(t, doc, &svc)
		}
	}
	return dep, svc
}

// TestEnvoy: envoy.yaml's bootstrap routes each MCP session to the dsh
// replica that made it (the stateful session filter, envelope on
// Mcp-Session-Id, not strict, before the router), lets calls stream for
// as long as they run, and balances over every dsh pod by the headless
// Service of dsh.yaml, new sessions to ready ones only; the Deployment
// runs the Envoy version the bootstrap was checked against.
func TestEnvoy(t *testing.T) {
	cm, dep, svc := envoyManifests(t)
	b, err := decodeBootstrap(cm.Data["envoy.yaml"])
	if err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	pod := dep.Spec.Template.Spec
	if len(pod.Containers) != 1 || len(pod.Containers[0].Ports) != 1 {
		t.Fatalf("want one container with one port: %+v", pod.Containers)
	}
	c := pod.Containers[0]
	if len(b.StaticResources.GetListeners()) != 1 {
		t.Fatalf("%d listeners, want 1", len(b.StaticResources.GetListeners()))
	}
	l := b.StaticResources.Listeners[0]
	if port := l.GetAddress().GetSocketAddress().GetPortValue(); int32(port) != c.Ports[0].ContainerPort {
		t.Errorf("the listener is on %d, the container's port is %d", port, c.Ports[0].ContainerPort)
	}
	if len(l.FilterChains) != 1 || len(l.FilterChains[0].Filters) != 1 {
		t.Fatalf("want one filter chain of one filter: %v", l.FilterChains)
	}
	hcm := unpack(t, l.FilterChains[0].Filters[0].GetTypedConfig(), &hcmv3.HttpConnectionManager{})
	checkSessionFilter(t, hcm)
	checkStreaming(t, hcm)
	checkCluster(t, b.StaticResources.GetClusters(), hcm)
	checkEnvoyPod(t, dep, svc)
}

// checkSessionFilter: the stateful session filter in envelope mode on
// Mcp-Session-Id, not strict, then the router.
func checkSessionFilter(t *testing.T, hcm *hcmv3.HttpConnectionManager) {
	t.Helper()
	fs := hcm.GetHttpFilters()
	if len(fs) != 2 || fs[1].GetName() != "envoy.filters.http.router" {
		t.Fatalf("http filters %v: want the stateful session filter, then the router", fs)
	}
	ss := unpack(t, fs[0].GetTypedConfig(), &statefulv3.StatefulSession{})
	if ss.GetStrict() {
		t.Error("strict: a session whose replica is gone would get 503 instead of 404 and a new session")
	}
	if n := ss.GetSessionState().GetName(); n != "envoy.http.stateful_session.envelope" {
		t.Errorf("session state %q, want the envelope", n)
	}
	env := unpack(t, ss.GetSessionState().GetTypedConfig(), &envelopev3.EnvelopeSessionState{})
	if !strings.EqualFold(env.GetHeader().GetName(), sessionHeader) {
		t.Errorf("the envelope wraps %q, want %s", env.GetHeader().GetName(), sessionHeader)
	}
}

// checkStreaming: no timeout cuts a call that streams while its command
// runs; an idle stream outlives dsh's idle timeout (30 min).
func checkStreaming(t *testing.T, hcm *hcmv3.HttpConnectionManager) {
	t.Helper()
	if d := hcm.GetRequestTimeout(); d != nil && d.AsDuration() != 0 {
		t.Errorf("request_timeout %v cuts long calls", d.AsDuration())
	}
	if d := hcm.GetStreamIdleTimeout(); d == nil || (d.AsDuration() != 0 && d.AsDuration() < 30*time.Minute) {
		t.Errorf("stream_idle_timeout %v: want 0 or at least dsh's --idle-timeout (30m); unset is Envoy's 5m", d.AsDuration())
	}
	vhs := hcm.GetRouteConfig().GetVirtualHosts()
	if len(vhs) != 1 || len(vhs[0].GetRoutes()) != 1 {
		t.Fatalf("want one virtual host with one route: %v", vhs)
	}
	r := vhs[0].Routes[0]
	if p := r.GetMatch().GetPrefix(); p != "/mcp" {
		t.Errorf("the route matches prefix %q, want /mcp", p)
	}
	if d := r.GetRoute().GetTimeout(); d == nil || d.AsDuration() != 0 {
		t.Errorf("route timeout %v: want 0 (unset is Envoy's 15s)", d)
	}
	if id := r.GetRoute().GetIdleTimeout(); id != nil {
		t.Errorf("route idle_timeout %v overrides the stream idle timeout", id.AsDuration())
	}
}

// checkCluster: the route's cluster finds every dsh pod by the headless
// Service of dsh.yaml on the pods' port; new sessions go to the replicas
// whose /readyz passes, and a session's own replica is honoured while it
// drains.
func checkCluster(t *testing.T, clusters []*clusterv3.Cluster, hcm *hcmv3.HttpConnectionManager) {
	t.Helper()
	want := hcm.GetRouteConfig().GetVirtualHosts()[0].GetRoutes()[0].GetRoute().GetCluster()
	i := slices.IndexFunc(clusters, func(c *clusterv3.Cluster) bool { return c.GetName() == want })
	if i < 0 {
		t.Fatalf("no cluster %q", want)
	}
	c := clusters[i]
	if c.GetType() != clusterv3.Cluster_STRICT_DNS {
		t.Errorf("cluster type %v, want STRICT_DNS (one host per pod address)", c.GetType())
	}
	dep, svc := dshPods(t)
	eps := c.GetLoadAssignment().GetEndpoints()
	if len(eps) != 1 || len(eps[0].GetLbEndpoints()) != 1 {
		t.Fatalf("want one endpoint: %v", eps)
	}
	sa := eps[0].LbEndpoints[0].GetEndpoint().GetAddress().GetSocketAddress()
	if sa.GetAddress() != svc.Name || svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("the cluster resolves %q; want dsh.yaml's headless Service %q", sa.GetAddress(), svc.Name)
	}
	if port := dep.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort; int32(sa.GetPortValue()) != port {
		t.Errorf("the cluster's port %d is not the dsh container's %d", sa.GetPortValue(), port)
	}
	hcs := c.GetHealthChecks()
	if len(hcs) != 1 || hcs[0].GetHttpHealthCheck().GetPath() != "/readyz" {
		t.Errorf("health checks %v: want GET /readyz (a draining replica takes no new session)", hcs)
	}
	statuses := c.GetCommonLbConfig().GetOverrideHostStatus().GetStatuses()
	for _, s := range []corev3.HealthStatus{corev3.HealthStatus_HEALTHY, corev3.HealthStatus_UNHEALTHY, corev3.HealthStatus_DRAINING} {
		if !slices.Contains(statuses, s) {
			t.Errorf("override_host_status %v lacks %v: a draining replica's sessions would move and end", statuses, s)
		}
	}
}

// checkEnvoyPod: the Service sends to the Envoy pods' port, the pods run
// as non-root, and the image is the Envoy version of go.mod's
// go-control-plane/envoy, the API the bootstrap was decoded with.
func checkEnvoyPod(t *testing.T, dep appsv1.Deployment, svc corev1.Service) {
	t.Helper()
	sel := dep.Spec.Selector.MatchLabels
	for k, v := range sel {
		if svc.Spec.Selector[k] != v || dep.Spec.Template.Labels[k] != v {
			t.Errorf("service %v or pod labels %v do not match the selector %v", svc.Spec.Selector, dep.Spec.Template.Labels, sel)
		}
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name {
		t.Errorf("service ports %v do not target the container's port %q", svc.Spec.Ports, c.Ports[0].Name)
	}
	if sc := dep.Spec.Template.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Errorf("pod security context %+v: want a non-root user", sc)
	}
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	api := regexp.MustCompile(`github\.com/envoyproxy/go-control-plane/envoy v(\d+\.\d+)\.`).FindSubmatch(gomod)
	if api == nil {
		t.Fatal("go.mod requires no github.com/envoyproxy/go-control-plane/envoy")
	}
	if want := "envoyproxy/envoy:v" + string(api[1]) + "-latest"; c.Image != want {
		t.Errorf("image %q, want %q: the Envoy whose API the bootstrap was checked against", c.Image, want)
	}
}

// TestEnvoyStrict: the bootstrap check catches a misspelt field at every
// depth (typed configs included), an unknown typed config, a value the
// API refuses and a deprecated field; the bootstrap as shipped passes.
func TestEnvoyStrict(t *testing.T) {
	cm, _, _ := envoyManifests(t)
	good := cm.Data["envoy.yaml"]
	if _, err := decodeBootstrap(good); err != nil {
		t.Fatalf("as shipped: %v", err)
	}
	for _, c := range []struct{ name, old, new, want string }{
		{"cluster field", "connect_timeout:", "conect_timeout:", "conect_timeout"},
		{"connection manager field", "stat_prefix:", "stat_prefx:", "stat_prefx"},
		{"filter field", "strict: false", "strikt: false", "strikt"},
		{"envelope field", "name: Mcp-Session-Id", "nmae: Mcp-Session-Id", "nmae"},
		{"unknown type", "envelope.v3.EnvelopeSessionState", "envelope.v3.EnvelopSessionState", "EnvelopSessionState"},
		{"refused value", "0.0.0.0, port_value: 8080", "0.0.0.0, port_value: 80800", "PortValue"},
		{"deprecated field", "connect_timeout: 2s", "connect_timeout: 2s\n      dns_refresh_rate: 5s", "dns_refresh_rate is deprecated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Count(good, c.old) != 1 {
				t.Fatalf("%q occurs %d times in the bootstrap", c.old, strings.Count(good, c.old))
			}
			_, err := decodeBootstrap(strings.Replace(good, c.old, c.new, 1))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one naming %q", err, c.want)
			}
		})
	}
}
