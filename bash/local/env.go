package local

// The environment of every command (docs/spec.md §2.4), built in layers, later
// wins:
//
//  1. the server's environment minus credentials ([baseEnv]);
//  2. NO_COLOR=1, TERM=dumb (TERM=xterm-256color under a terminal:
//     [terminalEnv]), PAGER=cat, GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0;
//  3. env.set from config;
//  4. the spec's env, from trusted callers ([withEnv]).
//
// Layers 1–3 depend only on the config and the environment the executor was
// given, so they are built once; layer 4 is applied per command. These are
// pure functions over "K=V" lists: they never read or change the process
// environment.
//
// The scrub, and the decisions where docs/spec.md leaves room:
//
//   - Names ([credentialName]): the name is split into words on every
//     character that is not an ASCII letter or digit, and each word is
//     upper-cased. It is a credential when a word equals KEY, KEYS, APIKEY,
//     SECRET, SECRETS, TOKEN, TOKENS, PASSWORD, PASSWORDS, PASSWD, PASSPHRASE,
//     CREDENTIAL, CREDENTIALS, CREDS or JWT, or ends in APIKEY, SECRET,
//     TOKEN, PASSWORD, SECRETKEY, PRIVATEKEY or ACCESSKEY, or contains
//     WEBHOOK; or when the name has several words and the last is PWD,
//     AUTH, DSN, PASS, PAT, PW, COOKIE, COOKIES or HEADERS, or the last two
//     are AUTH HEADER, AUTH CONFIG or CONNECTION STRING (MYSQL_PWD,
//     NPM_CONFIG__AUTH, SENTRY_DSN, SMTP_PASS, GITHUB_PAT, DB_PW,
//     SESSION_COOKIE, OTEL_EXPORTER_OTLP_HEADERS, X_AUTH_HEADER, DOCKER_AUTH_CONFIG,
//     AZURE_STORAGE_CONNECTION_STRING). camelCase is not split: apiKey is
//     the one word APIKEY, which matches; MONKEY, KEYBOARD_LAYOUT, PWD,
//     OLDPWD, PASSAGE, PATH, PATCH_LEVEL, PASS_THROUGH and SSH_AUTH_SOCK (a
//     socket path, which gives commands the user's SSH agent) do not.
//   - Values ([secretValue]): a PEM private key block anywhere in the value;
//     a URL with a non-empty password in its userinfo anywhere
//     (scheme://user:pass@host, also scheme://:pass@host; user@ and user:@
//     are not secrets); or, at the start of the value after trimming white
//     space, a well-known token: ghp_, gho_, ghs_, github_pat_, glpat-,
//     xox?- (? a letter), xoxe., xapp-, sk-, sk_live_, sk_test_, rk_live_,
//     rk_test_, AIza, npm_, hf_ or pypi-, each followed by at least 8 of
//     [A-Za-z0-9_-]; Bearer or Basic (any case), spaces and at least 8 of
//     [A-Za-z0-9._~+/=-]; AKIA or ASIA and exactly 16 of [A-Z0-9] (then the end
//     or a character that is not a letter or digit); a JWT, eyJ… with three
//     dot-separated base64url parts, the last possibly empty. Token prefixes
//     count only at the start: a PATH holding /opt/sk-tools/bin must never be
//     dropped, or no command would find anything.
//   - env.scrub and env.passthrough entries are exact names or path.Match
//     patterns (case-sensitive); a malformed pattern matches nothing here
//     (config validation refuses it earlier). A name matched by passthrough
//     is kept whatever the scrub says: name, value or pattern.
//   - Order: surviving variables keep the order of the given environment; a
//     name given twice keeps its first position and its last value (the
//     value a process would see), and the scrub tests that value. Entries
//     without '=' or with an empty name are dropped. Layers 2–4 replace a
//     variable in place or append it; each layer appends its new names in
//     sorted order, so the result is deterministic. A layer name that is
//     empty or holds '=' cannot be written as K=V and is skipped.

import (
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/config"
	"github.com/dsh-go/dsh/internal/lazyre"
)

// fixedEnv is layer 2: no colours, no pagers, no prompts.
var fixedEnv = map[string]string{
	"NO_COLOR":            "1",
	"TERM":                "dumb",
	"PAGER":               "cat",
	"GIT_PAGER":           "cat",
	"GIT_TERMINAL_PROMPT": "0",
}

var (
	credentialWords = map[string]bool{
		"KEY": true, "KEYS": true, "APIKEY": true,
		"SECRET": true, "SECRETS": true,
		"TOKEN": true, "TOKENS": true,
		"PASSWORD": true, "PASSWORDS": true, "PASSWD": true, "PASSPHRASE": true,
		"CREDENTIAL": true, "CREDENTIALS": true, "CREDS": true,
		"JWT": true, // CI_JOB_JWT, CI_JOB_JWT_V2
	}
	credentialSuffixes = []string{"APIKEY", "SECRET", "TOKEN", "PASSWORD", "SECRETKEY", "PRIVATEKEY", "ACCESSKEY"}
	// credentialLastWords are credentials as the last word of a name of
	// several words: MYSQL_PWD (but PWD itself is the working directory),
	// NPM_CONFIG__AUTH (but SSH_AUTH_SOCK, a socket path, is kept),
	// SENTRY_DSN, SMTP_PASS, GITHUB_PAT, DB_PW, SESSION_COOKIE,
	// OTEL_EXPORTER_OTLP_HEADERS (a collector's API key). Only last:
	// PASS_THROUGH and PAT_ID are not secrets.
	credentialLastWords = map[string]bool{
		"PWD": true, "AUTH": true, "DSN": true,
		"PASS": true, "PAT": true, "PW": true, "COOKIE": true, "COOKIES": true,
		"HEADERS": true,
	}
	// credentialLastPairs are credentials as the last two words of a
	// name: PROXY_AUTH_HEADER, DOCKER_AUTH_CONFIG (registry logins),
	// AZURE_STORAGE_CONNECTION_STRING (it holds the account key).
	credentialLastPairs = map[[2]string]bool{
		{"AUTH", "HEADER"}: true, {"AUTH", "CONFIG"}: true, {"CONNECTION", "STRING"}: true,
	}
)

