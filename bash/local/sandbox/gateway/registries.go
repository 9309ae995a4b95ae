package gateway

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/config"
)

// The network map's toolRegistries option: at session start dsh allows the
// hosts the user's own package tools are configured to fetch from, so that
// `go mod download`, `npm install`, `pip install`, `cargo fetch` and
// `apt-get update` work in the sandbox without the user listing hosts that
// their tools already know. Nothing here names a registry: every host comes
// from the tools' own configuration files, environment variables, or the
// tools themselves, so a user who points a tool at a mirror gets the mirror
// and not a host dsh guessed.

// Registry is one host a tool of the user's is configured to fetch from.
type Registry struct {
	Tool string // "go", "npm", "pip", "cargo", "apt"
	// Host is a host name, lower case, or a pattern "*.example.com" taken
	// from GOPRIVATE and its kin.
	Host string
	// Port is the URL's explicit port, else 443 for https and 80 for http;
	// 0 when the setting names no scheme (any port).
	Port int
	// Source says where the host was read, for `dsh doctor`.
	Source string
}

// Rule is the registry as an allow rule of the network map: "host" when any
// port will do, else "host:port".
func (r Registry) Rule() string {
	if r.Port == 0 {
		return r.Host
	}
	return net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
}

// RegistryEnv is what ToolRegistries reads.
type RegistryEnv struct {
	Env       []string // the user's environment, KEY=VALUE, as os.Environ
	Home      string   // the user's home directory; "" skips files under it
	Workspace string   // the session's workspace, for project config files
	// Run runs a tool and returns its standard output. It must return
	// when ctx is done. nil runs the program with e.Env, killing it and
	// its children when ctx is done.
	Run func(ctx context.Context, name string, args ...string) (string, error)
	// Root prefixes the built-in absolute system paths (/etc/apt,
	// /etc/pip.conf): "" in production, a temporary tree in tests. Paths
	// taken from the environment are used as they are.
	Root string
}

// toolTimeout bounds every tool ToolRegistries runs, all together: the
// tools run at once, so a tool that hangs delays a session's start by this
// much, and runTool's WaitDelay at worst, and no more.
const toolTimeout = 3 * time.Second

// ToolRegistries returns the registries of the tools the user has
// installed, deduplicated by Tool, Host and Port and sorted. It never
// fails: a source that cannot be read or run is skipped, because a missing
// host only means a prompt or a refusal later, never a wrong allow.
func ToolRegistries(ctx context.Context, e RegistryEnv) []Registry {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	r := newRegistryReader(e)
	collectors := []func(context.Context) []Registry{r.goRegistries, r.npmRegistries, r.pipRegistries, r.cargoRegistries, r.aptRegistries}
	found := make([][]Registry, len(collectors))
	var wg sync.WaitGroup
	for i, collect := range collectors {
		wg.Go(func() { found[i] = collect(ctx) })
	}
	wg.Wait()
	return dedupRegistries(slices.Concat(found...))
}

// dedupRegistries sorts and keeps the first source of each Tool, Host and
// Port; the collectors list their most specific source first.
func dedupRegistries(all []Registry) []Registry {
	slices.SortStableFunc(all, func(a, b Registry) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Host, b.Host), cmp.Compare(a.Port, b.Port))
	})
	return slices.CompactFunc(all, func(a, b Registry) bool {
		return a.Tool == b.Tool && a.Host == b.Host && a.Port == b.Port
	})
}

// registryReader carries RegistryEnv with its environment as a map.
type registryReader struct {
	RegistryEnv
	env map[string]string
}

func newRegistryReader(e RegistryEnv) *registryReader {
	r := &registryReader{RegistryEnv: e, env: map[string]string{}}
	for _, kv := range e.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			r.env[k] = v // the last wins, as in exec
		}
	}
	if r.Run == nil {
		r.Run = runTool(e.Env)
	}
	return r
}

