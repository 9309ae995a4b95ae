package ssh

// Where the executor connects and how: the host and its address, the
// login, and host key verification against known_hosts.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	gossh "golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/dsh-go/dsh/config"
)

// target is a resolved ssh section: everything a dial needs.
type target struct {
	host       string // the name dsh dials and names in its messages
	port       int
	user       string
	addr       string // host:port for net.Dial
	knownHosts string // absolute path
	identity   string // absolute path, or "" for the agent
	agentSock  string // SSH_AUTH_SOCK when New ran, for the agent
	timeout    time.Duration
}

// newTarget resolves cfg (defaults applied): the local user's name for an
// unset user, ~/ in the paths, and checks that known_hosts can be read, so
// a mistake shows when dsh starts rather than at the first command.
func newTarget(cfg config.SSH, keepalive time.Duration) (*target, error) {
	t := &target{
		host:      cfg.HostName(),
		port:      cfg.Port,
		user:      cfg.User,
		agentSock: os.Getenv("SSH_AUTH_SOCK"),
		// A dial gets as long as a lost connection takes to notice.
		timeout: 3 * keepalive,
	}
	t.addr = net.JoinHostPort(t.host, strconv.Itoa(t.port))
	if t.user == "" {
		u, err := user.Current()
		if err != nil {
			return nil, fmt.Errorf("%s: user: no ssh.user and the local user is unknown: %w", Name, err)
		}
		t.user = u.Username
	}
	var err error
	if t.knownHosts, err = expandHome(cfg.KnownHosts, "~/.ssh/known_hosts"); err != nil {
		return nil, err
	}
	if cfg.IdentityFile != "" {
		if t.identity, err = expandHome(cfg.IdentityFile, ""); err != nil {
			return nil, err
		}
	}
	if _, err := knownhosts.New(t.knownHosts); err != nil {
		return nil, fmt.Errorf("%s: known_hosts file %s: %w", Name, t.knownHosts, unwrapPath(err))
	}
	return t, nil
}

// expandHome returns path (def when empty) with a leading ~/ replaced by
// the local user's home, made absolute.
func expandHome(path, def string) (string, error) {
	if path == "" {
		path = def
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%s: %s: %w", Name, path, err)
		}
		path = filepath.Join(home, rest)
	}
	return filepath.Abs(path)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// login is what a dial authenticated with, and the host key it accepted,
// for dsh doctor.
type login struct {
	keyType     string // "ssh-ed25519"
	fingerprint string // SHA256:…
	source      string // "identity file PATH" or "SSH agent"
	hostKey     string // "ssh-ed25519 SHA256:…"
}

// dial connects, verifies the host key and logs in, within ctx and the
// target's timeout. It returns the client, its network connection and
// what authenticated.
func (t *target) dial(ctx context.Context) (*gossh.Client, *login, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	auth, used, closeAuth, err := t.auth()
	if err != nil {
		return nil, nil, err
	}
	defer closeAuth()
	hk, err := t.hostKeys()
	if err != nil {
		return nil, nil, err
	}
	nc, err := (&net.Dialer{KeepAlive: -1}).DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: connect to %s: %w", Name, t.host, err)
	}
	cfg := &gossh.ClientConfig{
		User:              t.user,
		Auth:              []gossh.AuthMethod{auth},
		HostKeyCallback:   hk.check,
		HostKeyAlgorithms: hk.algorithms,
	}
	client, err := handshake(ctx, nc, t.addr, cfg)
	if err != nil {
		if hk.err != nil {
			return nil, nil, hk.err // the host key's own message, not the handshake's
		}
		return nil, nil, fmt.Errorf("%s: log in to %s as %s: %w", Name, t.host, t.user, err)
	}
	l := used.get()
	l.hostKey = hk.accepted
	return client, l, nil
}

// handshake runs the SSH handshake on nc, closing nc when ctx ends first.
func handshake(ctx context.Context, nc net.Conn, addr string, cfg *gossh.ClientConfig) (*gossh.Client, error) {
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	c, chans, reqs, err := gossh.NewClientConn(nc, addr, cfg)
	if !stop() {
		// ctx ended: nc is closed or about to be.
		if err == nil {
			_ = c.Close()
		}
		return nil, context.Cause(ctx)
	}
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	return gossh.NewClient(c, chans, reqs), nil
}

