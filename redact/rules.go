package redact

import (
	"encoding/base64"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"unicode/utf8"
)

// rule finds one kind of secret. Its expression is matched at each
// occurrence of a keyword (from start(s, p) for the occurrence at p), in a
// window of at most maxLen bytes.
type rule struct {
	id       string
	keywords []string
	// fold: the keywords are lower case and found in the text with its
	// ASCII letters lowered.
	fold bool
	// re is anchored (^) and matched from the rule's start; prog is re
	// compiled for an open end (open.go), set by knownRules.
	re   *regexp.Regexp
	prog *syntax.Prog
	// group is the submatch that is the secret; 0 the whole match.
	group int
	// word: the match neither follows nor is followed by a letter or a
	// digit (a token inside a longer word is something else).
	word   bool
	maxLen int
	// start, when set, is where the match starts for a keyword at p.
	start func(s string, p int) int
	// valid, when set, must accept the secret.
	valid func(secret string) bool
}

// token is a rule for a token with a fixed prefix: the keywords are its
// prefixes, and it counts only as a whole word.
func token(id, re string, prefixes ...string) *rule {
	return &rule{id: id, keywords: prefixes, re: regexp.MustCompile(`^(?:` + re + `)`), word: true, maxLen: 1024}
}

// knownRules are the rules of Known (docs/spec.md §14). Their ids follow
// gitleaks' where it has the same rule. Compiled on first use, not at
// start: they are most of dsh's package initialisation, and a cold
// `dsh mcp` answers initialize before any output needs them.
var knownRules = sync.OnceValue(func() []*rule {
	rules := []*rule{
		{
			id: "private-key", keywords: []string{"-----BEGIN "}, maxLen: 16 << 10,
			// The whole block; without its END (cut off), the base64 lines of
			// 16 characters or more that follow the BEGIN line.
			re: regexp.MustCompile(`^-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:(?:\r?\n|\\n)[A-Za-z0-9+/=]{16,})*)`),
		},
		token("github-pat", `ghp_[0-9A-Za-z]{36}`, "ghp_"),
		token("github-oauth", `gho_[0-9A-Za-z]{36}`, "gho_"),
		token("github-app-token", `gh[us]_[0-9A-Za-z]{36}`, "ghu_", "ghs_"),
		token("github-refresh-token", `ghr_[0-9A-Za-z]{36}`, "ghr_"),
		token("github-fine-grained-pat", `github_pat_[0-9A-Za-z_]{82}`, "github_pat_"),
		token("gitlab-pat", `glpat-[0-9A-Za-z_.-]{20,}`, "glpat-"),
		token("slack-token", `xox(?:[a-z]|e\.xox[a-z])-\d+-[0-9A-Za-z-]{8,}`, "xox"),
		token("slack-app-token", `(?i)xapp-\d-[A-Z0-9]+-\d+-[A-Z0-9]+`, "xapp-"),
		{
			id: "slack-webhook-url", keywords: []string{"hooks.slack.com/"}, maxLen: 512, group: 1,
			re: regexp.MustCompile(`^hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+-]{20,})`),
		},
		token("stripe-access-token", `[sr]k_(?:test|live|prod)_[0-9A-Za-z]{10,99}`, "sk_", "rk_"),
		token("npm-access-token", `npm_[A-Za-z0-9]{36}`, "npm_"),
		token("huggingface-access-token", `hf_[A-Za-z0-9]{34}`, "hf_"),
		token("pypi-upload-token", `pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`, "pypi-"),
		token("gcp-api-key", `AIza[0-9A-Za-z_-]{35}`, "AIza"),
		token("openai-api-key", `sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}|[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,})`, "sk-"),
		token("anthropic-api-key", `sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{80,}`, "sk-ant-"),
		token("aws-access-token", `(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}`, "A3T", "AKIA", "ASIA", "ABIA", "ACCA"),
		{
			// A secret access key on a line that names it: ~/.aws/credentials,
			// `aws configure export-credentials`, STS's JSON.
			id: "aws-secret-access-key", keywords: []string{"secret_access_key", "secretaccesskey"}, fold: true, maxLen: 256, group: 1,
			re: regexp.MustCompile(`(?i)^secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+]|$)`),
		},
		token("jwt", `eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`, "eyJ"),
		{
			id: "url-password", keywords: []string{"://"}, maxLen: 2048, group: 1, start: schemeStart,
			re: regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://[^/?#@\s:]*:([^/?#@\s]+)@`),
		},
		{
			id: "bearer-token", keywords: []string{"bearer"}, fold: true, word: true, maxLen: 8 << 10, group: 1,
			re:    regexp.MustCompile(`(?i)^bearer[ \t]+([A-Za-z0-9._~+/-]+=*)`),
			valid: opaqueToken,
		},
		{
			id: "basic-auth", keywords: []string{"basic"}, fold: true, word: true, maxLen: 4 << 10, group: 1,
			re:    regexp.MustCompile(`(?i)^basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})`),
			valid: userPassword,
		},
	}
	for _, ru := range rules {
		ru.prog = program(ru.re.String())
	}
	return rules
})