// Compiled on first use, not at every start of dsh.
var (
	// pemPrivateKey matches the BEGIN line of any PEM private key: PRIVATE
	// KEY, RSA/EC/DSA/OPENSSH/ENCRYPTED PRIVATE KEY, PGP PRIVATE KEY BLOCK.
	pemPrivateKey = lazyre.New(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----`)
	// urlPassword matches scheme://user:password@ with a non-empty password
	// (RFC 3986 userinfo: no '/', '?', '#' or '@' unescaped).
	urlPassword = lazyre.New(`[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:[^/?#@\s]+@`)
	// tokenPrefix matches a well-known token at the start of a value.
	tokenPrefix = lazyre.New(`^(?:` +
		`(?:ghp_|gho_|ghs_|github_pat_|glpat-|xox[A-Za-z]-|xoxe\.|xapp-|sk-|[sr]k_(?:live|test)_|AIza|npm_|hf_|pypi-)[A-Za-z0-9_-]{8}` +
		`|(?i:bearer|basic) +[A-Za-z0-9._~+/=-]{8}` +
		`|(?:AKIA|ASIA)[A-Z0-9]{16}(?:$|[^A-Za-z0-9])` +
		`|eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.` +
		`)`)
)

// credentialName reports whether an environment variable name names a
// credential (§2.4, first bullet).
func credentialName(name string) bool {
	words := strings.FieldsFunc(name, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	})
	for i, w := range words {
		w = strings.ToUpper(w)
		words[i] = w
		if credentialWords[w] || strings.Contains(w, "WEBHOOK") {
			return true
		}
		for _, s := range credentialSuffixes {
			if strings.HasSuffix(w, s) {
				return true
			}
		}
	}
	return credentialEnding(words)
}

// credentialEnding reports whether the last words of a name make it a
// credential: one of credentialLastWords after another word, or one of
// credentialLastPairs (after another word or not).
func credentialEnding(words []string) bool {
	n := len(words)
	if n < 2 {
		return false
	}
	return credentialLastWords[words[n-1]] || credentialLastPairs[[2]string{words[n-2], words[n-1]}]
}

// secretValue reports whether a value looks like a secret (§2.4, second
// bullet).
func secretValue(value string) bool {
	return tokenPrefix().MatchString(strings.TrimSpace(value)) ||
		pemPrivateKey().MatchString(value) ||
		urlPassword().MatchString(value)
}

// matchAny reports whether name is one of patterns or matches one of them as
// a path.Match glob.
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if ok, err := path.Match(p, name); err == nil && ok {
			return true
		}
	}
	return false
}

// baseEnv builds layers 1–3 from environ (os.Environ() form "K=V"): the
// scrub (names, values, cfg.Scrub patterns, unless named in
// cfg.Passthrough), then the fixed layer NO_COLOR=1, TERM=dumb, PAGER=cat,
// GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0, then cfg.Set. Later layers win.
func baseEnv(environ []string, cfg config.Env) []string {
	return layered(environ, cfg, fixedEnv)
}

// terminalEnv is baseEnv for a command under a terminal (docs/spec.md
// §2.7): its TERM names the terminal the output is rendered for,
// TerminalType, instead of dumb; env.set's TERM still wins. NO_COLOR and
// the pagers stay: a model that wants less or colours asks for them.
func terminalEnv(environ []string, cfg config.Env) []string {
	fixed := maps.Clone(fixedEnv)
	fixed["TERM"] = TerminalType
	return layered(environ, cfg, fixed)
}

// layered is layers 1–3 with fixed as layer 2.
func layered(environ []string, cfg config.Env, fixed map[string]string) []string {
	e := parseEnv(environ)
	e.keep(func(name, value string) bool {
		if matchAny(cfg.Passthrough, name) {
			return true
		}
		return !credentialName(name) && !secretValue(value) && !matchAny(cfg.Scrub, name)
	})
	e.overlay(fixed)
	e.overlay(cfg.Set)
	return e.list()
}

// withEnv returns base with extra (layer 4) applied over it; base is not
// modified; nil extra returns base as is.
func withEnv(base []string, extra map[string]string) []string {
	if len(extra) == 0 {
		return base
	}
	e := parseEnv(base)
	e.overlay(extra)
	return e.list()
}

// envList is an environment with unique names in a stable order.
type envList struct {
	names  []string
	values map[string]string
}

func parseEnv(environ []string) envList {
	e := envList{values: make(map[string]string, len(environ))}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		e.set(name, value)
	}
	return e
}

func (e *envList) set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

// keep drops the variables for which ok returns false.
func (e *envList) keep(ok func(name, value string) bool) {
	e.names = slices.DeleteFunc(e.names, func(name string) bool {
		if ok(name, e.values[name]) {
			return false
		}
		delete(e.values, name)
		return true
	})
}

// overlay sets every variable of layer, in sorted order so that new names
// are appended deterministically.
func (e *envList) overlay(layer map[string]string) {
	for _, name := range slices.Sorted(maps.Keys(layer)) {
		if name == "" || strings.Contains(name, "=") {
			continue
		}
		e.set(name, layer[name])
	}
}

func (e *envList) list() []string {
	out := make([]string, len(e.names))
	for i, name := range e.names {
		out[i] = name + "=" + e.values[name]
	}
	return out
}