// usedKey records the key that signed the login.
type usedKey struct {
	mu     sync.Mutex
	source string
	key    gossh.PublicKey
}

func (u *usedKey) get() *login {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.key == nil {
		return &login{source: u.source}
	}
	return &login{keyType: u.key.Type(), fingerprint: gossh.FingerprintSHA256(u.key), source: u.source}
}

// record wraps a signer so that it records its key when it signs (the
// server asks for a signature only once it accepted the key), keeping the
// algorithm interfaces x/crypto looks for (an RSA key signs with SHA-2
// only through them).
func record(s gossh.Signer, used *usedKey) gossh.Signer {
	base := recordingSigner{s, used}
	as, ok := s.(gossh.AlgorithmSigner)
	if !ok {
		return base
	}
	alg := recordingAlgorithmSigner{base, as}
	if ms, ok := s.(gossh.MultiAlgorithmSigner); ok {
		return recordingMultiSigner{alg, ms}
	}
	return alg
}

type recordingSigner struct {
	gossh.Signer
	used *usedKey
}

func (s recordingSigner) Sign(rand io.Reader, data []byte) (*gossh.Signature, error) {
	return s.note(s.Signer.Sign(rand, data))
}

func (s recordingSigner) note(sig *gossh.Signature, err error) (*gossh.Signature, error) {
	if err == nil {
		s.used.mu.Lock()
		s.used.key = s.PublicKey()
		s.used.mu.Unlock()
	}
	return sig, err
}

type recordingAlgorithmSigner struct {
	recordingSigner
	as gossh.AlgorithmSigner
}

func (s recordingAlgorithmSigner) SignWithAlgorithm(rand io.Reader, data []byte, algorithm string) (*gossh.Signature, error) {
	return s.note(s.as.SignWithAlgorithm(rand, data, algorithm))
}

type recordingMultiSigner struct {
	recordingAlgorithmSigner
	ms gossh.MultiAlgorithmSigner
}

func (s recordingMultiSigner) Algorithms() []string { return s.ms.Algorithms() }

// auth is the login: the identity file when one is configured, else the
// agent's keys. closeAuth releases the agent's connection.
func (t *target) auth() (gossh.AuthMethod, *usedKey, func(), error) {
	if t.identity != "" {
		signer, err := t.identitySigner()
		if err != nil {
			return nil, nil, nil, err
		}
		used := &usedKey{source: "identity file " + t.identity}
		return gossh.PublicKeys(record(signer, used)), used, func() {}, nil
	}
	if t.agentSock == "" {
		return nil, nil, nil, fmt.Errorf("%s: no ssh.identityFile is configured and SSH_AUTH_SOCK is not set: there is no key to log in to %s with", Name, t.host)
	}
	conn, err := net.Dial("unix", t.agentSock)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: SSH agent at %s: %w", Name, t.agentSock, err)
	}
	ag := agent.NewClient(conn)
	used := &usedKey{source: "SSH agent"}
	signers := func() ([]gossh.Signer, error) {
		list, err := ag.Signers()
		if err != nil {
			return nil, fmt.Errorf("SSH agent: %w", err)
		}
		out := make([]gossh.Signer, len(list))
		for i, s := range list {
			out[i] = record(s, used)
		}
		return out, nil
	}
	return gossh.PublicKeysCallback(signers), used, func() { _ = conn.Close() }, nil
}

// identitySigner reads the identity file. An encrypted key cannot be
// used: nobody could type its passphrase.
func (t *target) identitySigner() (gossh.Signer, error) {
	data, err := os.ReadFile(t.identity)
	if err != nil {
		return nil, fmt.Errorf("%s: identity file %s: %w", Name, t.identity, unwrapPath(err))
	}
	signer, err := gossh.ParsePrivateKey(data)
	var pm *gossh.PassphraseMissingError
	switch {
	case errors.As(err, &pm):
		return nil, fmt.Errorf("%s: identity file %s is encrypted: add it to the SSH agent and leave ssh.identityFile unset", Name, t.identity)
	case err != nil:
		return nil, fmt.Errorf("%s: identity file %s: %w", Name, t.identity, err)
	}
	return signer, nil
}