// lookPath finds a program on the user's PATH, not dsh's. Relative entries
// are skipped: they resolve against a directory such as the workspace, and
// a program found there is not one the user installed.
func (r *registryReader) lookPath(name string) (string, bool) {
	for _, dir := range filepath.SplitList(r.env["PATH"]) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// sysPath is a built-in absolute system path under Root.
func (r *registryReader) sysPath(p string) string { return filepath.Join(r.Root, p) }

// show is a path as `dsh doctor` prints it: without Root, and with the
// home directory as "~".
func (r *registryReader) show(p string) string {
	if r.Root != "" {
		if rel, ok := strings.CutPrefix(p, filepath.Clean(r.Root)+"/"); ok {
			return "/" + rel
		}
	}
	if r.Home != "" {
		if rel, ok := strings.CutPrefix(p, filepath.Clean(r.Home)+"/"); ok {
			return "~/" + rel
		}
	}
	return p
}

// userPath expands a leading "~/" in a path taken from the environment.
func (r *registryReader) userPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok && r.Home != "" {
		return filepath.Join(r.Home, rest)
	}
	return p
}

// quietEnv is added to a tool's environment so that asking it a question
// never downloads anything or checks for updates: a go whose go.mod or
// GOTOOLCHAIN asks for another toolchain would otherwise fetch one.
var quietEnv = []string{"GOTOOLCHAIN=local", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "NPM_CONFIG_UPDATE_NOTIFIER=false"}

// maxToolOutput bounds what is kept of a tool's output.
const maxToolOutput = 1 << 20

// runTool runs a program in its own process group, from "/" so that no
// project file steers it, and kills the whole group when ctx is done:
// killing only the program would leave a child it started (a shell
// wrapper's real tool) holding the output pipe.
func runTool(env []string) func(ctx context.Context, name string, args ...string) (string, error) {
	return func(ctx context.Context, name string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = append(slices.Clip(env), quietEnv...)
		cmd.Dir = "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		// A grandchild that left the group may still hold the pipe;
		// WaitDelay stops waiting for it.
		cmd.WaitDelay = 500 * time.Millisecond
		out := &cappedBuffer{}
		cmd.Stdout = out
		err := cmd.Run()
		return out.String(), err
	}
}

// cappedBuffer keeps the first maxToolOutput bytes written to it.
type cappedBuffer struct{ bytes.Buffer }

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxToolOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// urlHostPort is the host and port of an http or https URL. Other schemes
// (file:, cdrom:, ssh:, mirror+file:) are not hosts the gateway decides.
func urlHostPort(raw string) (host string, port int, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return "", 0, false
	}
	host = strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" || strings.ContainsAny(host, " \t/\\") {
		return "", 0, false
	}
	port = 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return "", 0, false
		}
		port = n
	}
	return host, port, true
}

// urlRegistry is the Registry of a URL, if it is an http or https one.
func urlRegistry(tool, raw, source string) (Registry, bool) {
	host, port, ok := urlHostPort(raw)
	return Registry{Tool: tool, Host: host, Port: port, Source: source}, ok
}

// readLines reads a file's lines; a file that cannot be read has none.
func readLines(path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
}

// --- go ---

// goKeys are the settings that name the hosts go fetches modules from.
var goKeys = []string{"GOPROXY", "GOSUMDB", "GOPRIVATE", "GONOPROXY", "GONOSUMDB"}

// goRegistries reads the go settings from the environment and asks the
// user's go for the rest, which covers the go env file and the defaults of
// $GOROOT/go.env without dsh knowing where either is. Like go, it treats
// an empty variable as unset.
func (r *registryReader) goRegistries(ctx context.Context) []Registry {
	goBin, ok := r.lookPath("go")
	if !ok {
		return nil
	}
	values, sources := map[string]string{}, map[string]string{}
	var missing bool
	for _, k := range goKeys {
		if v := r.env[k]; v != "" {
			values[k], sources[k] = v, k+" ($"+k+")"
		} else {
			missing = true
		}
	}
	if missing {
		r.goEnv(ctx, goBin, values, sources)
	}
	var regs []Registry
	regs = append(regs, goProxyRegistries(values["GOPROXY"], sources["GOPROXY"])...)
	regs = append(regs, goSumDBRegistries(values["GOSUMDB"], sources["GOSUMDB"])...)
	for _, k := range goKeys[2:] {
		regs = append(regs, goPrivateRegistries(values[k], sources[k])...)
	}
	return regs
}

