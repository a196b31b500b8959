package fingerprint

// The predicates below decide what a run of text is; scan.go finds the
// runs. They are hand-written byte scans rather than regular
// expressions: Sentry's patterns rely on look-arounds that Go's RE2
// rejects, and a chain of a dozen regexps run over every token of every
// event would cost more than the whole of the rest of the fingerprint.

// Placeholders written in place of a message's variable parts. They are
// spelt like Sentry's so that a reader who knows one knows the other, and
// they come through a second pass unchanged ('<' and '>' are separators,
// the words inside are plain words): that is what makes Message
// idempotent.
const (
	phEmail       = "<email>"
	phURL         = "<url>"
	phHost        = "<hostname>"
	phIP          = "<ip>"
	phUUID        = "<uuid>"
	phTraceparent = "<traceparent>"
	phHex         = "<hex>"
	phID          = "<id>"
	phDate        = "<date>"
	phTime        = "<time>"
	phDuration    = "<duration>"
	phFloat       = "<float>"
	phInt         = "<int>"
	phQuoted      = "<quoted_str>"
	phBool        = "<bool>"
	phBlob        = "<blob>"
	phHash        = "<hash>"
)

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isAlpha(c byte) bool { return isLower(c) || isUpper(c) }
func isAlnum(c byte) bool { return isDigit(c) || isAlpha(c) }
func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// shape is what one scan of a token learns about it, for the predicates
// that weigh it (hexRun, randomID, hashLike).
type shape struct {
	digits, letters, hexLetters int
	other                       int // bytes that are neither alnum nor '_' '-'
	allHex                      bool
}

func shapeOf(s string) shape {
	sh := shape{allHex: true}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			sh.digits++
		case isAlpha(c):
			sh.letters++
			if isHex(c) {
				sh.hexLetters++
			} else {
				sh.allHex = false
			}
		default:
			sh.allHex = false
			if c != '_' && c != '-' {
				sh.other++
			}
		}
	}
	return sh
}

// digitsAt returns the end of the run of decimal digits starting at i.
func digitsAt(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// fixedDigits reports whether s[i:i+n] is n decimal digits.
func fixedDigits(s string, i, n int) bool {
	if i+n > len(s) {
		return false
	}
	for k := i; k < i+n; k++ {
		if !isDigit(s[k]) {
			return false
		}
	}
	return true
}

// isUUID: 8-4-4-4-12 hex digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		switch i {
		case 8, 13, 18, 23:
			if s[i] != '-' {
				return false
			}
		default:
			if !isHex(s[i]) {
				return false
			}
		}
	}
	return true
}

// isTraceparent: W3C trace context, version-traceid-parentid-flags.
func isTraceparent(s string) bool {
	if len(s) != 55 || s[2] != '-' || s[35] != '-' || s[52] != '-' {
		return false
	}
	for i := 0; i < 55; i++ {
		if i != 2 && i != 35 && i != 52 && !isHex(s[i]) {
			return false
		}
	}
	return true
}

// isIPv6: hex groups of at most four digits separated by colons, either
// eight of them or fewer with one "::", optionally ending in a dotted
// IPv4. A digit is required so that "a::b" in prose is left alone; a
// time (12:34:56) has no "::" and too few groups.
func isIPv6(s string) bool {
	if len(s) < 3 || len(s) > 45 {
		return false
	}
	groups, digits, double := 0, 0, false
	i := 0
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		double, i = true, 2
	} else if s[0] == ':' {
		return false
	}
	for i < len(s) {
		j := i
		for j < len(s) && isHex(s[j]) {
			if isDigit(s[j]) {
				digits++
			}
			j++
		}
		if j < len(s) && s[j] == '.' {
			// trailing dotted quad counts as two groups
			if ipv4At(s[i:], 0) != len(s)-i {
				return false
			}
			groups += 2
			digits++
			break
		}
		if j == i || j-i > 4 {
			return false
		}
		groups++
		i = j
		if i == len(s) {
			break
		}
		if s[i] != ':' {
			return false
		}
		i++
		if i < len(s) && s[i] == ':' {
			if double {
				return false
			}
			double = true
			i++
		} else if i == len(s) {
			return false
		}
	}
	if digits == 0 {
		return false
	}
	if double {
		return groups <= 7
	}
	return groups == 8
}

