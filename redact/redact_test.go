package redact

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// fake returns n characters of alphabet, the same for the same seed: fake
// secrets of real formats, never real ones.
func fake(seed uint64, alphabet string, n int) string {
	r := rand.New(rand.NewPCG(seed, 15))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	alnum62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upper36 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0234567"
	b64url  = alnum62 + "_-"
)

// secrets is a corpus of real-format fake secrets: each line as a command
// prints it, and the line as the model must read it.
var secrets = func() []struct{ in, want string } {
	pem := "-----BEGIN RSA PRIVATE KEY-----\n" + fake(1, alnum62+"+/", 64) + "\n" + fake(2, alnum62+"+/", 64) + "\n" + fake(3, alnum62, 20) + "==\n-----END RSA PRIVATE KEY-----"
	openssh := "-----BEGIN OPENSSH PRIVATE KEY-----\n" + fake(4, alnum62+"+/", 70) + "\n-----END OPENSSH PRIVATE KEY-----"
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ." + fake(5, b64url, 43)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + fake(6, alnum62, 16)))
	return []struct{ in, want string }{
		{"GITHUB_TOKEN=ghp_" + fake(10, alnum62, 36), "GITHUB_TOKEN=[REDACTED:github-pat]"},
		{`{"token": "gho_` + fake(11, alnum62, 36) + `"}`, `{"token": "[REDACTED:github-oauth]"}`},
		{"installation token ghs_" + fake(12, alnum62, 36) + " expires", "installation token [REDACTED:github-app-token] expires"},
		{"ghu_" + fake(13, alnum62, 36), "[REDACTED:github-app-token]"},
		{"refresh: ghr_" + fake(14, alnum62, 36), "refresh: [REDACTED:github-refresh-token]"},
		{"github_pat_" + fake(15, alnum62, 22) + "_" + fake(16, alnum62, 59), "[REDACTED:github-fine-grained-pat]"},
		{"CI_JOB: glpat-" + fake(17, b64url, 20), "CI_JOB: [REDACTED:gitlab-pat]"},
		{"SLACK_BOT_TOKEN=xoxb-1234567890123-1234567890123-" + fake(18, alnum62, 24), "SLACK_BOT_TOKEN=[REDACTED:slack-token]"},
		{"xoxp-1234567890-1234567890-1234567890-" + fake(19, "0123456789abcdef", 32), "[REDACTED:slack-token]"},
		{"config token xoxe.xoxp-1-" + fake(20, upper36, 163), "config token [REDACTED:slack-token]"},
		{"refresh xoxe-1-" + fake(21, upper36, 146), "refresh [REDACTED:slack-token]"},
		{"app: xapp-1-A0123BCDE45-1234567890123-" + fake(22, "0123456789abcdef", 64), "app: [REDACTED:slack-app-token]"},
		{"https://hooks.slack.com/services/T0" + fake(23, upper36, 8) + "/B0" + fake(24, upper36, 8) + "/" + fake(25, alnum62, 24), "https://hooks.slack.com/services/[REDACTED:slack-webhook-url]"},
		{"STRIPE_KEY=sk_live_" + fake(26, alnum62, 24), "STRIPE_KEY=[REDACTED:stripe-access-token]"},
		{"sk_test_" + fake(27, alnum62, 99), "[REDACTED:stripe-access-token]"},
		{"restricted rk_live_" + fake(28, alnum62, 24), "restricted [REDACTED:stripe-access-token]"},
		{"//registry.npmjs.org/:_authToken=npm_" + fake(29, alnum62, 36), "//registry.npmjs.org/:_authToken=[REDACTED:npm-access-token]"},
		{"HF_TOKEN=hf_" + fake(30, alnum62, 34), "HF_TOKEN=[REDACTED:huggingface-access-token]"},
		{"password = pypi-AgEIcHlwaS5vcmc" + fake(31, b64url, 70), "password = [REDACTED:pypi-upload-token]"},
		{"key=AIza" + fake(32, b64url, 35) + "&q=x", "key=[REDACTED:gcp-api-key]&q=x"},
		{"OPENAI_API_KEY=sk-proj-" + fake(33, b64url, 74) + "T3BlbkFJ" + fake(34, b64url, 74), "OPENAI_API_KEY=[REDACTED:openai-api-key]"},
		{"sk-" + fake(35, alnum62, 20) + "T3BlbkFJ" + fake(36, alnum62, 20), "[REDACTED:openai-api-key]"},
		{"ANTHROPIC_API_KEY=sk-ant-api03-" + fake(37, b64url, 93) + "AA", "ANTHROPIC_API_KEY=[REDACTED:anthropic-api-key]"},
		{"aws_access_key_id = AKIA" + fake(38, upper36, 16), "aws_access_key_id = [REDACTED:aws-access-token]"},
		{`"AccessKeyId": "ASIA` + fake(39, upper36, 16) + `",`, `"AccessKeyId": "[REDACTED:aws-access-token]",`},
		{"aws_secret_access_key = " + fake(40, alnum62+"/+", 40), "aws_secret_access_key = [REDACTED:aws-secret-access-key]"},
		{`"SecretAccessKey": "` + fake(41, alnum62+"/+", 40) + `",`, `"SecretAccessKey": "[REDACTED:aws-secret-access-key]",`},
		{"AWS_SECRET_ACCESS_KEY=" + fake(42, alnum62+"/+", 40), "AWS_SECRET_ACCESS_KEY=[REDACTED:aws-secret-access-key]"},
		{"id_token: " + jwt, "id_token: [REDACTED:jwt]"},
		{"DATABASE_URL=postgres://app:" + fake(43, alnum62, 20) + "@db.internal:5432/app", "DATABASE_URL=postgres://app:[REDACTED:url-password]@db.internal:5432/app"},
		{"remote: https://x-access-token:" + fake(44, alnum62, 30) + "@github.com/org/repo.git", "remote: https://x-access-token:[REDACTED:url-password]@github.com/org/repo.git"},
		{"redis://:" + fake(45, alnum62, 12) + "@cache:6379/0", "redis://:[REDACTED:url-password]@cache:6379/0"},
		{"Authorization: Bearer " + fake(46, alnum62, 40), "Authorization: Bearer [REDACTED:bearer-token]"},
		{"> authorization: bearer " + jwt, "> authorization: bearer [REDACTED:jwt]"},
		{"Authorization: Basic " + basic, "Authorization: Basic [REDACTED:basic-auth]"},
		{pem, "[REDACTED:private-key]"},
		{"key: |\n  " + openssh, "key: |\n  [REDACTED:private-key]"},
		{`"private_key": "-----BEGIN PRIVATE KEY-----\n` + fake(47, alnum62+"+/", 64) + `\n-----END PRIVATE KEY-----\n",`, `"private_key": "[REDACTED:private-key]\n",`},
		{"-----BEGIN EC PRIVATE KEY-----\n" + fake(48, alnum62+"+/", 64) + "\n" + fake(49, alnum62+"+/", 30), "[REDACTED:private-key]"},
	}
}()

