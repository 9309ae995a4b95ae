package local

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dsh-go/dsh/config"
)

func TestCredentialName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		// docs/spec.md §2.4 examples.
		{"OPENAI_API_KEY", true},
		{"GITHUB_TOKEN", true},
		{"AWS_SECRET_ACCESS_KEY", true},
		{"DB_PASSWORD", true},
		{"NPMTOKEN", true},
		{"MONKEY", false},
		{"KEYBOARD_LAYOUT", false},
		{"TOKENIZERS_PARALLELISM", false},

		// Every listed word, alone and inside a name.
		{"KEY", true},
		{"SSH_KEYS", true},
		{"APIKEY", true},
		{"MY_SECRET", true},
		{"SECRETS_DIR", true},
		{"TOKEN", true},
		{"HF_TOKENS", true},
		{"PASSWORD", true},
		{"PASSWORDS_FILE", true},
		{"MYSQL_PASSWD", true},
		{"GPG_PASSPHRASE", true},
		{"CREDENTIAL", true},
		{"GOOGLE_APPLICATION_CREDENTIALS", true},

		// Suffixes.
		{"OPENAIAPIKEY", true},
		{"CLIENTSECRET", true},
		{"SLACKTOKEN", true},
		{"ROOTPASSWORD", true},
		{"HFTOKENS", false}, // ends in TOKENS, which is only a word
		{"MYSECRETS", false},
		{"TOKENIZER", false},
		{"SECRETARY", false},
		{"PASSWORDLESS", false},

		// Case and separators.
		{"apiKey", true},
		{"my.secret", true},
		{"X-Api-Key", true},
		{"github_token", true},
		{"Db-Password", true},
		{"aws secret", true},
		{"key", true},
		{"__KEY__", true},
		{"A1_KEY_2", true},
		{"KEYé", true},     // é is not ASCII, so it separates: the word KEY
		{"ÜBERKEY", false}, // the word is BERKEY
		{"MONKEY_PATCH", false},
		{"HOTKEY", false},
		{"PUBKEY", false},
		{"KEYRING", false},
		{"PATH", false},
		{"HOME", false},
		{"SSH_AUTH_SOCK", false},

		// Names ending in PWD, AUTH, DSN or AUTH HEADER, webhooks and
		// compounds with KEY (issue 15).
		{"MYSQL_PWD", true},
		{"PWD", false},
		{"OLDPWD", false},
		{"NPM_CONFIG__AUTH", true},
		{"npm_config__auth", true},
		{"BASIC_AUTH", true},
		{"AUTH", false},
		{"AUTH_URL", false},
		{"GITHUB_OAUTH", false},
		{"X_AUTH_TOKEN", true},
		{"AUTH_HEADER", true},
		{"PROXY_AUTH_HEADER", true},
		{"HEADER", false},
		{"SLACK_WEBHOOK_URL", true},
		{"DISCORDWEBHOOK", true},
		{"SENTRY_DSN", true},
		{"DSN", false},
		{"DSN_HOST", false},
		{"AWS_SECRETKEY", true},
		{"SSH_PRIVATEKEY", true},
		{"S3ACCESSKEY", true},
		{"GOPATH", false},
		{"PUBLICKEY", false},

		// More names: the last word PASS, PAT, PW, COOKIE or
		// COOKIES, the last two AUTH CONFIG or CONNECTION STRING, the
		// words JWT and CREDS anywhere.
		{"SMTP_PASS", true},
		{"smtp-pass", true},
		{"GITHUB_PAT", true},
		{"AZURE_DEVOPS_PAT", true},
		{"DB_PW", true},
		{"ADMIN_PW", true},
		{"DOCKER_AUTH_CONFIG", true},
		{"AZURE_STORAGE_CONNECTION_STRING", true},
		{"DB_CONNECTION_STRING", true},
		{"CI_JOB_JWT", true},
		{"CI_JOB_JWT_V2", true},
		{"JWT", true},
		{"SESSION_COOKIE", true},
		{"OTEL_EXPORTER_OTLP_HEADERS", true},
		{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", true},
		{"HEADERS", false},
		{"YOUTUBE_COOKIES", true},
		{"CREDS", true},
		{"GCP_CREDS", true},
		{"CREDS_JSON", true},
		{"PASS", false},
		{"PAT", false},
		{"PW", false},
		{"COOKIE", false},
		{"PASSAGE", false},
		{"PATCH_LEVEL", false},
		{"PASS_THROUGH", false},
		{"PAT_ID", false},
		{"BYPASS", false},
		{"NO_BYPASS", false},
		{"COMPASS", false},
		{"PATTERN", false},
		{"COOKIE_JAR", false},
		{"AUTH_CONFIG", true}, // as AUTH_HEADER
		{"DOCKER_CONFIG", false},
		{"CONNECTION_STRING", true},
		{"CONNECTION_STRING_FORMAT", false},
		{"JWTS_DIR", false},
		{"CREDIT_LIMIT", false},
		{"LANG", false},
		{"", false},
		{"___", false},
	} {
		if got := credentialName(tc.name); got != tc.want {
			t.Errorf("credentialName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSecretValue(t *testing.T) {
	const b64 = "abcdEFGH1234_-xy"
	for _, tc := range []struct {
		name  string
		value string
		want  bool
	}{
		// Token prefixes, each with 8 characters after it, and 7.
		{"ghp", "ghp_" + b64, true},
		{"gho", "gho_abcdefgh", true},
		{"ghs", "ghs_12345678", true},
		{"github_pat", "github_pat_11ABCDEFG0_abcdefgh", true},
		{"glpat", "glpat-abcdefgh", true},
		{"xoxb", "xoxb-1234-5678-abcd", true},
		{"xoxp", "xoxp-12345678", true},
		{"xoxa", "xoxa-12345678", true},
		{"xoxE", "xoxE-12345678", true},
		{"sk-", "sk-" + b64, true},
		{"sk-ant", "sk-ant-api03-abcdefgh", true},
		{"sk-proj", "sk-proj-abcdefgh", true},
		{"sk_live", "sk_live_abcdefgh", true},
		{"ghp short", "ghp_abcdefg", false},
		{"glpat short", "glpat-1234567", false},
		{"xox short", "xoxb-1234567", false},
		{"sk short", "sk-1234567", false},
		{"sk_live short", "sk_live_1234567", false},
		{"xox digit", "xox1-12345678", false},
		{"xox no letter", "xox-12345678", false},
		{"sk_test", "sk_test_abcdefgh", true},
		{"rk_live", "rk_live_abcdefgh", true},
		{"rk_test", "rk_test_abcdefgh", true},
		{"pk_live is public", "pk_live_abcdefgh", false},
		{"xapp", "xapp-1-A0123-4567-abcdef", true},
		{"xoxe dot", "xoxe.xoxp-1-abcdefgh", true},
		{"google api key", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", true},
		{"npm", "npm_abcdefghijklmnopqrstuvwxyz0123456789", true},
		{"hugging face", "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", true},
		{"pypi", "pypi-AgEIcHlwaS5vcmcCJGFiY2RlZmdoLWlqa2wtbW5vcC1xcnN0", true},
		{"bearer", "Bearer abcdefgh.ijk", true},
		{"bearer lower", "bearer abcdefgh", true},
		{"basic", "Basic dXNlcjpwYXNzd29yZA==", true},
		{"bearer short", "Bearer abc", false},
		{"basic word", "Basic", false},
		{"bearer not at start", "token Bearer abcdefgh", false},
		{"hf short", "hf_abc", false},
		{"npm in a path", "/opt/npm_modules_cache/bin", false},
		{"prefix case matters", "GHP_abcdefgh", false},
		{"prefix then other characters", "sk-12345678 and more", true},
		{"prefix with 8 then a dot", "ghp_abcdefgh.x", true},
		{"prefix broken early", "ghp_abc.defgh", false},
		{"leading white space", "  \tghp_abcdefgh\n", true},
		{"prefix not at start", "token ghp_abcdefgh", false},
		{"prefix in a path", "/opt/sk-tools/bin:/usr/bin", false},
		{"prefix after colon", "/usr/bin:sk-abcdefgh", false},

		// AWS access key ids.
		{"AKIA", "AKIAIOSFODNN7EXAMPLE", true},
		{"ASIA", "ASIAIOSFODNN7EXAMPLE", true},
		{"AKIA then separator", "AKIAIOSFODNN7EXAMPLE:rest", true},
		{"AKIA then space", "AKIAIOSFODNN7EXAMPLE more", true},
		{"AKIA 15", "AKIAIOSFODNN7EXAMPL", false},
		{"AKIA 17", "AKIAIOSFODNN7EXAMPLEX", false},
		{"AKIA then lower", "AKIAIOSFODNN7EXAMPLEx", false},
		{"AKIA lower inside", "AKIAiosfodnn7example", false},
		{"AKIA not at start", "id=AKIAIOSFODNN7EXAMPLE", false},
		{"AKID", "AKIDIOSFODNN7EXAMPLE", false},

		// JWTs.
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", true},
		{"jwt unsigned", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", true},
		{"jwe five parts", "eyJhbGciOiJSU0EifQ.a.b.c.d", true},
		{"jwt two parts", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0", false},
		{"jwt empty payload", "eyJhbGciOiJub25lIn0..sig", false},
		{"jwt not at start", "token eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", false},
		{"eyJ alone", "eyJ", false},

		// PEM private keys, anywhere.
		{"pem", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n", true},
		{"pem rsa", "-----BEGIN RSA PRIVATE KEY-----\nMIIE", true},
		{"pem ec", "-----BEGIN EC PRIVATE KEY-----", true},
		{"pem openssh", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl", true},
		{"pem encrypted", "-----BEGIN ENCRYPTED PRIVATE KEY-----", true},
		{"pem pgp", "-----BEGIN PGP PRIVATE KEY BLOCK-----", true},
		{"pem inside", "key: -----BEGIN RSA PRIVATE KEY-----\\nMIIE...", true},
		{"pem public key", "-----BEGIN PUBLIC KEY-----\nMIIB", false},
		{"pem certificate", "-----BEGIN CERTIFICATE-----\nMIIB", false},
		{"pem pgp public", "-----BEGIN PGP PUBLIC KEY BLOCK-----", false},

		// URLs with a password, anywhere.
		{"url password", "postgres://user:hunter2@db:5432/app", true},
		{"url empty user", "redis://:hunter2@localhost:6379", true},
		{"url encoded password", "https://user:p%40ss@example.com/", true},
		{"url unencoded at", "mysql://user:p@ss@db/app", true},
		{"url inside", "mirrors=https://a.example,https://u:p@b.example", true},
		{"url no host", "https://u:p@", true},
		{"url no password", "http://user@host", false},
		{"url empty password", "http://user:@host", false},
		{"url port", "http://localhost:8080/path", false},
		{"url port and at in path", "http://localhost:8080/@types/node", false},
		{"url at in query", "https://host/x?u=a:b@c", false},
		{"url at in fragment", "https://host/#a:b@c", false},
		{"no scheme", "user:pass@host", false},
		{"ssh git", "git@github.com:org/repo.git", false},

		// Ordinary values.
		{"empty", "", false},
		{"path", "/usr/local/bin:/usr/bin:/opt/sk-tools/bin", false},
		{"locale", "sk_SK.UTF-8", false},
		{"locale hyphen", "sk-SK", false},
		{"word", "skeleton", false},
		{"url", "https://example.com/a:b", false},
		{"proxy", "http://proxy.example:3128", false},
	} {
		if got := secretValue(tc.value); got != tc.want {
			t.Errorf("%s: secretValue(%q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}

func TestBaseEnv(t *testing.T) {
	fixed := []string{"GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", "PAGER=cat", "TERM=dumb"}
	with := func(env ...string) []string { return append(env, fixed...) }

	for _, tc := range []struct {
		name    string
		environ []string
		cfg     config.Env
		want    []string
	}{
		{"nil environ", nil, config.Env{}, fixed},
		{"ordinary variables kept in order",
			[]string{"PATH=/usr/bin:/opt/sk-tools/bin", "HOME=/home/u", "LANG=sk_SK.UTF-8", "MONKEY=1", "KEYBOARD_LAYOUT=us", "TOKENIZERS_PARALLELISM=false", "EMPTY="},
			config.Env{},
			with("PATH=/usr/bin:/opt/sk-tools/bin", "HOME=/home/u", "LANG=sk_SK.UTF-8", "MONKEY=1", "KEYBOARD_LAYOUT=us", "TOKENIZERS_PARALLELISM=false", "EMPTY=")},
		{"credential names dropped",
			[]string{"A=1", "OPENAI_API_KEY=x", "GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=x", "DB_PASSWORD=x", "NPMTOKEN=x", "apiKey=x", "my.secret=x", "X-Api-Key=x", "B=2"},
			config.Env{},
			with("A=1", "B=2")},
		{"secret values dropped",
			[]string{"A=1", "GH=ghp_abcdefgh1234", "DATABASE_URL=postgres://u:p@db/app", "PEM=-----BEGIN RSA PRIVATE KEY-----\nx", "ID=AKIAIOSFODNN7EXAMPLE", "J=eyJa.eyJb.c", "S=xoxb-12345678", "NOPASS=http://user@host", "B=2"},
			config.Env{},
			with("A=1", "NOPASS=http://user@host", "B=2")},
		{"scrub names and patterns",
			[]string{"MY_A=1", "MY_B=2", "MYC=3", "FOO=4", "BAR=5", "my_d=6"},
			config.Env{Scrub: []string{"MY_*", "FOO"}},
			with("MYC=3", "BAR=5", "my_d=6")},
		{"scrub character class and ?",
			[]string{"A1=1", "A2=2", "AB=3", "A12=4"},
			config.Env{Scrub: []string{"A[0-9]"}},
			with("AB=3", "A12=4")},
		{"malformed pattern matches only its exact name",
			[]string{"MY_[=1", "MY_[X=2", "MY_A=3", `A\=4`},
			config.Env{Scrub: []string{"MY_[", `A\`}},
			with("MY_[X=2", "MY_A=3")},
		{"malformed passthrough pattern matches only its exact name",
			[]string{"X_TOKEN=1", "[_TOKEN=2"},
			config.Env{Passthrough: []string{"[*"}},
			with()},
		{"passthrough wins over name, value and pattern",
			[]string{"GITHUB_TOKEN=ghp_abcdefgh1234", "DATABASE_URL=postgres://u:p@db/app", "MY_A=1", "MY_B=2", "OTHER_TOKEN=x"},
			config.Env{
				Passthrough: []string{"GITHUB_TOKEN", "DATABASE_URL", "MY_A"},
				Scrub:       []string{"MY_*"},
			},
			with("GITHUB_TOKEN=ghp_abcdefgh1234", "DATABASE_URL=postgres://u:p@db/app", "MY_A=1")},
		{"passthrough patterns",
			[]string{"CI_JOB_TOKEN=x", "CI_DEPLOY_PASSWORD=y", "NPM_TOKEN=z"},
			config.Env{Passthrough: []string{"CI_*"}},
			with("CI_JOB_TOKEN=x", "CI_DEPLOY_PASSWORD=y")},
		{"patterns are case-sensitive",
			[]string{"my_a=1", "MY_A=2"},
			config.Env{Scrub: []string{"my_*"}},
			with("MY_A=2")},
		{"passthrough does not add a missing variable",
			[]string{"A=1"},
			config.Env{Passthrough: []string{"GITHUB_TOKEN"}},
			with("A=1")},
		{"fixed layer overrides in place",
			[]string{"TERM=xterm-256color", "A=1", "PAGER=less", "NO_COLOR=0"},
			config.Env{},
			[]string{"TERM=dumb", "A=1", "PAGER=cat", "NO_COLOR=1", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}},
		{"set wins over the fixed layer and the environment",
			[]string{"A=1", "TERM=xterm", "B=2"},
			config.Env{Set: map[string]string{"TERM": "xterm-mono", "B": "set", "Z": "z", "C": "c", "PAGER": "more"}},
			[]string{"A=1", "TERM=xterm-mono", "B=set", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", "PAGER=more", "C=c", "Z=z"}},
		{"set may reintroduce a scrubbed name",
			[]string{"GITHUB_TOKEN=ghp_abcdefgh1234", "A=1"},
			config.Env{Set: map[string]string{"GITHUB_TOKEN": "from-config"}},
			append([]string{"A=1"}, append(fixed, "GITHUB_TOKEN=from-config")...)},
		{"set values are not scrubbed",
			nil,
			config.Env{Set: map[string]string{"A": "ghp_abcdefgh1234"}},
			append(fixed, "A=ghp_abcdefgh1234")},
		{"set names that cannot be written are skipped",
			nil,
			config.Env{Set: map[string]string{"": "x", "A=B": "y", "OK": "z"}},
			append(fixed, "OK=z")},
		{"duplicates: first position, last value",
			[]string{"A=1", "B=2", "A=3", "C=4", "B=5"},
			config.Env{},
			with("A=3", "B=5", "C=4")},
		{"duplicates: the last value is the one scrubbed",
			[]string{"A=1", "URL=ghp_abcdefgh1234", "B=2", "URL=https://example.com"},
			config.Env{},
			with("A=1", "URL=https://example.com", "B=2")},
		{"duplicates: a secret last value drops the name",
			[]string{"URL=https://example.com", "A=1", "URL=ghp_abcdefgh1234"},
			config.Env{},
			with("A=1")},
		{"malformed entries dropped",
			[]string{"NOEQUALS", "=C:=C:\\", "A=b=c", "", "B="},
			config.Env{},
			with("A=b=c", "B=")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			environ := append([]string(nil), tc.environ...)
			got := baseEnv(environ, tc.cfg)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("baseEnv mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.environ, environ); diff != "" {
				t.Errorf("baseEnv modified environ (-before +after):\n%s", diff)
			}
		})
	}
}

func TestBaseEnvDeterministic(t *testing.T) {
	cfg := config.Env{Set: map[string]string{"Q": "1", "W": "2", "E": "3", "R": "4", "T": "5", "Y": "6"}}
	first := baseEnv([]string{"A=1"}, cfg)
	for range 20 {
		if diff := cmp.Diff(first, baseEnv([]string{"A=1"}, cfg)); diff != "" {
			t.Fatalf("baseEnv is not deterministic (-first +now):\n%s", diff)
		}
	}
}

func TestWithEnv(t *testing.T) {
	base := []string{"PATH=/bin", "TERM=dumb", "A=1"}
	for _, tc := range []struct {
		name  string
		extra map[string]string
		want  []string
	}{
		{"nil", nil, base},
		{"empty", map[string]string{}, base},
		{"override in place", map[string]string{"TERM": "xterm"}, []string{"PATH=/bin", "TERM=xterm", "A=1"}},
		{"append sorted", map[string]string{"Z": "z", "B": "b", "A": "2"}, []string{"PATH=/bin", "TERM=dumb", "A=2", "B=b", "Z=z"}},
		{"secrets allowed", map[string]string{"GITHUB_TOKEN": "ghp_abcdefgh1234"}, append(append([]string(nil), base...), "GITHUB_TOKEN=ghp_abcdefgh1234")},
		{"empty value", map[string]string{"PATH": ""}, []string{"PATH=", "TERM=dumb", "A=1"}},
		{"unwritable names skipped", map[string]string{"": "x", "B=C": "y"}, base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string(nil), base...)
			got := withEnv(in, tc.extra)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("withEnv mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(base, in); diff != "" {
				t.Errorf("withEnv modified base (-before +after):\n%s", diff)
			}
		})
	}

	// Layer 4 over layers 1–3: the spec's env wins over everything.
	b := baseEnv([]string{"TERM=xterm", "GITHUB_TOKEN=x"}, config.Env{Set: map[string]string{"TERM": "vt100"}})
	got := withEnv(b, map[string]string{"TERM": "hook", "GITHUB_TOKEN": "hook"})
	want := []string{"TERM=hook", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", "PAGER=cat", "GITHUB_TOKEN=hook"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withEnv(baseEnv) mismatch (-want +got):\n%s", diff)
	}
}

// TestTerminalEnv: a command under a terminal gets layer 2 with TERM for
// the emulator in place of dumb; the rest of layer 2 stays, and env.set's
// TERM still wins.
func TestTerminalEnv(t *testing.T) {
	environ := []string{"TERM=screen", "A=1", "GITHUB_TOKEN=x"}
	got := terminalEnv(environ, config.Env{})
	want := []string{"TERM=xterm-256color", "A=1", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", "PAGER=cat"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("terminalEnv mismatch (-want +got):\n%s", diff)
	}
	got = terminalEnv(environ, config.Env{Set: map[string]string{"TERM": "vt100"}})
	want[0] = "TERM=vt100"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("terminalEnv with env.set TERM mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(baseEnv(environ, config.Env{}), []string{"TERM=dumb", "A=1", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", "PAGER=cat"}); diff != "" {
		t.Errorf("baseEnv changed (-got +want):\n%s", diff)
	}
}

// TestEnvIsPure checks that building an environment leaves the process
// environment alone.
func TestEnvIsPure(t *testing.T) {
	t.Setenv("DSH_ENV_TEST", "1")
	_ = withEnv(baseEnv([]string{"DSH_ENV_TEST=2"}, config.Env{Set: map[string]string{"DSH_ENV_TEST": "3"}}), map[string]string{"DSH_ENV_TEST": "4"})
	if v := os.Getenv("DSH_ENV_TEST"); v != "1" {
		t.Errorf("process environment changed: DSH_ENV_TEST=%q", v)
	}
}
