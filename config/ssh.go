package config

import (
	"maps"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-go/dsh/internal/lazyre"
	"github.com/dsh-go/dsh/internal/num"
	"go.yaml.in/yaml/v3"
)

// SSH is the configuration of the SSH executor (docs/spec.md §13): where it
// connects, how it authenticates and verifies the host, and the same
// limits as the local executor. The zero value of every field means "use
// the default"; Host is required when the file's executor is ssh.
type SSH struct {
	// Host is the remote host; it may carry "user@" and ":port"
	// ("dev@build1.internal:2222", "[::1]:22"). User and Port win over
	// them.
	Host string `yaml:"host,omitempty"`
	// User is the remote user; empty means the one in Host, else the local
	// user's name.
	User string `yaml:"user,omitempty"`
	// Port is the remote port; 0 means the one in Host, else 22.
	Port int `yaml:"port,omitempty"`
	// IdentityFile is the private key to log in with; empty means the SSH
	// agent at SSH_AUTH_SOCK. A leading ~/ is the local user's home.
	IdentityFile string `yaml:"identityFile,omitempty"`
	// KnownHosts is the OpenSSH known_hosts file the host's key must be
	// in; empty means ~/.ssh/known_hosts. A host that is not in it, or
	// whose key changed, is refused.
	KnownHosts string `yaml:"knownHosts,omitempty"`
	// Cwd is the default working directory on the remote host; empty means
	// the remote user's home.
	Cwd string `yaml:"cwd,omitempty"`
	// SpillDir is the remote directory under which the executor makes its
	// private spill directory; empty means the remote $TMPDIR, else /tmp.
	SpillDir string `yaml:"spillDir,omitempty"`
	// MaxConnections caps the connections of the pool (default 8).
	MaxConnections int `yaml:"maxConnections,omitempty"`
	// Keepalive is the interval of the connection's keep-alives and of
	// the heartbeats each command's remote wrapper expects (default 5 s):
	// a connection that answers none for 3 intervals is lost, and a
	// wrapper that misses 3 heartbeats kills its command.
	Keepalive time.Duration `yaml:"keepaliveMs,omitempty"`
	// Timeout, MaxTimeout, MaxOutputBytes, KeepHeadBytes, MaxSpillBytes
	// and Grace are those of [Local], with the same defaults.
	Timeout        time.Duration `yaml:"timeoutMs,omitempty"`
	MaxTimeout     time.Duration `yaml:"maxTimeoutMs,omitempty"`
	MaxOutputBytes int64         `yaml:"maxOutputBytes,omitempty"`
	KeepHeadBytes  *int64        `yaml:"keepHeadBytes,omitempty"`
	MaxSpillBytes  int64         `yaml:"maxSpillBytes,omitempty"`
	Grace          time.Duration `yaml:"graceMs,omitempty"`
	Env            SSHEnv        `yaml:"env,omitempty"`
}

// SSHEnv shapes the environment of remote commands. Nothing of dsh's own
// environment is forwarded and the remote one is not scrubbed, so only
// Set applies.
type SSHEnv struct {
	// Set is applied to every command over the environment sshd gives.
	// Names must be shell variable names: the remote wrapper exports them.
	// BASH and names starting __dsh_ are the wrapper's own ([ReservedName]).
	Set map[string]string `yaml:"set,omitempty"`
}

// Defaults of the keys of [SSH] that [Local] does not have.
const (
	DefaultSSHPort        = 22
	DefaultMaxConnections = 8
	DefaultKeepalive      = 5 * time.Second
)

// numeric lists the numeric keys of c in the order Validate reports them.
func (c *SSH) numeric() []numKey {
	return []numKey{
		msKey("timeoutMs", &c.Timeout, DefaultTimeout),
		msKey("maxTimeoutMs", &c.MaxTimeout, DefaultMaxTimeout),
		byteKey("maxOutputBytes", &c.MaxOutputBytes, DefaultMaxOutputBytes),
		byteKey("maxSpillBytes", &c.MaxSpillBytes, DefaultMaxSpillBytes),
		msKey("graceMs", &c.Grace, DefaultGrace),
		msKey("keepaliveMs", &c.Keepalive, DefaultKeepalive),
	}
}

// isZero reports whether c sets nothing at all.
func (c SSH) isZero() bool { return reflect.ValueOf(c).IsZero() }

// Validate reports the first value of c that no default can repair, as an
// *[Error] naming the key relative to the section: a host that does not
// parse, a port out of range, a negative count, the numeric keys as for
// [Local.Validate], keepHeadBytes, and env.set names that are not shell
// variable names (the remote wrapper exports them) or are reserved
// ([ReservedName]), or values holding NUL.
// A missing Host is not an error here: it is one only when the file's
// executor is ssh ([File.Validate]).
func (c SSH) Validate() error {
	if c.Host != "" {
		if _, _, _, err := SplitHost(c.Host); err != nil {
			return err
		}
	}
	if c.Port < 0 || c.Port > 65535 {
		return errType("port", "a port number from 1 to 65535", 0)
	}
	if c.MaxConnections < 0 {
		return errType("maxConnections", "a positive integer", 0)
	}
	if err := checkNumbers(c.numeric()); err != nil {
		return err
	}
	if err := checkKeepHead(c.KeepHeadBytes, c.MaxOutputBytes); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(c.Env.Set)) {
		if err := checkShellSet("env.set", name, c.Env.Set[name], 0); err != nil {
			return err
		}
	}
	return nil
}