// goEnv fills in the settings the environment left unset from `go env`.
// GOENV and GOROOT are asked for too, only to tell `dsh doctor` which file
// a value came from.
func (r *registryReader) goEnv(ctx context.Context, goBin string, values, sources map[string]string) {
	out, err := r.Run(ctx, goBin, append([]string{"env", "-json"}, append(goKeys, "GOENV", "GOROOT")...)...)
	if err != nil {
		return
	}
	var got map[string]string
	if json.Unmarshal([]byte(out), &got) != nil {
		return
	}
	files := []struct{ path, show string }{{got["GOENV"], r.show(got["GOENV"])}}
	if got["GOROOT"] != "" {
		files = append(files, struct{ path, show string }{filepath.Join(got["GOROOT"], "go.env"), "$GOROOT/go.env"})
	}
	for _, k := range goKeys {
		if _, set := values[k]; set || got[k] == "" {
			continue
		}
		values[k], sources[k] = got[k], k+" (go env)"
		for _, f := range files {
			if f.path != "" && goEnvFileHas(f.path, k) {
				sources[k] = k + " (" + f.show + ")"
				break
			}
		}
	}
}

// goEnvFileHas reports whether a go env file (KEY=VALUE lines) sets key.
func goEnvFileHas(path, key string) bool {
	for _, line := range readLines(path) {
		if k, _, ok := strings.Cut(strings.TrimSpace(line), "="); ok && strings.TrimSpace(k) == key {
			return true
		}
	}
	return false
}

// goProxyRegistries reads GOPROXY, a list separated by "," or "|". As in
// go, a single word ("direct", "off") is a keyword, and an entry with a
// dot but no scheme is an https URL.
func goProxyRegistries(v, source string) []Registry {
	var regs []Registry
	for _, p := range strings.FieldsFunc(v, func(c rune) bool { return c == ',' || c == '|' }) {
		p = strings.TrimSpace(p)
		if !strings.ContainsAny(p, ".:/") {
			continue
		}
		if !strings.Contains(p, ":/") && !strings.HasPrefix(p, "/") {
			p = "https://" + p
		}
		if reg, ok := urlRegistry("go", p, source); ok {
			regs = append(regs, reg)
		}
	}
	return regs
}

// goSumDBRegistries reads GOSUMDB: "name", "name+key" or "name+key URL".
// The database is fetched from the URL when one is given, else from
// https://name.
func goSumDBRegistries(v, source string) []Registry {
	f := strings.Fields(v)
	if len(f) == 0 || f[0] == "off" {
		return nil
	}
	u := "https://" + strings.SplitN(f[0], "+", 2)[0]
	if len(f) > 1 {
		u = f[1]
		if !strings.Contains(u, "://") {
			u = "https://" + u
		}
	}
	if reg, ok := urlRegistry("go", u, source); ok {
		return []Registry{reg}
	}
	return nil
}

// goPrivateRegistries reads GOPRIVATE, GONOPROXY or GONOSUMDB: module path
// globs that go fetches straight from their origin, whose first path
// element is the origin's host. The host may be a "*.example.com" pattern;
// a first element without a dot, or with any other glob, names no host.
// The version control protocol (https, ssh, git) is unknown here, so the
// pattern allows any port.
func goPrivateRegistries(v, source string) []Registry {
	var regs []Registry
	for _, p := range strings.Split(v, ",") {
		host, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "/")
		name := strings.TrimPrefix(host, "*.")
		if !strings.Contains(host, ".") || !config.ValidHostName(name) { // lower case already; no glob character passes
			continue
		}
		regs = append(regs, Registry{Tool: "go", Host: host, Source: source})
	}
	return regs
}

// --- npm ---

// npmRegistries reads the registry and @scope:registry keys of the user's
// and the project's .npmrc and the environment. When none sets the default
// registry, npm's own answer to `npm config get registry` is its global
// config or its built-in default, which dsh does not know by name.
func (r *registryReader) npmRegistries(ctx context.Context) []Registry {
	npmBin, ok := r.lookPath("npm")
	if !ok {
		return nil
	}
	var regs []Registry
	var haveDefault bool
	for _, k := range []string{"npm_config_registry", "NPM_CONFIG_REGISTRY"} {
		if v := r.env[k]; v != "" {
			haveDefault = true
			if reg, ok := urlRegistry("npm", v, "$"+k); ok {
				regs = append(regs, reg)
			}
		}
	}
	for _, path := range r.npmrcFiles() {
		for _, kv := range parseNpmrc(readLines(path)) {
			haveDefault = haveDefault || kv.key == "registry"
			if reg, ok := urlRegistry("npm", kv.value, r.show(path)+" "+kv.key); ok {
				regs = append(regs, reg)
			}
		}
	}
	if !haveDefault {
		if out, err := r.Run(ctx, npmBin, "config", "get", "registry"); err == nil {
			if reg, ok := urlRegistry("npm", out, "npm config get registry"); ok {
				regs = append(regs, reg)
			}
		}
	}
	return regs
}