// find adds the matches of ru in s to sc; hay is s or its lowered form,
// where the keywords are looked for. With open, the end of s is open: a
// match that more text could still make or change is undecided.
func (ru *rule) find(s, hay string, open bool, sc *scan) {
	for _, kw := range ru.keywords {
		if open && ru.group == 0 {
			ru.keywordCut(s, hay, kw, sc)
		}
		for from := 0; ; {
			i := strings.Index(hay[from:], kw)
			if i < 0 {
				break
			}
			p := from + i
			from = p + len(kw)
			start := p
			if ru.start != nil {
				start = ru.start(s, p)
			}
			if ru.word && start > 0 && alnum(s[start-1]) {
				continue
			}
			if open && len(s)-start < ru.maxLen {
				if c, ok := ru.undecided(s, start); ok {
					sc.open = append(sc.open, c)
					if c.secret >= 0 {
						break // it runs to the end: what follows is in it
					}
					continue
				}
			}
			if m, ok := ru.matchAt(s, start); ok {
				sc.found = append(sc.found, m)
				from = max(from, m.end)
			}
		}
	}
}

// keywordCut records in sc a start of keyword kw that the end of s cuts
// ("gh" of "ghp_"): the match there is undecided, with no secret yet. It
// is called for the rules whose secret starts with the keyword, so that
// none of it is shown before the placeholder; a word rule's keyword
// counts only at the start of a word.
func (ru *rule) keywordCut(s, hay, kw string, sc *scan) {
	for k := min(len(kw)-1, len(hay)); k > 0; k-- {
		if !strings.HasSuffix(hay, kw[:k]) {
			continue
		}
		if start := len(s) - k; !ru.word || start == 0 || !alnum(s[start-1]) {
			sc.open = append(sc.open, cut{at: start, secret: -1, id: ru.id})
		}
		return
	}
}

// undecided returns the match of ru from start when text after s may
// still change it: when its expression is still going at the end, or when
// it ends there and must be a whole word (the next character decides).
func (ru *rule) undecided(s string, start int) (cut, bool) {
	alive, secret, end := undecided(ru.prog, ru.group, s[start:])
	switch {
	case alive:
		if secret >= 0 {
			secret += start
		}
	case ru.word && end == len(s)-start:
		m, ok := ru.matchAt(s, start)
		if !ok {
			return cut{}, false
		}
		secret = m.start
	default:
		return cut{}, false
	}
	return cut{at: start, secret: secret, id: ru.id}, true
}

// matchAt matches ru from start.
func (ru *rule) matchAt(s string, start int) (match, bool) {
	window := s[start:min(len(s), start+ru.maxLen)]
	loc := ru.re.FindStringSubmatchIndex(window)
	if loc == nil {
		return match{}, false
	}
	end := start + loc[1]
	if ru.word && end < len(s) && alnum(s[end]) {
		return match{}, false
	}
	gs, ge := loc[2*ru.group], loc[2*ru.group+1]
	if gs < 0 || ru.valid != nil && !ru.valid(window[gs:ge]) {
		return match{}, false
	}
	return match{at: start, start: start + gs, end: start + ge, id: ru.id}, true
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// schemeStart is where the URL scheme before "://" at p starts (at most
// 32 characters back).
func schemeStart(s string, p int) int {
	i := p
	for i > 0 && p-i < 32 {
		c := s[i-1]
		if !alnum(c) && c != '+' && c != '.' && c != '-' {
			break
		}
		i--
	}
	return i
}

// opaqueToken accepts a Bearer credential that looks like one: a digit or
// a symbol in it, or 24 characters or more ("Bearer authentication" in
// prose has neither).
func opaqueToken(s string) bool {
	if len(s) < 8 {
		return false
	}
	return len(s) >= 24 || strings.ContainsAny(s, "0123456789._~+/-=")
}

// userPassword accepts a Basic credential that is what one is: base64 of
// "user:password" in printable text.
func userPassword(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	if err != nil || !utf8.Valid(b) || !strings.Contains(string(b), ":") {
		return false
	}
	for _, r := range string(b) {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
