package gateway

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeFile writes a file, making its directories.
func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeTool installs a fake tool: a shell script in dir. It sets its own
// PATH, as the user's PATH in these tests holds only the fake tools.
func writeTool(t *testing.T, dir, name, body string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, name), "#!/bin/sh\nPATH=/usr/bin:/bin\n"+body)
	if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

// userTree is a user's home, a workspace, a system root and a PATH
// directory, all temporary.
type userTree struct{ home, workspace, root, bin string }

func newUserTree(t *testing.T) userTree {
	d := t.TempDir()
	u := userTree{filepath.Join(d, "home"), filepath.Join(d, "ws"), filepath.Join(d, "root"), filepath.Join(d, "bin")}
	for _, dir := range []string{u.home, u.workspace, u.root, u.bin} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

func (u userTree) env(extra ...string) RegistryEnv {
	return RegistryEnv{
		Env:  append([]string{"PATH=" + u.bin, "HOME=" + u.home}, extra...),
		Home: u.home, Workspace: u.workspace, Root: u.root,
	}
}

// pipHelp is how pip prints its --index-url option on a narrow terminal:
// the default URL is broken at a hyphen and across lines.
const pipHelp = `Package Index Options:
  -i, --index-url <url>       Base URL of the package index (default
                              https://pkg-
                              mirror.example.com/simple). This should point
                              to a repository (the simple repository API).
  --extra-index-url <url>     Extra URLs of package indexes to use in addition
                              to --index-url (default none).
`

// configureUser installs fake go, npm, pip3 and cargo, configures them
// and apt, with settings to be read, skipped, and repeated.
func configureUser(t *testing.T, u userTree) {
	goroot := filepath.Join(u.root, "goroot")
	writeTool(t, u.bin, "go", `[ "$1 $2" = "env -json" ] || exit 2
cat <<EOF
{"GOPROXY":"https://ignored.example.com","GOSUMDB":"sum.example.com+abcd+KEY",
 "GOPRIVATE":"*.corp.example.com,git.example.org/team,nodot/x,*","GONOPROXY":"*.corp.example.com,git.example.org/team,nodot/x,*",
 "GONOSUMDB":"","GOENV":"$HOME/.config/go/env","GOROOT":"`+goroot+`"}
EOF
`)
	writeFile(t, filepath.Join(u.home, ".config/go/env"), "GOSUMDB=sum.example.com+abcd+KEY\n")
	writeFile(t, filepath.Join(goroot, "go.env"), "GOPRIVATE=*.corp.example.com,git.example.org/team,nodot/x,*\n")

	writeTool(t, u.bin, "npm", `[ "$*" = "config get registry" ] && echo https://npm.example.com/`)
	writeFile(t, filepath.Join(u.home, ".npmrc"), "; a comment\n@acme:registry=https://npm.acme.example.org/\n//npm.acme.example.org/:_authToken=x\n")
	writeFile(t, filepath.Join(u.workspace, ".npmrc"), "@acme:registry = https://npm.acme.example.org/\n@var:registry=${REG}\n")

	writeTool(t, u.bin, "pip3", "[ \"$*\" = \"install --help\" ] && cat <<'EOF'\n"+pipHelp+"EOF\n")
	writeFile(t, filepath.Join(u.home, ".config/pip/pip.conf"), "[global]\nextra-index-url =\n    https://extra1.example.com/simple\n    http://extra2.example.com:8080/simple\n")
	writeFile(t, filepath.Join(u.root, "etc/pip.conf"), "[freeze]\nindex-url = https://freeze.example.com/\n")

	writeTool(t, u.bin, "cargo", "exit 1\n")
	writeFile(t, filepath.Join(u.home, ".cargo/config.toml"), "[registries.acme]\nindex = \"sparse+https://cargo.acme.example.org/index/\"\n[source.mirror]\nregistry = \"https://git.example.org/index.git\"\n")
	writeFile(t, filepath.Join(u.workspace, ".cargo/config.toml"), "registries.proj.index = 'https://cargo.proj.example.net/' # the project's\n")

	writeFile(t, filepath.Join(u.root, "etc/apt/sources.list"), "deb [arch=amd64 signed-by=/k.gpg] http://deb.example.com/debian stable main\n# deb http://commented.example.com/ x\ndeb cdrom:[disc]/ stable main\n")
	writeFile(t, filepath.Join(u.root, "etc/apt/sources.list.d/src.list"), "deb-src https://src.example.com:8443/ stable main\n")
	writeFile(t, filepath.Join(u.root, "etc/apt/sources.list.d/x.sources"), "Types: deb\nURIs: https://a.example.org/ http://b.example.org/\n https://c.example.org/\nSuites: x\n\nTypes: deb\nURIs: https://disabled.example.org/\nEnabled: no\n\nURIs: file:/srv/repo mirror+file:/etc/apt/mirrors.txt\n")
	writeFile(t, filepath.Join(u.root, "etc/apt/sources.list.d/ignored.txt"), "deb http://ignored.example.com/ x main\n")
}

// TestToolRegistries reads a user's whole configuration, running the fake
// tools as real processes through the default Run.
func TestToolRegistries(t *testing.T) {
	t.Parallel()
	u := newUserTree(t)
	configureUser(t, u)
	got := ToolRegistries(t.Context(), u.env("GOPROXY=https://env-proxy.example.com:8443|off,direct", "REG=https://var.example.com/"))
	want := []Registry{
		{"apt", "a.example.org", 443, "/etc/apt/sources.list.d/x.sources"},
		{"apt", "b.example.org", 80, "/etc/apt/sources.list.d/x.sources"},
		{"apt", "c.example.org", 443, "/etc/apt/sources.list.d/x.sources"},
		{"apt", "deb.example.com", 80, "/etc/apt/sources.list"},
		{"apt", "src.example.com", 8443, "/etc/apt/sources.list.d/src.list"},
		{"cargo", "cargo.acme.example.org", 443, "~/.cargo/config.toml registries.acme.index"},
		{"cargo", "cargo.proj.example.net", 443, filepath.Join(u.workspace, ".cargo/config.toml") + " registries.proj.index"},
		{"cargo", "git.example.org", 443, "~/.cargo/config.toml source.mirror.registry"},
		{"go", "*.corp.example.com", 0, "GOPRIVATE ($GOROOT/go.env)"},
		{"go", "env-proxy.example.com", 8443, "GOPROXY ($GOPROXY)"},
		{"go", "git.example.org", 0, "GOPRIVATE ($GOROOT/go.env)"},
		{"go", "sum.example.com", 443, "GOSUMDB (~/.config/go/env)"},
		{"npm", "npm.acme.example.org", 443, "~/.npmrc @acme:registry"},
		{"npm", "npm.example.com", 443, "npm config get registry"},
		{"pip", "extra1.example.com", 443, "~/.config/pip/pip.conf extra-index-url"},
		{"pip", "extra2.example.com", 8080, "~/.config/pip/pip.conf extra-index-url"},
		{"pip", "pkg-mirror.example.com", 443, "pip3 install --help"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToolRegistries (-want +got):\n%s", diff)
	}
}

// TestToolRegistriesHungTool gives up on a tool that never answers, kills
// it and its children, and keeps what the other tools said.
func TestToolRegistriesHungTool(t *testing.T) {
	t.Parallel()
	u := newUserTree(t)
	pids := t.TempDir()
	writeTool(t, u.bin, "go", `echo $$ > "$PIDS/sh"
sleep 60 &
echo $! > "$PIDS/sleep"
wait
`)
	writeTool(t, u.bin, "npm", "echo https://npm.example.com/\n")
	start := time.Now()
	got := ToolRegistries(t.Context(), u.env("PIDS="+pids))
	// Not before the timeout: the tool did hang, and was given up.
	if elapsed := time.Since(start); elapsed > 30*time.Second || elapsed < toolTimeout {
		t.Errorf("ToolRegistries took %v with a hung tool", elapsed)
	}
	want := []Registry{{"npm", "npm.example.com", 443, "npm config get registry"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToolRegistries (-want +got):\n%s", diff)
	}
	for _, name := range []string{"sh", "sleep"} {
		data, err := os.ReadFile(filepath.Join(pids, name))
		if err != nil {
			t.Fatalf("the hung tool did not start its %s: %v", name, err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		waitGone(t, pid)
	}
}

// waitGone waits for a process to be gone or a zombie: a killed orphan is
// reaped by whichever process adopted it, which may never do so here.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if _, after, ok := strings.Cut(string(stat), ") "); ok && strings.HasPrefix(after, "Z") {
			return
		}
	}
	t.Errorf("process %d still runs", pid)
}

// TestToolRegistriesMissingTools reads nothing for a tool that is not on
// the user's PATH, configured or not, and no apt without /etc/apt.
func TestToolRegistriesMissingTools(t *testing.T) {
	t.Parallel()
	u := newUserTree(t)
	writeFile(t, filepath.Join(u.home, ".npmrc"), "registry=https://npm.example.com/\n")
	writeFile(t, filepath.Join(u.home, ".config/pip/pip.conf"), "[global]\nindex-url=https://pip.example.com/\n")
	writeFile(t, filepath.Join(u.home, ".cargo/config"), "[registries.a]\nindex=\"https://cargo.example.com/\"\n")
	e := u.env("GOPROXY=https://proxy.example.com")
	e.Run = func(context.Context, string, ...string) (string, error) {
		t.Error("a tool was run though none is installed")
		return "", errors.New("not installed")
	}
	if got := ToolRegistries(t.Context(), e); len(got) != 0 {
		t.Errorf("ToolRegistries = %v, want none", got)
	}
}

// TestToolRegistriesRelativePath skips a PATH entry that is relative: it
// would find a program in the current directory, such as a workspace's.
func TestToolRegistriesRelativePath(t *testing.T) {
	u := newUserTree(t)
	writeTool(t, u.bin, "npm", "echo https://npm.example.com/\n")
	t.Chdir(u.bin)
	e := u.env()
	e.Env = []string{"PATH=.:bin"}
	if got := ToolRegistries(t.Context(), e); len(got) != 0 {
		t.Errorf("ToolRegistries = %v, want none", got)
	}
}

// TestToolRegistriesConfigured runs no tool when the configuration says
// everything the tool would, and removes duplicates across sources.
func TestToolRegistriesConfigured(t *testing.T) {
	t.Parallel()
	u := newUserTree(t)
	for _, name := range []string{"go", "npm", "pip"} {
		writeTool(t, u.bin, name, "exit 1\n")
	}
	writeFile(t, filepath.Join(u.home, ".npmrc"), "registry=\"https://npm.example.com/\"\n")
	writeFile(t, filepath.Join(u.workspace, ".npmrc"), "registry=https://npm.example.com\n")
	writeFile(t, filepath.Join(u.home, "pip.conf"), "[install]\nindex_url: https://pip.example.com/simple\n")
	e := u.env("GOPROXY=proxy.example.com", "GOSUMDB=off", "GOPRIVATE=example.org",
		"GONOPROXY=example.org", "GONOSUMDB=example.org", "PIP_CONFIG_FILE=~/pip.conf",
		"PIP_EXTRA_INDEX_URL=https://pip.example.com/simple https://extra.example.com/")
	var mu sync.Mutex
	var ran []string
	e.Run = func(_ context.Context, name string, args ...string) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, name)
		return "", errors.New("should not run")
	}
	got := ToolRegistries(t.Context(), e)
	want := []Registry{
		{"go", "example.org", 0, "GOPRIVATE ($GOPRIVATE)"},
		{"go", "proxy.example.com", 443, "GOPROXY ($GOPROXY)"},
		{"npm", "npm.example.com", 443, "~/.npmrc registry"},
		{"pip", "extra.example.com", 443, "$PIP_EXTRA_INDEX_URL"},
		{"pip", "pip.example.com", 443, "$PIP_EXTRA_INDEX_URL"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToolRegistries (-want +got):\n%s", diff)
	}
	if len(ran) != 0 {
		t.Errorf("ran %v, want no tool run", ran)
	}
}

// TestToolRegistriesToolFails skips a tool whose answer is an error or
// is not what was asked for.
func TestToolRegistriesToolFails(t *testing.T) {
	t.Parallel()
	u := newUserTree(t)
	for _, name := range []string{"go", "npm", "pip"} {
		writeTool(t, u.bin, name, "exit 1\n")
	}
	e := u.env()
	e.Run = func(_ context.Context, name string, args ...string) (string, error) {
		switch filepath.Base(name) {
		case "go":
			return "not json", nil
		case "npm":
			return "undefined\n", nil
		}
		return "(default https://pip.example.com/)", errors.New("exit status 1")
	}
	if got := ToolRegistries(t.Context(), e); len(got) != 0 {
		t.Errorf("ToolRegistries = %v, want none", got)
	}
}

func TestRegistryRule(t *testing.T) {
	for _, tc := range []struct {
		r    Registry
		want string
	}{
		{Registry{Host: "a.example.com", Port: 443}, "a.example.com:443"},
		{Registry{Host: "*.corp.example.com"}, "*.corp.example.com"},
		{Registry{Host: "::1", Port: 8080}, "[::1]:8080"},
	} {
		if got := tc.r.Rule(); got != tc.want {
			t.Errorf("%+v.Rule() = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// rules lists registries as "host" or "host:port", to keep tables short.
func rules(regs []Registry) []string {
	var out []string
	for _, r := range regs {
		out = append(out, r.Rule())
	}
	return out
}

func TestGoSettingParsers(t *testing.T) {
	for _, tc := range []struct {
		parse func(v, source string) []Registry
		in    string
		want  []string
	}{
		{goProxyRegistries, "https://a.example.com,direct", []string{"a.example.com:443"}},
		{goProxyRegistries, "http://a.example.com:3000|https://b.example.com/path,off", []string{"a.example.com:3000", "b.example.com:443"}},
		{goProxyRegistries, "a.example.com/go, noproxy ,file:///srv/mods,/srv/mods", []string{"a.example.com:443"}},
		{goProxyRegistries, "off", nil},
		{goSumDBRegistries, "sum.example.com", []string{"sum.example.com:443"}},
		{goSumDBRegistries, "sum.example.com+abc+KEY", []string{"sum.example.com:443"}},
		{goSumDBRegistries, "sum.example.com+abc+KEY https://mirror.example.org:9443/sumdb", []string{"mirror.example.org:9443"}},
		{goSumDBRegistries, "sum.example.com+abc+KEY mirror.example.org", []string{"mirror.example.org:443"}},
		{goSumDBRegistries, "off", nil},
		{goPrivateRegistries, "*.Corp.example.com,git.example.org/a/*,corp/x,*,*.*.example.com,gh?.example.com/x,[ab].example.com", []string{"*.corp.example.com", "git.example.org"}},
		{goPrivateRegistries, "", nil},
	} {
		if got := rules(tc.parse(tc.in, "")); !slices.Equal(got, tc.want) {
			t.Errorf("parse(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseNpmrc(t *testing.T) {
	in := "registry = https://npm.example.com/\n# registry=https://no.example.com/\n; x\n@a:registry=\"https://a.example.com\"\n@b:registry=${B}\nregistryx=https://no.example.com\n//a.example.com/:_authToken=t\nalways-auth=true\n"
	want := []keyValue{{"registry", "https://npm.example.com/"}, {"@a:registry", "https://a.example.com"}}
	if diff := cmp.Diff(want, parseNpmrc(strings.Split(in, "\n")), cmp.AllowUnexported(keyValue{})); diff != "" {
		t.Errorf("parseNpmrc (-want +got):\n%s", diff)
	}
}

func TestParsePipConf(t *testing.T) {
	in := `# pip
[global]
timeout = 60
index-url = https://a.example.com/simple
extra-index-url =
	https://b.example.com/simple
    https://c.example.com/simple

[freeze]
index-url = https://no.example.com/
[download]
EXTRA_INDEX_URL: https://d.example.com/
; index-url = https://no.example.com/
`
	want := []keyValue{
		{"index-url", "https://a.example.com/simple"},
		{"extra-index-url", " https://b.example.com/simple https://c.example.com/simple"},
		{"extra-index-url", "https://d.example.com/"},
	}
	if diff := cmp.Diff(want, parsePipConf(strings.Split(in, "\n")), cmp.AllowUnexported(keyValue{})); diff != "" {
		t.Errorf("parsePipConf (-want +got):\n%s", diff)
	}
}

func TestPipHelpDefault(t *testing.T) {
	for _, tc := range []struct{ help, want string }{
		{pipHelp, "https://pkg-mirror.example.com/simple"},
		{"  -i, --index-url <url>  Base URL (default https://a.example.com/simple). More (text).\n", "https://a.example.com/simple"},
		{"  -i, --index-url <url>  Base URL (default\n     https://a.exa\n     mple.com/simple)\n", "https://a.example.com/simple"},
		// The default of another option is not the index's.
		{"  -i, --index-url <url>  Base URL.\n  --extra-index-url <url> (default none)\n", ""},
		{"Usage: pip install\n", ""},
	} {
		if got := pipHelpDefault(tc.help); got != tc.want {
			t.Errorf("pipHelpDefault(%q) = %q, want %q", tc.help, got, tc.want)
		}
	}
}

func TestParseCargoConfig(t *testing.T) {
	in := `# cargo
[registries.a]
index = "sparse+https://a.example.com/index/" # comment
token = "t"
[registries."b c"]
index = 'registry+https://b.example.com/'
[source.m]
registry = "https://m.example.com/index"
replace-with = "n"
[source.local]
directory = "/srv/vendor"
[[bin]]
index = "https://no.example.com/"
[registry]
index = "https://no.example.com/"
[net]
registries.d.index = "https://d.example.com/"
`
	want := []keyValue{
		{"registries.a.index", "https://a.example.com/index/"},
		{"registries.b c.index", "https://b.example.com/"},
		{"source.m.registry", "https://m.example.com/index"},
	}
	if diff := cmp.Diff(want, parseCargoConfig(strings.Split(in, "\n")), cmp.AllowUnexported(keyValue{})); diff != "" {
		t.Errorf("parseCargoConfig (-want +got):\n%s", diff)
	}
	top := "registries.d.index = \"https://d.example.com/\"\nsource . \"e\" . registry = 'https://e.example.com/'\nregistries.f.index = \"https://f.example.com/\\u0041\"\n"
	want = []keyValue{{"registries.d.index", "https://d.example.com/"}, {"source.e.registry", "https://e.example.com/"}}
	if diff := cmp.Diff(want, parseCargoConfig(strings.Split(top, "\n")), cmp.AllowUnexported(keyValue{})); diff != "" {
		t.Errorf("parseCargoConfig of dotted keys (-want +got):\n%s", diff)
	}
}

func TestParseAptList(t *testing.T) {
	in := "deb http://a.example.com/debian stable main\n deb-src [ arch=amd64 signed-by=/k ] https://b.example.com/ x main # c\n#deb http://no.example.com/ x\ndeb [trusted=yes] file:/srv/repo ./\nrpm http://no.example.com/\n"
	want := []string{"http://a.example.com/debian", "https://b.example.com/", "file:/srv/repo"}
	if got := parseAptList(strings.Split(in, "\n")); !slices.Equal(got, want) {
		t.Errorf("parseAptList = %q, want %q", got, want)
	}
}

func TestParseAptSources(t *testing.T) {
	in := "# header\nTypes: deb deb-src\nURIs: https://a.example.com/\nSuites: x\n\n\nuris: http://b.example.com/\n  https://c.example.com/\nEnabled: yes\n\nURIs: https://no.example.com/\nEnabled: No"
	want := []string{"https://a.example.com/", "http://b.example.com/", "https://c.example.com/"}
	if got := parseAptSources(strings.Split(in, "\n")); !slices.Equal(got, want) {
		t.Errorf("parseAptSources = %q, want %q", got, want)
	}
}

func TestURLHostPort(t *testing.T) {
	for _, tc := range []struct {
		in   string
		host string
		port int
		ok   bool
	}{
		{"https://A.Example.com./x", "a.example.com", 443, true},
		{"http://u:p@a.example.com:8080/", "a.example.com", 8080, true},
		{" https://[2001:db8::1]/\n", "2001:db8::1", 443, true},
		{"https://a.example.com:0/", "", 0, false},
		{"ftp://a.example.com/", "", 0, false},
		{"mirror+file:/etc/apt/m.txt", "", 0, false},
		{"https:///path", "", 0, false},
		{"a.example.com", "", 0, false},
	} {
		host, port, ok := urlHostPort(tc.in)
		if host != tc.host || port != tc.port || ok != tc.ok {
			t.Errorf("urlHostPort(%q) = %q, %d, %v, want %q, %d, %v", tc.in, host, port, ok, tc.host, tc.port, tc.ok)
		}
	}
}