// npmrcFiles are the user's .npmrc (or the file npm is told to use
// instead) and the project's.
func (r *registryReader) npmrcFiles() []string {
	var files []string
	user := cmp.Or(r.env["npm_config_userconfig"], r.env["NPM_CONFIG_USERCONFIG"])
	if user != "" {
		files = append(files, r.userPath(user))
	} else if r.Home != "" {
		files = append(files, filepath.Join(r.Home, ".npmrc"))
	}
	if r.Workspace != "" {
		files = append(files, filepath.Join(r.Workspace, ".npmrc"))
	}
	return files
}

type keyValue struct{ key, value string }

// parseNpmrc returns the registry keys of an .npmrc: "registry" and
// "@scope:registry". A value that refers to a variable is skipped rather
// than expanded: its host is not known without the user's shell.
func parseNpmrc(lines []string) []keyValue {
	var kvs []keyValue
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"'`)
		scoped := strings.HasPrefix(k, "@") && strings.HasSuffix(k, ":registry")
		if !ok || (k != "registry" && !scoped) || strings.Contains(v, "${") {
			continue
		}
		kvs = append(kvs, keyValue{k, v})
	}
	return kvs
}

// --- pip ---

// pipRegistries reads the index URLs of the environment and pip's
// configuration files. When none sets index-url, pip's default is learnt
// from pip's own help, which prints it.
func (r *registryReader) pipRegistries(ctx context.Context) []Registry {
	pipBin, ok := r.lookPath("pip3")
	if !ok {
		if pipBin, ok = r.lookPath("pip"); !ok {
			return nil
		}
	}
	var regs []Registry
	haveIndex := r.env["PIP_INDEX_URL"] != ""
	for _, k := range []string{"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL"} {
		for _, u := range strings.Fields(r.env[k]) {
			if reg, ok := urlRegistry("pip", u, "$"+k); ok {
				regs = append(regs, reg)
			}
		}
	}
	for _, path := range r.pipConfFiles() {
		for _, kv := range parsePipConf(readLines(path)) {
			haveIndex = haveIndex || kv.key == "index-url"
			for _, u := range strings.Fields(kv.value) {
				if reg, ok := urlRegistry("pip", u, r.show(path)+" "+kv.key); ok {
					regs = append(regs, reg)
				}
			}
		}
	}
	if !haveIndex {
		if out, err := r.Run(ctx, pipBin, "install", "--help"); err == nil {
			if reg, ok := urlRegistry("pip", pipHelpDefault(out), filepath.Base(pipBin)+" install --help"); ok {
				regs = append(regs, reg)
			}
		}
	}
	return regs
}

// pipConfFiles are the files pip reads, in pip's order. As pip does, the
// user's files are skipped when $PIP_CONFIG_FILE names an existing file.
func (r *registryReader) pipConfFiles() []string {
	var files []string
	xdgDirs := []string{r.sysPath("/etc/xdg")}
	if v := r.env["XDG_CONFIG_DIRS"]; v != "" {
		xdgDirs = filepath.SplitList(v)
	}
	for _, d := range xdgDirs {
		files = append(files, filepath.Join(d, "pip", "pip.conf"))
	}
	files = append(files, r.sysPath("/etc/pip.conf"))
	envFile := r.userPath(r.env["PIP_CONFIG_FILE"])
	if _, err := os.Stat(envFile); (envFile == "" || err != nil) && r.Home != "" {
		xdgHome := cmp.Or(r.env["XDG_CONFIG_HOME"], filepath.Join(r.Home, ".config"))
		files = append(files, filepath.Join(r.Home, ".pip", "pip.conf"), filepath.Join(xdgHome, "pip", "pip.conf"))
	}
	if v := r.env["VIRTUAL_ENV"]; v != "" {
		files = append(files, filepath.Join(v, "pip.conf"))
	}
	if envFile != "" {
		files = append(files, envFile)
	}
	return files
}