// hostKeyCheck verifies the host's key against known_hosts and keeps the
// reason of a refusal.
type hostKeyCheck struct {
	t          *target
	cb         gossh.HostKeyCallback
	algorithms []string
	err        error
	accepted   string // the key's type and fingerprint, once accepted
}

// hostKeys reads known_hosts afresh (a key added while dsh runs counts)
// and limits the host key algorithms to those of the host's known keys,
// so that the server offers a key known_hosts can vouch for.
func (t *target) hostKeys() (*hostKeyCheck, error) {
	cb, err := knownhosts.New(t.knownHosts)
	if err != nil {
		return nil, fmt.Errorf("%s: known_hosts file %s: %w", Name, t.knownHosts, unwrapPath(err))
	}
	hk := &hostKeyCheck{t: t, cb: cb}
	hk.algorithms = knownAlgorithms(cb, t.addr)
	return hk, nil
}

// knownAlgorithms asks known_hosts which key types it holds for addr: a
// key nobody has is checked, and the refusal lists the known ones.
func knownAlgorithms(cb gossh.HostKeyCallback, addr string) []string {
	remote, _ := net.ResolveTCPAddr("tcp", addr)
	var ke *knownhosts.KeyError
	if err := cb(addr, remote, probeKey{}); !errors.As(err, &ke) {
		return nil
	}
	var algos []string
	seen := map[string]bool{}
	for _, k := range ke.Want {
		for _, a := range algorithmsFor(k.Key.Type()) {
			if !seen[a] {
				seen[a] = true
				algos = append(algos, a)
			}
		}
	}
	return algos
}

// algorithmsFor lists the signature algorithms a key type can be offered
// with: an RSA key signs with rsa-sha2-512 and rsa-sha2-256 too.
func algorithmsFor(keyType string) []string {
	if keyType == gossh.KeyAlgoRSA {
		return []string{gossh.KeyAlgoRSASHA512, gossh.KeyAlgoRSASHA256, gossh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// check is the HostKeyCallback.
func (hk *hostKeyCheck) check(hostname string, remote net.Addr, key gossh.PublicKey) error {
	err := hk.cb(hostname, remote, key)
	if err == nil {
		hk.accepted = key.Type() + " " + gossh.FingerprintSHA256(key)
		return nil
	}
	hk.err = hk.t.hostKeyError(key, err)
	return hk.err
}

// hostKeyError says why the host's key was refused, naming the host and
// the known_hosts file.
func (t *target) hostKeyError(key gossh.PublicKey, err error) error {
	got := key.Type() + " " + gossh.FingerprintSHA256(key)
	var ke *knownhosts.KeyError
	var re *knownhosts.RevokedError
	switch {
	case errors.As(err, &re):
		return fmt.Errorf("%s: host key of %s (%s) is revoked in %s:%d; refusing to connect", Name, t.host, got, re.Revoked.Filename, re.Revoked.Line)
	case errors.As(err, &ke) && len(ke.Want) == 0:
		return fmt.Errorf("%s: host key of %s (%s) is unknown: it is not in %s; refusing to connect. Check the fingerprint, then add the key (ssh-keyscan -p %d %s >> %s)",
			Name, t.host, got, t.knownHosts, t.port, t.host, t.knownHosts)
	case errors.As(err, &ke):
		w := ke.Want[0]
		return fmt.Errorf("%s: host key of %s changed: it is %s, but %s:%d has %s %s; refusing to connect (the host was reinstalled, or someone is intercepting the connection)",
			Name, t.host, got, w.Filename, w.Line, w.Key.Type(), gossh.FingerprintSHA256(w.Key))
	}
	return fmt.Errorf("%s: host key of %s (%s): %w", Name, t.host, got, err)
}

// probeKey is a key no known_hosts holds: asking about it lists the keys
// known for a host.
type probeKey struct{}

func (probeKey) Type() string                          { return "dsh-probe" }
func (probeKey) Marshal() []byte                       { return []byte("dsh-probe") }
func (probeKey) Verify([]byte, *gossh.Signature) error { return errors.New("probe key") }
