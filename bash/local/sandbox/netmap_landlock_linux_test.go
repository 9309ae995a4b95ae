package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/config"
)

// newLandlockAt makes a landlock sandbox whose network is n, as if the
// kernel's Landlock ABI were abi (0: the real one).
func newLandlockAt(t *testing.T, abi int, n *config.Network) (*Sandbox, error) {
	t.Helper()
	if abi > 0 {
		real := landlockABI
		landlockABI = func() (int, error) { return abi, nil }
		t.Cleanup(func() { landlockABI = real })
	}
	dir := t.TempDir()
	cfg := config.Sandbox{Mode: config.SandboxWorkspaceWrite, Backend: config.BackendLandlock, Network: n}
	s, err := New(cfg, Options{Cwd: dir, Dir: dir, Private: dir, Shell: "/bin/bash", Env: os.Environ()})
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

// runIn runs a bash command in s on its own and returns its stderr.
func runIn(t *testing.T, s *Sandbox, command string) string {
	t.Helper()
	out, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	st, err := s.Start(Command{Shell: "/bin/bash", Args: []string{"bash", "-c", command}, Dir: s.cwd, Env: os.Environ(), Stdout: out, Stderr: out, CgroupFD: -1})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Cmd.Wait()
	st.Reaped()
	b, _ := os.ReadFile(out.Name())
	return string(b)
}

// TestLandlockNetworkMapOldABI: below ABI 4 Landlock has no network
// rules: a map the config sets is refused at start, saying so; the map a
// config implied becomes network: false, with no IP socket at all.
func TestLandlockNetworkMapOldABI(t *testing.T) {
	if abi, _ := landlockABI(); abi < minLandlockABI {
		t.Skipf("SKIP-REASON: no Landlock here to fake an older ABI of (ABI %d)", abi)
	}
	m := &config.NetworkMap{Default: config.NetAsk}
	_, err := newLandlockAt(t, 3, &config.Network{Map: m})
	want := "local.sandbox.network: Landlock ABI 3 has no network rules (needs ABI 4, Linux 6.7)"
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a map with ABI 3: %v, want %q", err, want)
	}
	s, err := newLandlockAt(t, 3, &config.Network{Map: m, Implied: true})
	if err != nil {
		t.Fatal(err)
	}
	desc := strings.Join(s.Describe(), "\n")
	if s.NetworkMap() || !strings.Contains(desc, "network: off; no IP sockets") || !strings.Contains(desc, "no network rules (needs ABI 4, Linux 6.7): the network is off instead") {
		t.Errorf("the implied map with ABI 3: NetworkMap %v, doctor says:\n%s", s.NetworkMap(), desc)
	}
	if got := runIn(t, s, "exec 3<>/dev/tcp/127.0.0.1/9"); !strings.Contains(got, "Operation not permitted") {
		t.Errorf("an IP socket with the implied map off: %q, want EPERM", got)
	}
}

// TestLandlockNetworkMapDescribe: where Landlock has network rules, a
// map is kept, and doctor says how it is done.
func TestLandlockNetworkMapDescribe(t *testing.T) {
	if abi, _ := landlockABI(); abi < minLandlockNetABI {
		t.Skipf("SKIP-REASON: Landlock ABI %d has no network rules (needs 4, Linux 6.7)", abi)
	}
	s, err := newLandlockAt(t, 0, &config.Network{Map: &config.NetworkMap{Default: config.NetAsk}, Implied: true})
	if err != nil {
		t.Fatal(err)
	}
	desc := strings.Join(s.Describe(), "\n")
	if !s.NetworkMap() || !strings.Contains(desc, "through the proxy variables only") || !strings.Contains(desc, "network map: only proxy clients") {
		t.Errorf("doctor says:\n%s", desc)
	}
}