// pipSections are the sections whose index settings pip install uses.
var pipSections = map[string]bool{"global": true, "install": true, "download": true}

// parsePipConf returns the index-url and extra-index-url settings of a
// pip.conf (an ini file as Python's configparser reads it: "key = value"
// or "key: value", values continued on more indented lines), with "_" in
// key names read as "-", as pip does.
func parsePipConf(lines []string) []keyValue {
	var kvs []keyValue
	var section string
	current := -1 // the setting a continuation line extends
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';':
			continue
		case line[0] == ' ' || line[0] == '\t':
			if current >= 0 {
				kvs[current].value += " " + trimmed
			}
			continue
		case trimmed[0] == '[':
			section, _, _ = strings.Cut(trimmed[1:], "]")
			current = -1
			continue
		}
		current = -1
		i := strings.IndexAny(trimmed, "=:")
		if i < 0 || !pipSections[strings.TrimSpace(section)] {
			continue
		}
		k := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(trimmed[:i])), "_", "-")
		if k == "index-url" || k == "extra-index-url" {
			kvs = append(kvs, keyValue{k, strings.TrimSpace(trimmed[i+1:])})
			current = len(kvs) - 1
		}
	}
	return kvs
}

// pipHelpDefault finds the default index URL in `pip install --help`: the
// --index-url option's text says "(default <URL>)". The help is wrapped to
// the terminal's width, which may break the text anywhere there is a space
// or a hyphen, so the URL is what is left once white space is removed.
func pipHelpDefault(help string) string {
	_, opt, ok := strings.Cut(help, "--index-url")
	if !ok {
		return ""
	}
	// The option's text ends where the next option's line begins.
	if end := strings.Index(opt, "\n  -"); end >= 0 {
		opt = opt[:end]
	}
	_, after, ok := strings.Cut(opt, "(default")
	if !ok {
		return ""
	}
	u, _, ok := strings.Cut(after, ")")
	if !ok {
		return ""
	}
	return strings.Join(strings.Fields(u), "")
}

// --- cargo ---

// cargoRegistries reads the registries and source replacements of the
// user's and the project's cargo config, and CARGO_REGISTRIES_<NAME>_INDEX.
// Cargo's built-in default index is compiled into cargo and printed by no
// command, so it is not found here: a user who relies on it lists it in
// the network map.
func (r *registryReader) cargoRegistries(context.Context) []Registry {
	if _, ok := r.lookPath("cargo"); !ok {
		return nil
	}
	var regs []Registry
	for _, k := range slices.Sorted(maps.Keys(r.env)) {
		if strings.HasPrefix(k, "CARGO_REGISTRIES_") && strings.HasSuffix(k, "_INDEX") {
			if reg, ok := urlRegistry("cargo", cargoIndexURL(r.env[k]), "$"+k); ok {
				regs = append(regs, reg)
			}
		}
	}
	home := r.env["CARGO_HOME"]
	if home == "" && r.Home != "" {
		home = filepath.Join(r.Home, ".cargo")
	}
	var files []string
	for _, dir := range []string{filepath.Join(r.Workspace, ".cargo"), home} {
		if dir != "" && dir != ".cargo" {
			files = append(files, filepath.Join(dir, "config.toml"), filepath.Join(dir, "config"))
		}
	}
	for _, path := range files {
		for _, kv := range parseCargoConfig(readLines(path)) {
			if reg, ok := urlRegistry("cargo", kv.value, r.show(path)+" "+kv.key); ok {
				regs = append(regs, reg)
			}
		}
	}
	return regs
}

// cargoIndexURL strips the protocol cargo puts before an index URL.
func cargoIndexURL(u string) string {
	u = strings.TrimPrefix(u, "sparse+")
	return strings.TrimPrefix(u, "registry+")
}