// WithDefaults returns c with every zero numeric key and count set to its
// default, Timeout clamped to MaxTimeout, KeepHeadBytes as for
// [Local.WithDefaults], and User and Port taken from Host when they are
// not set (Port 22 when Host names none). Host keeps its form; User may
// stay empty (the local user's name, resolved by the executor), and so may
// IdentityFile, KnownHosts, Cwd and SpillDir, whose empty value the
// executor resolves. Call it on a config that passed [SSH.Validate].
func (c SSH) WithDefaults() SSH {
	defaultNumbers(c.numeric())
	c.Timeout = min(c.Timeout, c.MaxTimeout)
	c.KeepHeadBytes = defaultKeepHead(c.KeepHeadBytes, c.MaxOutputBytes)
	if c.MaxConnections == 0 {
		c.MaxConnections = DefaultMaxConnections
	}
	user, _, port, _ := SplitHost(c.Host)
	if c.User == "" {
		c.User = user
	}
	if c.Port == 0 {
		c.Port = port
	}
	if c.Port == 0 {
		c.Port = DefaultSSHPort
	}
	return c
}

// HostName is Host without its user and port: the name dsh dials, looks
// up in known_hosts and names in its messages.
func (c SSH) HostName() string {
	_, host, _, _ := SplitHost(c.Host)
	return host
}

// SplitHost splits an ssh.host value into its optional user, its host
// name and its optional port (0 when absent): "dev@build1:2222",
// "build1", "[::1]:22", "::1". The error, an *[Error] for the key
// "host", says why s is not one.
func SplitHost(s string) (user, host string, port int, err error) {
	rest := s
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		user, rest = rest[:i], rest[i+1:]
		if user == "" {
			return "", "", 0, badHost(s, "the user before @ is empty")
		}
	}
	host = rest
	if strings.HasPrefix(rest, "[") || strings.Count(rest, ":") == 1 {
		h, p, splitErr := net.SplitHostPort(rest)
		if splitErr != nil {
			if !strings.HasPrefix(rest, "[") || !strings.HasSuffix(rest, "]") {
				return "", "", 0, badHost(s, "it is not HOST or HOST:PORT")
			}
			h = rest[1 : len(rest)-1] // "[::1]" without a port
		} else if port, err = parsePort(s, p); err != nil {
			return "", "", 0, err
		}
		host = h
	}
	if host == "" || strings.ContainsFunc(host, func(r rune) bool { return r <= ' ' || r == '/' || r == '@' }) {
		return "", "", 0, badHost(s, "the host name is empty or holds a space, '/' or '@'")
	}
	return user, host, port, nil
}

func parsePort(s, p string) (int, error) {
	port, err := strconv.Atoi(p)
	if err != nil || port < 1 || port > 65535 {
		return 0, badHost(s, "its port is not a number from 1 to 65535")
	}
	return port, nil
}

func badHost(s, why string) *Error {
	return keyErr("host", 0, "%q is not a host: %s", s, why)
}

// shellName is a name a POSIX shell can export.
var shellName = lazyre.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ShellName reports whether s is a name a POSIX shell can export: a
// letter or underscore, then letters, digits and underscores.
func ShellName(s string) bool { return shellName().MatchString(s) }

// ReservedName reports whether the SSH executor's remote wrapper keeps
// name for itself, so that no env may set it: BASH, the path of the bash
// it execs, and names starting __dsh_, its own variables (the command
// among them). Exported, one would change what runs.
func ReservedName(name string) bool {
	return name == "BASH" || strings.HasPrefix(name, "__dsh_")
}

// checkShellSet checks one entry of an env.set whose names the SSH
// executor's remote wrapper exports.
func checkShellSet(key, name, value string, line int) *Error {
	if !shellName().MatchString(name) {
		return keyErr(key, line, "name %q is not a valid variable name", name)
	}
	if ReservedName(name) {
		return keyErr(key, line, "name %q is reserved: the remote wrapper uses it", name)
	}
	return checkSet(key, name, value, line)
}

// decoder is the schema of the ssh section.
func (c *SSH) decoder() decoder {
	fields := []field{
		{"host", str(&c.Host)},
		{"user", str(&c.User)},
		{"port", count(&c.Port)},
		{"identityFile", str(&c.IdentityFile)},
		{"knownHosts", str(&c.KnownHosts)},
		{"cwd", str(&c.Cwd)},
		{"spillDir", str(&c.SpillDir)},
		{"maxConnections", count(&c.MaxConnections)},
		{"keepHeadBytes", nonNegative(&c.KeepHeadBytes, num.Bytes)},
		{"env", mapping(
			field{"set", envSet(&c.Env.Set)},
			field{"passthrough", localOnly},
			field{"scrub", localOnly},
		)},
	}
	for _, n := range c.numeric() {
		fields = append(fields, field{n.key, n.decoder()})
	}
	return mapping(fields...)
}

// localOnly refuses the env keys of the local section that mean nothing
// over SSH, saying why rather than only that they are unknown.
func localOnly(_ *parser, n *yaml.Node, path string) error {
	return keyProblem(path, n.Line, "the SSH executor forwards nothing of dsh's environment and does not scrub the remote one: only env.set applies")
}
