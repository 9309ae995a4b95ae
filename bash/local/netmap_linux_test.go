package local

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/local/sandbox/gateway"
	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/proctest"
	"github.com/dsh-go/dsh/session"
)

// netServer is an HTTP server on host loopback answering "hello from
// NAME".
func netServer(t testing.TB, name string) int {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", name)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// auditLog collects a sandbox's connection records. Each comes when its
// connection has ended, which may be a moment after its command did.
type auditLog struct {
	mu   sync.Mutex
	recs []gateway.Record
}

func (a *auditLog) add(_ string, r gateway.Record) {
	a.mu.Lock()
	a.recs = append(a.recs, r)
	a.mu.Unlock()
}

// wait returns the records once there are at least n of them, or what
// there is after a bound.
func (a *auditLog) wait(n int) []gateway.Record {
	deadline := time.Now().Add(proctest.Scale(10 * time.Second))
	for {
		a.mu.Lock()
		recs := slices.Clone(a.recs)
		a.mu.Unlock()
		if len(recs) >= n || time.Now().After(deadline) {
			return recs
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// netSbx is a bwrap sandbox whose network is m, with its audit records
// (records(n) waits for n of them).
func netSbx(t testing.TB, m config.NetworkMap) (s *sbx, records func(n int) []gateway.Record) {
	t.Helper()
	log := &auditLog{}
	s = newSbx(t, config.BackendBwrap, config.SandboxWorkspaceWrite, func(c *config.Local) {
		c.Sandbox.Network = &config.Network{Map: &m}
	}, WithNetwork(NetOptions{AskFallback: "deny", Audit: log.add}))
	return s, log.wait
}

// pinned is a map whose names are pinned to host loopback, where the
// tests' servers are: allowed.test allowed, denied.test denied, other
// names asked; 127.0.0.1 may be reached through a name.
func pinned(def string) config.NetworkMap {
	return config.NetworkMap{
		Allow: []string{"allowed.test"}, Deny: []string{"denied.test"}, Default: def,
		Hosts: map[string]string{"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1", "unknown.test": "127.0.0.1",
			"other.test": "127.0.0.1", "private.test": "127.0.0.2"},
		AllowAddresses: []string{"127.0.0.1/32"},
	}
}

// clients are the ways a command reaches NAME:PORT (%[1]s, %[2]d): with
// the proxy variables, ignoring them, bash's /dev/tcp, a Python socket.
var clients = []string{
	"curl -fsS --max-time 5 http://%[1]s:%[2]d/",
	"curl -fsS --max-time 5 --noproxy '*' http://%[1]s:%[2]d/",
	"exec 3<>/dev/tcp/%[1]s/%[2]d && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3",
	`/usr/bin/python3 -c 'import socket,sys; s=socket.create_connection(("%[1]s", %[2]d), 5); s.sendall(b"GET / HTTP/1.0\r\n\r\n"); sys.stdout.write(s.makefile("rb").read().decode())'`,
}

func TestSandboxNetworkMapAllowedName(t *testing.T) {
	port := netServer(t, "allowed")
	s, records := netSbx(t, pinned("deny"))
	for _, cmd := range clients {
		n := &bash.NetCall{ID: "c1"}
		res := s.runSpec(bash.Request{Command: fmt.Sprintf(cmd, "allowed.test", port), Owner: s.owner, Net: n})
		if !strings.Contains(res.Stdout.Text, "hello from allowed") || len(refusedOf(n)) > 0 {
			t.Errorf("%s: stdout %q stderr %q refused %q", cmd, res.Stdout.Text, res.Stderr.Text, refusedOf(n))
		}
	}
	for _, r := range records(len(clients)) {
		if r.Decision != gateway.Allow || r.Host != "allowed.test" || r.Rule != "allow: allowed.test" || r.Caller != "c1" ||
			r.Address != "127.0.0.1" || r.BytesDown == 0 {
			t.Errorf("audit record %+v", r)
		}
	}
	if n := len(records(len(clients))); n != len(clients) {
		t.Errorf("%d audit records for %d connections", n, len(clients))
	}
}

// refusedEach runs every client against name and wants each refused,
// recorded for the call.
func refusedEach(t *testing.T, s *sbx, name string, port int) {
	t.Helper()
	for _, cmd := range clients {
		n := &bash.NetCall{ID: "c"}
		res := s.runSpec(bash.Request{Command: fmt.Sprintf(cmd, name, port), Owner: s.owner, Net: n})
		if strings.Contains(res.Stdout.Text, "hello") || exitCode(res) == "0" {
			t.Errorf("%s reached %s: %q", cmd, name, res.Stdout.Text)
		}
		if r := refusedOf(n); !slices.Equal(r, []string{name}) {
			t.Errorf("%s: refused %q, want %s", cmd, r, name)
		}
	}
}

func TestSandboxNetworkMapDeniedName(t *testing.T) {
	port := netServer(t, "denied")
	s, records := netSbx(t, pinned("ask"))
	// Denied on every port: its lookup says no such name.
	res := s.run("getent hosts denied.test; echo rc=$?")
	if !strings.Contains(res.Stdout.Text, "rc=2") {
		t.Errorf("denied.test resolved: %q", res.Stdout.Text)
	}
	// Through the proxy, by name: refused by the rule.
	n := &bash.NetCall{ID: "c"}
	res = s.runSpec(bash.Request{Command: fmt.Sprintf(clients[0], "denied.test", port), Owner: s.owner, Net: n})
	if strings.Contains(res.Stdout.Text, "hello") || len(refusedOf(n)) != 1 {
		t.Errorf("denied.test through the proxy: %q %q refused %q", res.Stdout.Text, res.Stderr.Text, refusedOf(n))
	}
	if r := records(1); len(r) != 1 || r[0].Decision != gateway.Deny || r[0].Rule != "deny: denied.test" {
		t.Errorf("audit: %+v", r)
	}
	// Every client fails: the name does not resolve.
	for _, cmd := range clients[1:] {
		if res := s.run(fmt.Sprintf(cmd, "denied.test", port)); strings.Contains(res.Stdout.Text, "hello") || exitCode(res) == "0" {
			t.Errorf("%s reached denied.test: %q", cmd, res.Stdout.Text)
		}
	}
}

// A name denied on one port resolves, and each client's connection to
// that port is captured and refused by the rule, and recorded.
func TestSandboxNetworkMapDeniedPort(t *testing.T) {
	port := netServer(t, "denied")
	m := pinned("ask")
	m.Allow = append(m.Allow, "portdenied.test")
	m.Deny = append(m.Deny, fmt.Sprintf("portdenied.test:%d", port))
	m.Hosts["portdenied.test"] = "127.0.0.1"
	s, records := netSbx(t, m)
	for _, cmd := range clients {
		n := &bash.NetCall{ID: "c"}
		res := s.runSpec(bash.Request{Command: fmt.Sprintf(cmd, "portdenied.test", port), Owner: s.owner, Net: n})
		if strings.Contains(res.Stdout.Text, "hello") || exitCode(res) == "0" || !slices.Equal(refusedOf(n), []string{"portdenied.test"}) {
			t.Errorf("%s: %q %q refused %q", cmd, res.Stdout.Text, res.Stderr.Text, refusedOf(n))
		}
	}
	for _, r := range records(0) {
		if r.Decision != gateway.Deny || r.Rule != fmt.Sprintf("deny: portdenied.test:%d", port) {
			t.Errorf("audit %+v", r)
		}
	}
}

func TestSandboxNetworkMapAddresses(t *testing.T) {
	port := netServer(t, "loopback")
	m := pinned("deny")
	m.Allow = append(m.Allow, "private.test")
	s, records := netSbx(t, m)
	// An allowed name whose address is not public and not listed.
	refusedEach(t, s, "private.test", port)
	// A literal address is decided by allowAddresses alone. 192.0.2.1
	// (documentation) is not listed: the gateway refuses it without a
	// packet sent anywhere. Loopback literals are the namespace's own:
	// nothing of the host's listens there.
	n := &bash.NetCall{}
	res := s.runSpec(bash.Request{Command: "curl -fsS --max-time 5 --noproxy '*' http://192.0.2.1:9/", Owner: s.owner, Net: n})
	if exitCode(res) == "0" || len(refusedOf(n)) != 1 || refusedOf(n)[0] != "192.0.2.1" {
		t.Errorf("a literal address: %q %q refused %q", res.Stdout.Text, res.Stderr.Text, refusedOf(n))
	}
	res = s.run(fmt.Sprintf("curl -fsS --max-time 5 --noproxy '*' http://127.0.0.1:%d/", port))
	if strings.Contains(res.Stdout.Text, "hello") {
		t.Errorf("the host's loopback reached by a literal address: %q", res.Stdout.Text)
	}
	for _, r := range records(0) {
		if r.Decision != gateway.Deny {
			t.Errorf("allowed: %+v", r)
		}
	}
}

func TestSandboxNetworkMapUDP(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	port := pc.LocalAddr().(*net.UDPAddr).Port
	s, _ := netSbx(t, pinned("deny"))
	// To the host's address through a name, and to a literal one: neither
	// leaves the namespace. (The test's socket is on host loopback, the
	// only place a test may send to.)
	s.run(fmt.Sprintf("getent hosts allowed.test; printf x >/dev/udp/allowed.test/%[1]d; printf x >/dev/udp/127.0.0.1/%[1]d; true", port))
	_ = pc.SetReadDeadline(time.Now().Add(proctest.Scale(300 * time.Millisecond)))
	if n, from, err := pc.ReadFrom(make([]byte, 10)); err == nil {
		t.Errorf("a UDP packet left the namespace: %d bytes from %v", n, from)
	}
}

func TestSandboxNetworkMapAsks(t *testing.T) {
	port := netServer(t, "asked")
	s, records := netSbx(t, pinned("ask"))
	var mu sync.Mutex
	var askedList []string
	asked := func() []string { // the questions so far
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(askedList)
	}
	release := make(chan struct{})
	ask := func(answer bash.NetAnswer) *bash.NetCall {
		return &bash.NetCall{ID: "c", Ask: func(ctx context.Context, host string, p int) bash.NetAnswer {
			mu.Lock()
			askedList = append(askedList, fmt.Sprintf("%s:%d", host, p))
			mu.Unlock()
			<-release // held until all connections wait for the one question
			return answer
		}}
	}
	// Three connections at once to one unknown host: one question, held
	// open long enough for all three to wait on it.
	go func() { time.Sleep(proctest.Scale(500 * time.Millisecond)); close(release) }()
	cmd := fmt.Sprintf("for i in 1 2 3; do curl -fsS --max-time 5 --noproxy '*' http://unknown.test:%d/ & done; wait", port)
	res := s.runSpec(bash.Request{Command: cmd, Owner: s.owner, Net: ask(bash.NetAccepted)})
	if strings.Count(res.Stdout.Text, "hello from asked") != 3 || len(asked()) != 1 || asked()[0] != fmt.Sprintf("unknown.test:%d", port) {
		t.Fatalf("accepted: stdout %q stderr %q, asked %q", res.Stdout.Text, res.Stderr.Text, asked())
	}
	// Remembered: not asked again.
	res = s.runSpec(bash.Request{Command: fmt.Sprintf(clients[1], "unknown.test", port), Owner: s.owner, Net: ask(bash.NetDeclined)})
	if !strings.Contains(res.Stdout.Text, "hello from asked") || len(asked()) != 1 {
		t.Errorf("the accepted host asked again: %q, asked %q", res.Stdout.Text, asked())
	}
	// Declined: refused, and remembered.
	for range 2 {
		n := ask(bash.NetDeclined)
		res = s.runSpec(bash.Request{Command: fmt.Sprintf(clients[1], "other.test", port), Owner: s.owner, Net: n})
		if strings.Contains(res.Stdout.Text, "hello") || len(refusedOf(n)) != 1 {
			t.Errorf("declined host reached: %q refused %q", res.Stdout.Text, refusedOf(n))
		}
	}
	if len(asked()) != 2 {
		t.Errorf("asked %q, want unknown.test once and other.test once", asked())
	}
	var rules []string
	for _, r := range records(6) {
		rules = append(rules, r.Rule)
	}
	slices.Sort(rules) // each comes as its connection ends
	if want := []string{"ask:accepted", "ask:accepted", "ask:accepted", "ask:accepted", "ask:declined", "ask:declined"}; !slices.Equal(rules, want) {
		t.Errorf("audit rules %q, want %q", rules, want)
	}
	// Nobody to ask: askFallback (deny here), not remembered.
	n := &bash.NetCall{}
	res = s.runSpec(bash.Request{Command: fmt.Sprintf(clients[1], "third.test", port), Owner: s.owner, Net: n})
	recs := records(7)
	if len(refusedOf(n)) != 1 || !slices.ContainsFunc(recs, func(r gateway.Record) bool { return r.Rule == "askFallback: deny" }) {
		t.Errorf("no asker: %q %+v", refusedOf(n), recs)
	}
}

func TestSandboxNetworkMapGitClone(t *testing.T) {
	base := t.TempDir()
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run(base, "init", "-q", "--bare", "repo.git")
	work := t.TempDir()
	run(work, "-c", "init.defaultBranch=main", "init", "-q")
	if err := os.WriteFile(filepath.Join(work, "README"), []byte("cloned through dsh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(work, "add", "README")
	run(work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one")
	run(work, "push", "-q", filepath.Join(base, "repo.git"), "HEAD:refs/heads/main")
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	daemon := exec.Command("git", "daemon", "--reuseaddr", "--export-all", "--base-path="+base, "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = daemon.Process.Kill(); _ = daemon.Wait() })
	s, _ := netSbx(t, pinned("deny"))
	var res bash.Result
	for range 50 { // until the daemon listens
		res = s.run(fmt.Sprintf("rm -rf /tmp/c; git clone -q -b main git://allowed.test:%d/repo.git /tmp/c && cat /tmp/c/README", port))
		if strings.Contains(res.Stdout.Text, "cloned through dsh") {
			break
		}
		time.Sleep(proctest.Scale(100 * time.Millisecond))
	}
	if !strings.Contains(res.Stdout.Text, "cloned through dsh") {
		t.Fatalf("git clone: %q %q", res.Stdout.Text, res.Stderr.Text)
	}
	res = s.run(fmt.Sprintf("git clone -q git://denied.test:%d/repo.git /tmp/d", port))
	if exitCode(res) == "0" {
		t.Errorf("cloned from a denied name")
	}
}

// TestSandboxNetworkMapManyNames: one command looks up 10,000 names while
// it holds a connection; the held connection and a new one still reach
// the right name, and the session goes on.
func TestSandboxNetworkMapManyNames(t *testing.T) {
	port := netServer(t, "allowed")
	s, _ := netSbx(t, pinned("ask")) // every name resolves
	script := fmt.Sprintf(`
import socket
held = socket.create_connection(("allowed.test", %[1]d), 5)
for i in range(10000):
    try:
        socket.gethostbyname("n%%d.test" %% i)
    except OSError as e:
        print("lookup failed", i, e)
        break
held.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(held.makefile("rb").read().decode().splitlines()[-1])
again = socket.create_connection(("allowed.test", %[1]d), 5)
again.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(again.makefile("rb").read().decode().splitlines()[-1])
`, port)
	ms := float64(proctest.Scale(120*time.Second) / time.Millisecond)
	res := s.runSpec(bash.Request{Command: "/usr/bin/python3 -c '" + strings.ReplaceAll(script, "'", `'\''`) + "'", Owner: s.owner, TimeoutMs: &ms})
	if res.Stdout.Text != "hello from allowed\nhello from allowed\n" {
		t.Errorf("after 10,000 names: stdout %q stderr %q", res.Stdout.Text, res.Stderr.Text)
	}
	if res := s.run(fmt.Sprintf(clients[1], "allowed.test", port)); !strings.Contains(res.Stdout.Text, "hello from allowed") {
		t.Errorf("the session's next command: %q %q", res.Stdout.Text, res.Stderr.Text)
	}
}

// BenchmarkNetworkMapThroughput: 1 GiB written by a command to a server
// on host loopback, through the session's gateway (a sandboxed command,
// an allowed name) and straight (the same command unsandboxed, to
// 127.0.0.1); b.SetBytes gives MB/s.
func BenchmarkNetworkMapThroughput(b *testing.B) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(io.Discard, c); c.Close() }()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	s, _ := netSbx(b, pinned("deny"))
	for _, via := range []string{"direct", "gateway"} {
		b.Run(via, func(b *testing.B) {
			b.SetBytes(1 << 30)
			for b.Loop() {
				var res bash.Result
				if via == "direct" {
					res = s.control(fmt.Sprintf("head -c 1G /dev/zero >/dev/tcp/127.0.0.1/%d", port))
				} else {
					res = s.run(fmt.Sprintf("head -c 1G /dev/zero >/dev/tcp/allowed.test/%d", port))
				}
				if exitCode(res) != "0" {
					b.Fatalf("%s: %q", via, res.Stderr.Text)
				}
			}
		})
	}
}

// BenchmarkNetworkMapConnect: a connection and one request, timed
// inside one Python process (its start is not counted) over 200
// connections to the name's address, looked up once: through the
// gateway (a sandboxed command, an allowed name) and straight (the same
// unsandboxed, to 127.0.0.1). Metric µs/conn; the difference is what the
// gateway adds to a connection.
func BenchmarkNetworkMapConnect(b *testing.B) {
	port := netServer(b, "bench")
	s, _ := netSbx(b, pinned("deny"))
	script := `/usr/bin/python3 -c 'import socket, time
a = socket.gethostbyname("%s")
t = time.perf_counter()
for i in range(200):
    c = socket.create_connection((a, %d), 5); c.sendall(b"GET / HTTP/1.0\r\n\r\n"); c.makefile("rb").read(); c.close()
print((time.perf_counter() - t) / 200 * 1e6)'`
	for _, via := range []string{"direct", "gateway"} {
		b.Run(via, func(b *testing.B) {
			var total float64
			for b.Loop() {
				var res bash.Result
				if via == "direct" {
					res = s.control(fmt.Sprintf(script, "127.0.0.1", port))
				} else {
					res = s.run(fmt.Sprintf(script, "allowed.test", port))
				}
				us, err := strconv.ParseFloat(strings.TrimSpace(res.Stdout.Text), 64)
				if err != nil {
					b.Fatalf("%s: %q %q", via, res.Stdout.Text, res.Stderr.Text)
				}
				total += us
			}
			b.ReportMetric(total/float64(b.N), "µs/conn")
		})
	}
}

// BenchmarkNetworkMapSessionStart: a session's first command, which makes
// its scope: network: false (a namespace with lo) against a map (the
// namespace set up: route, rules, the gateway's sockets).
func BenchmarkNetworkMapSessionStart(b *testing.B) {
	for _, kind := range []string{"off", "map"} {
		b.Run(kind, func(b *testing.B) {
			s := newSbx(b, config.BackendBwrap, config.SandboxWorkspaceWrite, func(c *config.Local) {
				if kind == "map" {
					m := pinned("deny")
					c.Sandbox.Network = &config.Network{Map: &m}
				}
			})
			for b.Loop() {
				owner := session.New("bench", s.ws)
				res := s.runSpec(bash.Request{Command: "true", Owner: owner})
				owner.End()
				if exitCode(res) != "0" {
					b.Fatal(res.Stderr.Text)
				}
			}
		})
	}
}

// refusedOf lists the hosts n's connections were refused.
func refusedOf(n *bash.NetCall) []string {
	_, hosts := n.Refused()
	return hosts
}

// A command cannot allow itself a host by writing the workspace's .npmrc
// (toolRegistries reads only the user's and the system's configuration).
func TestSandboxNetworkMapProjectFilesAllowNothing(t *testing.T) {
	port := netServer(t, "exfil")
	m := config.NetworkMap{Default: "deny", ToolRegistries: true,
		Hosts: map[string]string{"exfil.test": "127.0.0.1"}, AllowAddresses: []string{"127.0.0.1/32"}}
	s, _ := netSbx(t, m)
	s.run(fmt.Sprintf("printf 'registry=http://exfil.test:%d/\\n' > .npmrc; mkdir -p .cargo; printf '[registries.x]\\nindex = \"http://exfil.test:%d/\"\\n' > .cargo/config.toml", port, port))
	owner := session.New("second", s.ws)
	defer owner.End()
	res := s.runSpec(bash.Request{Command: fmt.Sprintf(clients[1], "exfil.test", port), Owner: owner})
	if strings.Contains(res.Stdout.Text, "hello from exfil") {
		t.Errorf("a host a sandboxed command named in the workspace's .npmrc was allowed")
	}
}

// A command's refusals are kept bounded: a count and its first hosts.
func TestSandboxNetworkMapRefusalsBounded(t *testing.T) {
	s, _ := netSbx(t, pinned("deny"))
	n := &bash.NetCall{ID: "c"}
	// cat waits for each reset, so every refusal is in before the end.
	s.runSpec(bash.Request{Command: `for i in $(seq 300); do cat 2>/dev/null </dev/tcp/192.0.2.$((i%250+1))/9; done`, Owner: s.owner, Net: n})
	count, hosts := n.Refused()
	if count != 300 || len(hosts) != 100 {
		t.Errorf("refused %d, hosts %d (%q…), want 300 and the first 100", count, len(hosts), hosts[:min(3, len(hosts))])
	}
}

// A question about a host is withdrawn when its command ends: it does
// not outlive the call.
func TestSandboxNetworkMapQuestionEndsWithItsCommand(t *testing.T) {
	port := netServer(t, "asked")
	s, _ := netSbx(t, pinned("ask"))
	withdrawn := make(chan struct{})
	n := &bash.NetCall{ID: "c", Ask: func(ctx context.Context, host string, p int) bash.NetAnswer {
		<-ctx.Done()
		close(withdrawn)
		return bash.NetDismissed
	}}
	ms := float64(proctest.Scale(time.Second) / time.Millisecond)
	s.runSpec(bash.Request{Command: fmt.Sprintf("curl -sS --noproxy '*' http://unknown.test:%d/", port), Owner: s.owner, Net: n, TimeoutMs: &ms})
	select {
	case <-withdrawn:
	case <-time.After(proctest.Scale(5 * time.Second)):
		t.Error("the question outlived its command")
	}
}