// parseCargoConfig returns the index URLs of a cargo config: the keys
// registries.NAME.index and source.NAME.registry, written under a section
// header or as dotted keys, with string values. This is the little of
// TOML these keys need; inline tables and multi-line strings are not read.
func parseCargoConfig(lines []string) []keyValue {
	var kvs []keyValue
	var section []string
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[[") {
			section = nil // an array of tables holds no registry
			continue
		}
		if strings.HasPrefix(line, "[") {
			header, _, _ := strings.Cut(line[1:], "]")
			section = tomlKey(header)
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		key := slices.Concat(section, tomlKey(k))
		val, ok := tomlString(strings.TrimSpace(v))
		if !ok || len(key) != 3 {
			continue
		}
		if key[0] == "registries" && key[2] == "index" || key[0] == "source" && key[2] == "registry" {
			kvs = append(kvs, keyValue{strings.Join(key, "."), cargoIndexURL(val)})
		}
	}
	return kvs
}

// tomlKey splits a dotted TOML key, unquoting quoted parts.
func tomlKey(s string) []string {
	var parts []string
	for s = strings.TrimSpace(s); s != ""; {
		var part string
		if s[0] == '"' || s[0] == '\'' {
			end := strings.IndexByte(s[1:], s[0])
			if end < 0 {
				return nil
			}
			part, s = s[1:end+1], s[end+2:]
		} else {
			part, s, _ = strings.Cut(s, ".")
			part = strings.TrimSpace(part)
			s = "." + s
		}
		parts = append(parts, part)
		s = strings.TrimSpace(s)
		if s != "" && s[0] != '.' {
			return nil
		}
		s = strings.TrimSpace(strings.TrimPrefix(s, "."))
	}
	return parts
}

// tomlString reads a basic or literal string at the start of s; what
// follows it can only be a comment. URLs need no escapes, so a basic
// string with one is not read.
func tomlString(s string) (string, bool) {
	if len(s) < 2 || (s[0] != '"' && s[0] != '\'') {
		return "", false
	}
	end := strings.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", false
	}
	val, rest := s[1:end+1], strings.TrimSpace(s[end+2:])
	if s[0] == '"' && strings.Contains(val, `\`) || rest != "" && rest[0] != '#' {
		return "", false
	}
	return val, true
}

// --- apt ---

// aptRegistries reads the archive URIs of apt's sources, one-line and
// deb822. apt counts as installed when /etc/apt exists: apt is not asked
// anything, so there is nothing to find on PATH.
func (r *registryReader) aptRegistries(context.Context) []Registry {
	etc := r.sysPath("/etc/apt")
	if fi, err := os.Stat(etc); err != nil || !fi.IsDir() {
		return nil
	}
	files := []string{filepath.Join(etc, "sources.list")}
	// apt reads only these two extensions in sources.list.d; Glob sorts.
	lists, _ := filepath.Glob(filepath.Join(etc, "sources.list.d", "*.list"))
	sources, _ := filepath.Glob(filepath.Join(etc, "sources.list.d", "*.sources"))
	var regs []Registry
	for _, path := range append(files, lists...) {
		for _, u := range parseAptList(readLines(path)) {
			if reg, ok := urlRegistry("apt", u, r.show(path)); ok {
				regs = append(regs, reg)
			}
		}
	}
	for _, path := range sources {
		for _, u := range parseAptSources(readLines(path)) {
			if reg, ok := urlRegistry("apt", u, r.show(path)); ok {
				regs = append(regs, reg)
			}
		}
	}
	return regs
}

// parseAptList returns the URIs of one-line sources:
// "deb [options] URI suite [component…]", and deb-src alike.
func parseAptList(lines []string) []string {
	var uris []string
	for _, line := range lines {
		line, _, _ = strings.Cut(line, "#")
		kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		if kind != "deb" && kind != "deb-src" {
			continue
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, "[") {
			_, rest, _ = strings.Cut(rest, "]")
		}
		if f := strings.Fields(rest); len(f) > 0 {
			uris = append(uris, f[0])
		}
	}
	return uris
}

// parseAptSources returns the URIs of deb822 sources: stanzas separated by
// blank lines, whose URIs field lists one or more URIs, possibly on
// continuation lines; a stanza with "Enabled: no" is off.
func parseAptSources(lines []string) []string {
	var uris []string
	fields := map[string]string{}
	var last string
	flush := func() {
		if !strings.EqualFold(strings.TrimSpace(fields["enabled"]), "no") {
			uris = append(uris, strings.Fields(fields["uris"])...)
		}
		fields, last = map[string]string{}, ""
	}
	for _, line := range append(lines, "") {
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == '#':
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				fields[last] += " " + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = strings.ToLower(strings.TrimSpace(k))
			fields[last] = strings.TrimSpace(v)
		}
	}
	return uris
}