// lookAlikes is a corpus of output that looks like secrets and is not:
// hashes, ids, base64 blobs, words and URLs a build or a shell prints.
var lookAlikes = func() []string {
	var out []string
	for i := range 20 {
		sum := sha1.Sum([]byte{byte(i)})
		out = append(out, "commit "+hex.EncodeToString(sum[:]))
		sum256 := sha256.Sum256([]byte{byte(i)})
		out = append(out, "sha256:"+hex.EncodeToString(sum256[:]))
		out = append(out, "integrity sha512-"+base64.StdEncoding.EncodeToString(append(sum256[:], sum256[:]...)))
		out = append(out, fmt.Sprintf("request %s-%s-4%s-a%s-%s", fake(uint64(100+i), "0123456789abcdef", 8), fake(uint64(200+i), "0123456789abcdef", 4),
			fake(uint64(300+i), "0123456789abcdef", 3), fake(uint64(400+i), "0123456789abcdef", 3), fake(uint64(500+i), "0123456789abcdef", 12)))
		out = append(out, "  data: "+base64.StdEncoding.EncodeToString([]byte(fake(uint64(600+i), alnum62+" \n", 300))))
		out = append(out, "blob "+fake(uint64(700+i), alnum62+"+/", 120))
	}
	return append(out,
		"a blob with AKIA inside: x"+"AKIA"+fake(800, upper36, 16)+"y",
		"https://github.com/org/repo.git",
		"http://localhost:8080/@types/node",
		"git@github.com:org/repo.git",
		"ssh://git@example.com:22/repo",
		"https://user@example.com/path",
		"http://[::1]:8080/x",
		"Basic usage: dsh run -- COMMAND",
		"basic authentication is disabled",
		"Bearer tokens are sent in the Authorization header",
		"the bearer authentication scheme",
		"Authorization: Basic realm=\"dsh\"",
		"Basic dXNlcm5hbWU=", // base64 of "username": no colon
		"pip install scikit-learn sk-video",
		"ghp_short",
		"npm_config_cache=/home/me/.npm",
		"hf_transfer enabled",
		"eyJhbGciOiJIUzI1NiJ9 alone",
		"-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
		"-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
		"export PATH=/opt/sk-tools/bin:$PATH",
		"secret_access_key is not set",
		"xoxo-gossip-girl",
		"xoxb-not-a-token-at-all",
		"AIza short",
		"docker.io/library/golang@sha256:"+strings.Repeat("ab", 32),
		"PASS\nok  \tgithub.com/dsh-go/dsh/redact\t0.012s",
	)
}()