// isDomain: dot-separated labels of letters, digits and inner hyphens,
// at least two, the last alphabetic; with knownTLD, the last must also be
// a top-level domain seen in real hostnames, because a dotted identifier
// (user.name, os.path, index.js) has the same shape as a hostname.
func isDomain(s string, knownTLD bool) bool {
	labels, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			c := s[i]
			if !isAlnum(c) && c != '-' {
				return false
			}
			continue
		}
		if i == start || s[start] == '-' || s[i-1] == '-' {
			return false
		}
		labels++
		if i == len(s) {
			tld := s[start:]
			if len(tld) < 2 {
				return false
			}
			for k := 0; k < len(tld); k++ {
				if !isAlpha(tld[k]) {
					return false
				}
			}
			if knownTLD && !topLevel(tld) {
				return false
			}
		}
		start = i + 1
	}
	return labels >= 2
}

// topLevel lists the top-level domains a hostname in an error message
// ends in: the generic ones, a few country codes, and the private ones of
// cloud networks. A longer list would catch more hostnames and more
// dotted code identifiers with them.
func topLevel(tld string) bool {
	var b [12]byte
	if len(tld) > len(b) {
		return false
	}
	for i := 0; i < len(tld); i++ {
		c := tld[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b[:len(tld)]) {
	case "com", "net", "org", "io", "dev", "app", "cloud", "site", "ai", "co",
		"me", "us", "uk", "de", "fr", "eu", "nl", "ca", "au", "jp", "in", "info",
		"biz", "xyz", "tech", "sh", "so", "gg", "internal", "local", "lan",
		"intra", "corp", "localdomain", "test", "example", "invalid":
		return true
	}
	return false
}

// hexRun: a hex identifier of 8 to 128 digits (SHA-1, MD5, request ids,
// Mongo ids), or a 7-digit abbreviated git SHA. Both need a digit, so
// that an English word spelt in a-f ("defaced") is left alone, and a
// letter, so that a plain number stays an <int>; the git SHA's 7 digits
// are the commonest abbreviation.
func hexRun(s string, sh shape) bool {
	if !sh.allHex || sh.digits == 0 || sh.hexLetters == 0 {
		return false
	}
	return len(s) >= 7 && len(s) <= 128
}

// randomID: a token that looks generated rather than written: Convex
// document ids (32 characters of base32), Stripe ids (cus_NffrFeUfNV2Hib),
// nanoids, base64url tokens. Written identifiers mix letters and digits
// too (Float64Array, utf8mb4, ERR_HTTP2_STREAM_ERROR, sha256), but
// rarely: one run of digits, few changes between lower case, upper case
// and digits. So a long token needs several such changes and a shorter
// one two separate runs of digits; and some '-' or '_' separated segment
// must mix letters and digits, so that pool-3-thread-17, whose numbers
// stand alone, is read as words and numbers. The few written names that
// pass (x86_64-linux) are constant, so replacing them merges nothing.
//
// Every count only grows as the token grows, so a prefix of a token that
// is not random is not random either; Message's idempotence relies on it.
func randomID(s string, sh shape) bool {
	if sh.other > 0 || sh.digits == 0 || sh.letters == 0 {
		return false
	}
	n := sh.digits + sh.letters
	if n < 8 {
		return false
	}
	changes, digitRuns := 0, 0
	mixed := false
	segLetter, segDigit := false, false
	prev := byte(0) // 'l', 'u', 'd'
	for i := 0; i < len(s); i++ {
		c := s[i]
		var k byte
		switch {
		case isDigit(c):
			k, segDigit = 'd', true
		case isLower(c):
			k, segLetter = 'l', true
		case isUpper(c):
			k, segLetter = 'u', true
		default:
			segLetter, segDigit = false, false
			continue
		}
		mixed = mixed || (segLetter && segDigit)
		if k != prev {
			if prev != 0 {
				changes++
			}
			if k == 'd' {
				digitRuns++
			}
			prev = k
		}
	}
	if !mixed {
		return false
	}
	if n >= 16 && changes >= 4 {
		return true
	}
	return sh.digits >= 2 && sh.letters >= 2 && digitRuns >= 2
}

// dateWord: English month and weekday names as dates print them. They
// vary with the timestamp they belong to, so next to a number they are
// part of it.
func dateWord(s string) bool {
	switch s {
	case "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Sept", "Oct", "Nov", "Dec",
		"January", "February", "March", "April", "June", "July", "August", "September",
		"October", "November", "December",
		"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun",
		"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday":
		return true
	}
	return false
}