func known(t testing.TB) *Redactor {
	t.Helper()
	r, err := New(Known)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSecretsRedacted: every fake secret of the corpus is replaced, alone
// and within mixed output, and nothing else is touched.
func TestSecretsRedacted(t *testing.T) {
	r := known(t)
	var in, want strings.Builder
	for i, s := range secrets {
		if got := r.Text(s.in); got != s.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", s.in, got, s.want)
		}
		la := lookAlikes[i%len(lookAlikes)]
		fmt.Fprintf(&in, "%s\n%s\n", la, s.in)
		fmt.Fprintf(&want, "%s\n%s\n", la, s.want)
	}
	if got := r.Text(in.String()); got != want.String() {
		t.Errorf("mixed output:\n got %q\nwant %q", got, want.String())
	}
}

// TestLookAlikesKept: output that only looks like secrets is left intact.
func TestLookAlikesKept(t *testing.T) {
	r := known(t)
	for _, s := range lookAlikes {
		if got := r.Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
	all := strings.Join(lookAlikes, "\n")
	if got := r.Text(all); got != all {
		t.Errorf("the look-alikes together changed")
	}
}

func TestModes(t *testing.T) {
	s := "token ghp_" + fake(10, alnum62, 36)
	off, err := New(Off)
	if err != nil || off.Text(s) != s {
		t.Errorf("off: %v, %q", err, off.Text(s))
	}
	def, err := New("")
	if err != nil || def.Text(s) != "token [REDACTED:github-pat]" {
		t.Errorf("default: %v, %q", err, def.Text(s))
	}
	if _, err := New("some"); err == nil || err.Error() != `redact: unknown mode "some": one of known, off` {
		t.Errorf("unknown mode: %v", err)
	}
	var zero *Redactor
	if zero.Text(s) != s {
		t.Error("a nil Redactor changed text")
	}
}

// TestTextIsWhole: Text's end is the text's end: a token cut there is
// not a token (Part's open end is for cuts).
func TestTextIsWhole(t *testing.T) {
	r := known(t)
	for _, s := range []string{"head ghp_Zq3T9xLmV2bN", "see https://user:pa", "Authorization: Bearer abc"} {
		if got := r.Text(s); got != s {
			t.Errorf("Text(%q) = %q, want it unchanged", s, got)
		}
	}
}

// TestOpenEnd: at an open end, a secret that may run on is replaced from
// its start as soon as its keyword is whole; what is decided is left as
// Text leaves it.
func TestOpenEnd(t *testing.T) {
	r := known(t)
	for in, want := range map[string]string{
		"head ghp_A1b2":                            "head [REDACTED:github-pat]",
		"head ghp_":                                "head [REDACTED:github-pat]",
		"head AKIAIOSFODNN":                        "head [REDACTED:aws-access-token]",
		"slack xoxb-1234-abcdefgh":                 "slack [REDACTED:slack-token]",
		"see https://user:pa":                      "see https://user:[REDACTED:url-password]",
		"Authorization: Bearer abc":                "Authorization: Bearer [REDACTED:bearer-token]",
		"key: -----BEGIN RSA PRIV":                 "key: [REDACTED:private-key]",
		"-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE": "[REDACTED:private-key]",
		"aws_secret_access_key = wJalr":            "aws_secret_access_key = [REDACTED:aws-secret-access-key]",
		// Not a secret's start, or already decided:
		"head gh":                  "head gh",
		"head ghp_Zq3T9xLmV2 done": "head ghp_Zq3T9xLmV2 done",
		"see sk-learn-estimators.": "see sk-learn-estimators.",
		"xoxo-gossip-girl":         "xoxo-gossip-girl",
		"see https://example.com/": "see https://example.com/",
		"-----BEGIN CERTIFICATE-":  "-----BEGIN CERTIFICATE-",
		"a blob xAKIAIOSFODNN":     "a blob xAKIAIOSFODNN",
	} {
		if got := r.Part(in, 0); got != want {
			t.Errorf("Part(%q) = %q, want %q", in, got, want)
		}
	}
}

// corpus is the secrets and look-alikes as one output, lines and words
// run together as a command prints them.
func corpus() string {
	var b strings.Builder
	for i, s := range secrets {
		fmt.Fprintf(&b, "%s\n%s %s\t", lookAlikes[i%len(lookAlikes)], s.in, lookAlikes[(i+7)%len(lookAlikes)])
	}
	return b.String()
}

// spans are where Text finds the secrets of s: [start, end) each.
func spans(r *Redactor, s string) [][2]int {
	var out [][2]int
	for _, m := range choose(r.scan(s, false).found) {
		out = append(out, [2]int{m.start, m.end})
	}
	return out
}

// TestCutNeverShowsPart: wherever a cut falls in a secret, no part of it
// shows: not before the cut (an open end: a head, a read so far), once
// the keyword is whole, and not after it (a tail, given what came before
// it as Part's context).
func TestCutNeverShowsPart(t *testing.T) {
	r := known(t)
	for _, s := range secrets {
		for _, sp := range spans(r, s.in) {
			a, b := sp[0], sp[1]
			for c := a + 1; c < b; c++ {
				// The head is what came before the secret, then its placeholder.
				before := r.Part(s.in[:c], 0)
				loc := placeholderAtEnd.FindStringIndex(before)
				if c-a >= keywordAt(s.in[a:]) && (loc == nil || !strings.HasPrefix(s.in[:a], before[:loc[0]])) {
					t.Errorf("cut at %d of %q: the head %q shows part of %q", c, s.in, before, s.in[a:b])
				}
				if after := r.Part(s.in, c); !strings.HasPrefix(after, "[REDACTED:") {
					t.Errorf("cut at %d of %q: the tail %q does not start with the placeholder", c, s.in, after)
				}
			}
		}
	}
}

var placeholderAtEnd = regexp.MustCompile(`\[REDACTED:[a-z-]+\]$`)

// keywordAt is the length of the keyword s starts with, 1 for none (the
// secret of a rule that has its keyword before it).
func keywordAt(s string) int {
	for _, ru := range knownRules() {
		for _, kw := range ru.keywords {
			if strings.HasPrefix(s, kw) {
				return len(kw)
			}
		}
	}
	return 1
}

// TestStreamIsWhole: however a stream is split into pieces, what Stream
// shows of them is, put together, what Part makes of the whole (its end
// open).
func TestStreamIsWhole(t *testing.T) {
	r := known(t)
	whole := corpus() + "and ghp_Zq3T9xL"
	want := r.Part(whole, 0)
	rnd := rand.New(rand.NewPCG(7, 7))
	for round, most := range []int{1, 2, 5, 12, 30, 80, 200, 1000, 5000} {
		st := r.Stream()
		var got strings.Builder
		for rest := whole; rest != ""; {
			n := min(len(rest), 1+rnd.IntN(most))
			got.WriteString(st.Next(rest[:n], false))
			rest = rest[n:]
		}
		got.WriteString(st.Next("", true))
		if got.String() != want {
			t.Fatalf("round %d:\n got %q\nwant %q", round, got.String(), want)
		}
	}
}

// TestStreamHoldsBack: a piece is shown up to an undecided secret; the
// rest comes with the next piece, or at the end.
func TestStreamHoldsBack(t *testing.T) {
	r := known(t)
	st := r.Stream()
	tok := "ghp_" + fake(10, alnum62, 36)
	for _, step := range []struct {
		in   string
		end  bool
		want string
	}{
		{"token " + tok[:11], false, "token "},
		{tok[11:], false, ""}, // whole, but a letter may still follow
		{"\nsee sk-learn", false, "[REDACTED:github-pat]\nsee "},
		{"-estimators\nghp_", false, "sk-learn-estimators\n"},
		{"Zq3", true, "[REDACTED:github-pat]"}, // its end may be a cut too (head -c)
	} {
		if got := st.Next(step.in, step.end); got != step.want {
			t.Errorf("Next(%q, %v) = %q, want %q", step.in, step.end, got, step.want)
		}
	}
}

// TestStreamCut: after a loss, the next piece is redacted with the text
// before it as context, as if the stream were whole; what was held back
// goes with the loss.
func TestStreamCut(t *testing.T) {
	r := known(t)
	whole := corpus()
	for _, at := range []int{0, 1, 37, len(whole) / 3, len(whole) / 2, len(whole) - 5} {
		st := r.Stream()
		shown := st.Next(whole[:at/2], false)
		if want := r.Text(whole); !strings.HasPrefix(want, shown) {
			t.Fatalf("before the loss %q is not where the whole starts", shown)
		}
		st.Cut(whole[max(0, at-Window):at])
		got := st.Next(whole[at:], true)
		if want := r.Part(whole, at); got != want {
			t.Errorf("after a loss at %d:\n got %q\nwant %q", at, got, want)
		}
		for _, sp := range spans(r, whole) {
			if sp[0] < at && at < sp[1] && !strings.HasPrefix(got, "[REDACTED:") {
				t.Errorf("loss at %d inside a secret: %.40q", at, got)
			}
		}
	}
}

// TestRulesFitWindow: every rule decides within Window bytes, so Window
// bytes of context find every secret a cut splits.
func TestRulesFitWindow(t *testing.T) {
	for _, ru := range knownRules() {
		if ru.maxLen > Window {
			t.Errorf("%s: window %d > Window %d", ru.id, ru.maxLen, Window)
		}
	}
}

func TestPlaceholder(t *testing.T) {
	if got := Placeholder("jwt"); got != "[REDACTED:jwt]" {
		t.Errorf("Placeholder = %q", got)
	}
}

// tail64k is 64 KB of build output with one secret in the middle when
// secret is set.
func tail64k(secret bool) string {
	var b strings.Builder
	for i := 0; b.Len() < 64000; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "ok  \tgithub.com/example/pkg%d\t0.%03ds\n", i, i%1000)
		case 1:
			fmt.Fprintf(&b, "commit %x\n", sha1.Sum([]byte{byte(i), byte(i >> 8)}))
		case 2:
			fmt.Fprintf(&b, "  data: %s\n", base64.StdEncoding.EncodeToString([]byte(fake(uint64(i), alnum62, 36))))
		case 3:
			fmt.Fprintf(&b, "GET https://example.com/api/v1/items/%d 200 (%dms)\n", i, i%300)
		default:
			fmt.Fprintf(&b, "INFO request id=%s took %dms\n", fake(uint64(i), "0123456789abcdef", 32), i%300)
		}
		if secret && i == 400 {
			b.WriteString("export GITHUB_TOKEN=ghp_" + fake(10, alnum62, 36) + "\n")
		}
	}
	return b.String()[:64000]
}

// BenchmarkKnown64K: redacting a 64 KB tail (budget: 2 ms).
func BenchmarkKnown64K(b *testing.B) {
	r := known(b)
	for _, secret := range []bool{false, true} {
		s := tail64k(secret)
		b.Run(fmt.Sprintf("secret=%v", secret), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				_ = r.Text(s)
			}
		})
	}
}

// BenchmarkOpenEnd64K: a 64 KB head whose end is open (budget: as Text).
func BenchmarkOpenEnd64K(b *testing.B) {
	r := known(b)
	s := tail64k(true)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = r.Part(s, 0)
	}
}

// BenchmarkTailAfterContext64K: a 48 KB tail redacted with the 16 KB
// before it as context, as a truncated foreground stream is.
func BenchmarkTailAfterContext64K(b *testing.B) {
	r := known(b)
	s := tail64k(true)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		_ = r.Part(s, Window)
	}
}

// BenchmarkStream64K: 64 KB read as a stream in 4 KB pieces, each held
// back where a secret may start.
func BenchmarkStream64K(b *testing.B) {
	r := known(b)
	s := tail64k(true)
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		st := r.Stream()
		for i := 0; i < len(s); i += 4096 {
			_ = st.Next(s[i:min(len(s), i+4096)], false)
		}
		_ = st.Next("", true)
	}
}
